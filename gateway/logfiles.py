"""The result log's files: how a record is framed, how segments are named, the commit marker.

Everything that knows a byte of the on-disk layout lives here; :mod:`gateway.resultlog`
reads and writes the log through it. The layout itself is described there.
"""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SEGMENT_SUFFIX = ".seg"
LOCK_NAME = "writer.lock"
COMMITTED_NAME = "committed"
_OFFSET_DIGITS = 20


def segment_name(first_offset: int) -> str:
    return f"{first_offset:0{_OFFSET_DIGITS}d}{SEGMENT_SUFFIX}"


def encode_record(offset: int, record: dict[str, Any]) -> bytes:
    """One framed line for ``record`` at ``offset``."""
    payload = json.dumps(record, separators=(",", ":"), allow_nan=False).encode("ascii")
    head = f"{offset} {len(payload)} ".encode("ascii")
    crc = zlib.crc32(payload, zlib.crc32(head))
    return head + f"{crc:08x} ".encode("ascii") + payload + b"\n"


def check_line(line: bytes) -> tuple[int, bytes] | None:
    """``(offset, JSON payload)`` of one line including its newline if its length and
    checksum guards hold, else None. Cheap: the payload is not parsed."""
    if not line.endswith(b"\n"):
        return None
    parts = line[:-1].split(b" ", 3)
    if len(parts) != 4:
        return None
    offset_txt, length_txt, crc_txt, payload = parts
    try:
        offset, length, crc = int(offset_txt), int(length_txt), int(crc_txt, 16)
    except ValueError:
        return None
    if length != len(payload) or offset < 0:
        return None
    head = offset_txt + b" " + length_txt + b" "
    if zlib.crc32(payload, zlib.crc32(head)) != crc:
        return None
    return offset, payload


@dataclass(frozen=True)
class Segment:
    first_offset: int
    path: Path


def list_segments(directory: Path) -> list[Segment]:
    segments = []
    for path in directory.glob(f"*{SEGMENT_SUFFIX}"):
        stem = path.name[: -len(SEGMENT_SUFFIX)]
        if stem.isdigit():
            segments.append(Segment(int(stem), path))
    segments.sort(key=lambda s: s.first_offset)
    return segments


def read_committed(directory: Path) -> int | None:
    """The last published offset, or None if no writer has published one yet."""
    try:
        return int((directory / COMMITTED_NAME).read_text())
    except FileNotFoundError:
        return None


def publish_committed(directory: Path, last_offset: int) -> None:
    # No fsync: the file only ever names records that are already durable, so losing
    # its latest version makes readers lag, never read ahead of the disk.
    tmp = directory / f"{COMMITTED_NAME}.tmp"
    tmp.write_text(f"{last_offset}\n")
    os.replace(tmp, directory / COMMITTED_NAME)


def fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
