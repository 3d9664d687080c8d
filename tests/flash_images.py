"""Mote images for the `mote flash` tests: one laid out by hand (no toolchain needed) and
one compiled by avr-gcc.

The handmade image is what avr-gcc links, reduced to the parts `mote flash` reads: .text
at 0 holding code and MOTE_PLATFORM_NAME, .data linked in RAM at 0x800100 and loaded
from flash right after .text (its own PT_LOAD segment says so), a .bss in RAM, and a
symbol table.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from motebase.gateway.flash.elf import (
    EM_AVR,
    PT_LOAD,
    SHF_ALLOC,
    SHT_NOBITS,
    SHT_PROGBITS,
    SHT_SYMTAB,
    ElfHeader,
    ProgramHeader,
    SectionHeader,
    Symbol,
)

SHT_STRTAB = 3
DATA_VMA = 0x800100
#: Code bytes before MOTE_PLATFORM_NAME in the handmade .text (a vector table stand-in).
CODE = bytes(range(0x40, 0x40 + 46))


@dataclass(frozen=True)
class HandmadeImage:
    elf: bytes
    flash: bytes  # what avr-objcopy would put in the hex: .text then .data's LMA copy
    data_lma: int


def handmade_elf(
    *,
    platform: str = "mica2",
    node_id: int = 1,
    group: int = 0x7D,
    node_id_in_bss: bool = False,
    symbols: tuple[str, ...] = ("TOS_LOCAL_ADDRESS", "TOS_AM_GROUP", "MOTE_PLATFORM_NAME"),
) -> HandmadeImage:
    name = platform.encode() + b"\0"
    text = CODE + name + (b"\0" if len(name) % 2 else b"")  # .text stays word-aligned
    data = node_id.to_bytes(2, "little") + bytes([group]) + b"\x11\x22\x33"
    data_lma = len(text)

    shstrtab, shname = _strtab([".text", ".data", ".bss", ".symtab", ".strtab", ".shstrtab"])
    strtab, symname = _strtab(list(symbols))
    # (name, value, size, section index): 1 .text, 2 .data, 3 .bss
    where = {
        "MOTE_PLATFORM_NAME": (len(CODE), len(name), 1),
        "TOS_LOCAL_ADDRESS": (DATA_VMA + len(data), 2, 3) if node_id_in_bss else (DATA_VMA, 2, 2),
        "TOS_AM_GROUP": (DATA_VMA + 2, 1, 2),
    }
    symtab = Symbol.build(dict(name=0, value=0, size=0, info=0, other=0, shndx=0)) + b"".join(
        Symbol.build(
            dict(
                name=symname[s],
                value=where[s][0],
                size=where[s][1],
                info=0x11,
                other=0,
                shndx=where[s][2],
            )
        )
        for s in symbols
    )

    phoff = ElfHeader.sizeof()
    text_off = phoff + 3 * ProgramHeader.sizeof()
    data_off = text_off + len(text)
    symtab_off = data_off + len(data)
    strtab_off = symtab_off + len(symtab)
    shstrtab_off = strtab_off + len(strtab)
    shoff = shstrtab_off + len(shstrtab)
    bss_vma = DATA_VMA + len(data)

    segments = [
        _segment(text_off, 0, 0, len(text)),
        _segment(data_off, DATA_VMA, data_lma, len(data)),
        _segment(symtab_off, bss_vma, bss_vma, 0, memsz=4),
    ]
    sections = [
        _section(0, 0, 0, 0, 0, 0),
        _section(shname[".text"], SHT_PROGBITS, SHF_ALLOC | 0x4, 0, text_off, len(text)),
        _section(shname[".data"], SHT_PROGBITS, SHF_ALLOC | 0x1, DATA_VMA, data_off, len(data)),
        _section(shname[".bss"], SHT_NOBITS, SHF_ALLOC | 0x1, bss_vma, symtab_off, 4),
        _section(
            shname[".symtab"],
            SHT_SYMTAB,
            0,
            0,
            symtab_off,
            len(symtab),
            link=5,
            entsize=Symbol.sizeof(),
        ),
        _section(shname[".strtab"], SHT_STRTAB, 0, 0, strtab_off, len(strtab)),
        _section(shname[".shstrtab"], SHT_STRTAB, 0, 0, shstrtab_off, len(shstrtab)),
    ]
    header = ElfHeader.build(
        dict(
            ident=dict(elf_class=1, data=1, version=1),
            type=2, machine=EM_AVR, version=1, entry=0, phoff=phoff, shoff=shoff, flags=5,
            ehsize=ElfHeader.sizeof(), phentsize=ProgramHeader.sizeof(), phnum=len(segments),
            shentsize=SectionHeader.sizeof(), shnum=len(sections), shstrndx=6,
        )
    )  # fmt: skip
    elf = b"".join([header, *segments, text, data, symtab, strtab, shstrtab, *sections])
    return HandmadeImage(elf, text + data, data_lma)


def _strtab(names: list[str]) -> tuple[bytes, dict[str, int]]:
    table, offsets = b"\0", {}
    for name in names:
        offsets[name] = len(table)
        table += name.encode() + b"\0"
    return table, offsets


def _segment(offset: int, vaddr: int, paddr: int, filesz: int, memsz: int | None = None) -> bytes:
    return ProgramHeader.build(
        dict(type=PT_LOAD, offset=offset, vaddr=vaddr, paddr=paddr, filesz=filesz,
             memsz=filesz if memsz is None else memsz, flags=5, align=1)
    )  # fmt: skip


def _section(
    name: int, stype: int, flags: int, addr: int, offset: int, size: int, link: int = 0,
    entsize: int = 0,
) -> bytes:  # fmt: skip
    return SectionHeader.build(
        dict(name=name, type=stype, flags=flags, addr=addr, offset=offset, size=size, link=link,
             info=0, addralign=1, entsize=entsize)
    )  # fmt: skip


# --- avr-gcc ------------------------------------------------------------------------------

MOTE_C = r"""
#include <stdint.h>
#include <avr/pgmspace.h>
uint16_t TOS_LOCAL_ADDRESS = NODE_ID;
uint8_t TOS_AM_GROUP = AM_GROUP;
const char MOTE_PLATFORM_NAME[] PROGMEM = PLATFORM;
uint8_t neighbours[3] = {7, 8, 9};  /* more .data around the patched bytes */
uint16_t counter;                    /* and a .bss */
volatile uint8_t sink;
int main(void) {
    sink = pgm_read_byte(&MOTE_PLATFORM_NAME[1]) + (uint8_t)TOS_LOCAL_ADDRESS + TOS_AM_GROUP
        + neighbours[counter];
    for (;;) {}
}
"""


def avr_tool(name: str) -> str:
    """The tool's path; the `avr` env has the toolchain, so a missing one fails the test."""
    path = shutil.which(name)
    assert path is not None, f"{name} not on PATH: tests/avr/ensure_avr.sh installs the toolchain"
    return path


