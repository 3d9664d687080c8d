"""Just enough ELF32 to find what an AVR image puts into flash and where its symbols live.

avr-gcc links the ATmega128's three address spaces into one ELF address space: flash at
0, RAM at 0x800000 (so .data's VMA is 0x800100..), EEPROM at 0x810000. A section's LMA,
where its bytes are loaded from, is not in its section header: it is its PT_LOAD
segment's physical address plus the section's offset into that segment, which is how
binutils (and so avr-objcopy) computes it. .data therefore has a RAM VMA and a flash LMA:
its initial values sit in flash after .text and the C runtime copies them to RAM at reset.

The header layouts below are the ELF specification's Elf32_Ehdr, Elf32_Shdr, Elf32_Phdr
and Elf32_Sym, little-endian (the only byte order avr-gcc emits).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import construct as cs

from motebase.gateway.flash.errors import FlashError

#: e_machine of Atmel AVR 8-bit images.
EM_AVR = 83
SHT_PROGBITS = 1
SHT_SYMTAB = 2
SHT_NOBITS = 8
SHF_ALLOC = 0x2
PT_LOAD = 1
SHN_UNDEF = 0
#: avr-gcc's data-space offset: anything linked at or above it is RAM or EEPROM, not flash.
AVR_DATA_OFFSET = 0x800000

ElfIdent = cs.Struct(
    "magic" / cs.Const(b"\x7fELF"),
    "elf_class" / cs.Int8ul,  # 1: 32-bit
    "data" / cs.Int8ul,  # 1: little-endian
    "version" / cs.Int8ul,
    cs.Padding(9),
)

ElfHeader = cs.Struct(
    "ident" / ElfIdent,
    "type" / cs.Int16ul,
    "machine" / cs.Int16ul,
    "version" / cs.Int32ul,
    "entry" / cs.Int32ul,
    "phoff" / cs.Int32ul,
    "shoff" / cs.Int32ul,
    "flags" / cs.Int32ul,
    "ehsize" / cs.Int16ul,
    "phentsize" / cs.Int16ul,
    "phnum" / cs.Int16ul,
    "shentsize" / cs.Int16ul,
    "shnum" / cs.Int16ul,
    "shstrndx" / cs.Int16ul,
)

SectionHeader = cs.Struct(
    "name" / cs.Int32ul,  # offset into the section-name string table
    "type" / cs.Int32ul,
    "flags" / cs.Int32ul,
    "addr" / cs.Int32ul,
    "offset" / cs.Int32ul,
    "size" / cs.Int32ul,
    "link" / cs.Int32ul,
    "info" / cs.Int32ul,
    "addralign" / cs.Int32ul,
    "entsize" / cs.Int32ul,
)

ProgramHeader = cs.Struct(
    "type" / cs.Int32ul,
    "offset" / cs.Int32ul,
    "vaddr" / cs.Int32ul,
    "paddr" / cs.Int32ul,
    "filesz" / cs.Int32ul,
    "memsz" / cs.Int32ul,
    "flags" / cs.Int32ul,
    "align" / cs.Int32ul,
)

Symbol = cs.Struct(
    "name" / cs.Int32ul,  # offset into the section's linked string table
    "value" / cs.Int32ul,
    "size" / cs.Int32ul,
    "info" / cs.Int8ul,
    "other" / cs.Int8ul,
    "shndx" / cs.Int16ul,
)


@dataclass(frozen=True)
class Section:
    name: str
    type: int
    flags: int
    addr: int  # VMA
    lma: int
    offset: int
    size: int

    @property
    def loads_into_flash(self) -> bool:
        """Bytes avr-objcopy puts in a flash hex: allocated, with contents, linked below
        the data-space offset (.text, and .data's initial values at their LMA)."""
        return (
            self.flags & SHF_ALLOC != 0
            and self.type != SHT_NOBITS
            and self.size > 0
            and self.lma < AVR_DATA_OFFSET
        )


@dataclass(frozen=True)
class ElfSymbol:
    name: str
    value: int  # VMA
    size: int
    section: Section | None


@dataclass(frozen=True)
class ElfImage:
    """An AVR ELF's sections (with their LMAs), segments and symbols, and its raw bytes."""

    path: Path
    data: bytes
    sections: tuple[Section, ...]
    segments: tuple[dict[str, Any], ...]
    symbols: dict[str, ElfSymbol]

    def section_bytes(self, section: Section) -> bytes:
        return self.data[section.offset : section.offset + section.size]

    def flash_sections(self) -> list[Section]:
        return [s for s in self.sections if s.loads_into_flash]


class ElfFormatError(FlashError):
    """Bytes that are not an AVR ELF32 image this reader understands."""


def read_elf(path: Path) -> ElfImage:
    return parse_elf(path.read_bytes(), path)


def parse_elf(data: bytes, path: Path = Path("<bytes>")) -> ElfImage:
    header = _parse(ElfHeader, data, 0, "ELF header")
    ident = header.ident
    if (ident.elf_class, ident.data) != (1, 1):
        raise ElfFormatError("not a 32-bit little-endian ELF")
    if header.machine != EM_AVR:
        raise ElfFormatError(f"built for e_machine {header.machine}, not AVR ({EM_AVR})")
    segments = tuple(
        dict(_parse(ProgramHeader, data, header.phoff + i * header.phentsize, "program header"))
        for i in range(header.phnum)
    )
    raw = [
        _parse(SectionHeader, data, header.shoff + i * header.shentsize, "section header")
        for i in range(header.shnum)
    ]
    if header.shstrndx >= len(raw):
        raise ElfFormatError(f"section-name table index {header.shstrndx} out of range")
    names = _blob(data, raw[header.shstrndx])
    sections = tuple(
        Section(
            name=_string(names, sh.name),
            type=sh.type,
            flags=sh.flags,
            addr=sh.addr,
            lma=_lma(sh, segments),
            offset=sh.offset,
            size=sh.size,
        )
        for sh in raw
    )
    return ElfImage(path, data, sections, segments, _symbols(data, raw, sections))


def _lma(sh: Any, segments: tuple[dict[str, Any], ...]) -> int:
    """The load address binutils gives a section: that of the PT_LOAD segment whose file
    image holds it, shifted by the section's offset in it; the VMA when none does."""
    if sh.flags & SHF_ALLOC and sh.type != SHT_NOBITS:
        for seg in segments:
            inside = seg["offset"] <= sh.offset and sh.offset + sh.size <= (
                seg["offset"] + seg["filesz"]
            )
            if seg["type"] == PT_LOAD and inside and seg["filesz"] > 0:
                return int(seg["paddr"] + (sh.offset - seg["offset"]))
    return int(sh.addr)


def _symbols(data: bytes, raw: list[Any], sections: tuple[Section, ...]) -> dict[str, ElfSymbol]:
    symbols: dict[str, ElfSymbol] = {}
    for sh in raw:
        if sh.type != SHT_SYMTAB:
            continue
        if sh.link >= len(raw):
            raise ElfFormatError(f"symbol table links string table {sh.link}, out of range")
        strings = _blob(data, raw[sh.link])
        entsize = sh.entsize or Symbol.sizeof()
        for i in range(sh.size // entsize):
            sym = _parse(Symbol, data, sh.offset + i * entsize, "symbol")
            name = _string(strings, sym.name)
            if not name or sym.shndx == SHN_UNDEF:
                continue
            section = sections[sym.shndx] if sym.shndx < len(sections) else None
            symbols.setdefault(name, ElfSymbol(name, sym.value, sym.size, section))
    return symbols


def _parse(struct: cs.Construct, data: bytes, offset: int, what: str) -> Any:
    end = offset + struct.sizeof()
    if offset < 0 or end > len(data):
        raise ElfFormatError(f"{what} at byte {offset} runs past the end of the file")
    try:
        return struct.parse(data[offset:end])
    except cs.ConstructError as exc:
        raise ElfFormatError(f"{what} at byte {offset}: not an ELF file ({exc})") from None


def _blob(data: bytes, sh: Any) -> bytes:
    if sh.offset + sh.size > len(data):
        raise ElfFormatError(f"section at byte {sh.offset} runs past the end of the file")
    return data[sh.offset : sh.offset + sh.size]


def _string(table: bytes, offset: int) -> str:
    if offset >= len(table) and offset != 0:
        raise ElfFormatError(f"string offset {offset} outside its table")
    return table[offset:].split(b"\0", 1)[0].decode("latin-1")
