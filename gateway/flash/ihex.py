"""Intel HEX, the file avrdude's ``-U flash:w:FILE:i`` reads.

Each line is ``:`` and the hex digits of one record: byte count, 16-bit big-endian
address, type, data, and a checksum that makes the record's bytes sum to 0 mod 256.
Addresses past 64 KiB (the ATmega128 has 128 KiB of flash) need a base from an
extended-segment (type 02, base = value * 16, what avr-objcopy writes) or an
extended-linear (type 04, base = value << 16, what this writer emits) record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import construct as cs

from motebase.gateway.flash.errors import FlashError
from motebase.gateway.flash.image import FlashImage

DATA, EOF, EXT_SEGMENT, START_SEGMENT, EXT_LINEAR, START_LINEAR = range(6)
#: Data bytes per record, as avr-objcopy writes them.
RECORD_DATA = 16


def _checksum(body: bytes) -> int:
    return -sum(body) & 0xFF


RecordBody = cs.Struct(
    "length" / cs.Int8ub,
    "address" / cs.Int16ub,
    "type" / cs.Int8ub,
    "data" / cs.Bytes(cs.this.length),
)

Record = cs.Struct(
    "body" / cs.RawCopy(RecordBody),
    "checksum" / cs.Checksum(cs.Int8ub, _checksum, cs.this.body.data),
    cs.Terminated,
)


def parse_record(line: str, where: str = "") -> Any:
    """One record's fields from its text line (without the line ending)."""
    text = line.strip()
    if not text.startswith(":"):
        raise FlashError(f"{where}not an Intel HEX record (no leading ':')")
    try:
        raw = bytes.fromhex(text[1:])
    except ValueError:
        raise FlashError(f"{where}not hex digits after ':'") from None
    try:
        return Record.parse(raw).body.value
    except cs.ChecksumError:
        raise FlashError(f"{where}checksum mismatch") from None
    except cs.ConstructError:
        raise FlashError(f"{where}record length does not match its byte count") from None


def build_record(rtype: int, address: int, data: bytes = b"") -> str:
    raw = Record.build(
        {"body": {"value": {"length": len(data), "address": address, "type": rtype, "data": data}}}
    )
    return ":" + raw.hex().upper()


def parse_ihex(text: str, name: str = "<hex>") -> FlashImage:
    base = 0
    chunks: list[tuple[int, bytes]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record = parse_record(line, f"{name} line {number}: ")
        if record.type == DATA:
            chunks.append((base + record.address, record.data))
        elif record.type == EOF:
            return FlashImage.from_chunks(chunks)
        elif record.type in (EXT_SEGMENT, EXT_LINEAR):
            if record.length != 2:
                raise FlashError(f"{name} line {number}: address record with {record.length} bytes")
            value = int.from_bytes(record.data, "big")
            base = value << 4 if record.type == EXT_SEGMENT else value << 16
        elif record.type not in (START_SEGMENT, START_LINEAR):
            raise FlashError(f"{name} line {number}: unknown record type {record.type}")
    raise FlashError(f"{name}: no end-of-file record (truncated file?)")


def read_ihex(path: Path) -> FlashImage:
    try:
        text = path.read_text(encoding="ascii")
    except UnicodeDecodeError:
        raise FlashError(f"{path}: not an Intel HEX file (non-ASCII bytes)") from None
    return parse_ihex(text, str(path))


def format_ihex(image: FlashImage) -> str:
    """The image as Intel HEX: records of at most 16 bytes that never cross a 64 KiB
    boundary, an extended-linear record before each 64 KiB page used, then end-of-file."""
    lines: list[str] = []
    page = 0
    for start, data in image.chunks:
        offset = 0
        while offset < len(data):
            address = start + offset
            if address >> 16 != page:
                page = address >> 16
                lines.append(build_record(EXT_LINEAR, 0, page.to_bytes(2, "big")))
            room = min(RECORD_DATA, 0x10000 - (address & 0xFFFF), len(data) - offset)
            lines.append(build_record(DATA, address & 0xFFFF, data[offset : offset + room]))
            offset += room
    lines.append(build_record(EOF, 0))
    return "\n".join(lines) + "\n"


def write_ihex(image: FlashImage, path: Path) -> None:
    path.write_text(format_ihex(image), encoding="ascii")