def compile_mote(
    tmp: Path, stem: str, *, node_id: int, group: int, platform: str, filler: int = 0
) -> Path:
    """The C file built with those initialisers; ``filler`` bytes of PROGMEM tables (in
    arrays of at most 30,000: avr-gcc's size_t is 16 bits) push .data's flash copy up,
    past 64 KiB for ``filler`` > 65,536."""
    source = tmp / "mote.c"
    source.write_text(MOTE_C + _filler_tables(filler))
    elf = tmp / f"{stem}.elf"
    subprocess.run(
        [avr_tool("avr-gcc"), "-mmcu=atmega128", "-Os", "-std=c99", "-Wall", "-Werror",
         f"-DNODE_ID={node_id}", f"-DAM_GROUP={group:#x}", f'-DPLATFORM="{platform}"',
         "-o", str(elf), str(source)],
        check=True,
    )  # fmt: skip
    return elf


def _filler_tables(size: int) -> str:
    tables = []
    for index, start in enumerate(range(0, size, 30000)):
        values = ",".join(str((start + i) * 7 % 251) for i in range(min(30000, size - start)))
        tables.append(f"const uint8_t filler{index}[] PROGMEM = {{{values}}};\n")
    return "".join(tables)


def objcopy_hex(elf: Path) -> Path:
    """The flash hex of the image as the build makes it."""
    out = elf.with_suffix(".hex")
    subprocess.run(
        [avr_tool("avr-objcopy"), "-O", "ihex", "-R", ".eeprom", str(elf), str(out)], check=True
    )
    return out
