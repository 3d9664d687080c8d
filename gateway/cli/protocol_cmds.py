"""`mote decode` and `mote listen`: look at TinyOS/TinyDB traffic without a query session.

Both print one JSON object per message: ``am``, ``am_name``, the TOS header fields, the
multihop header fields where the AM type has them, and ``body`` with the field names of the
wire-format spec (bytes as hex).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from motebase.gateway.cli.params import AmGroup, Duration, platform_option
from motebase.gateway.protocol import (
    DecodeError,
    Deframer,
    Frame,
    FramingStats,
    Protocol,
    WireType,
    decode_packet,
    fastlane,
)
from motebase.gateway.protocol.tos import TINYDB_PAYLOAD_LEN
from motebase.gateway.protocol.tuple_lane import TupleLane

if TYPE_CHECKING:
    from motebase.gateway.capture import CaptureWriter
    from motebase.gateway.transport import Endpoint

_PROTOCOL_BYTES = {int(p) for p in Protocol}


def _parse_types(spec: str | None) -> tuple[int, ...] | None:
    if not spec:
        return None
    types = []
    for item in spec.split(","):
        token = item.strip()
        try:
            types.append(int(token) if token.isdigit() else int(WireType[token.upper()]))
        except KeyError:
            names = ", ".join(t.name.lower() for t in WireType)
            raise click.BadParameter(
                f"unknown wire type {token!r} (codes 1-9 or {names})"
            ) from None
    return tuple(types)


_TYPES_HELP = (
    "Wire types of the query's fields for tuple values, comma-separated codes or names "
    "(e.g. 4,4,2 or uinttwo,uinttwo,uintone). Default: every field 2 bytes."
)


@dataclass
class _Decoder:
    """Turns frames and packets into JSON lines and keeps the counts for --stats."""

    field_types: tuple[int, ...] | None
    max_payload: int
    out: IO[str]
    err: IO[str]
    framing: FramingStats = dataclasses.field(default_factory=FramingStats)
    packets: int = 0
    undecodable: int = 0
    bad_lines: int = 0
    lane: TupleLane = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.lane = TupleLane(self.field_types, self.max_payload)

    def packet(self, data: bytes) -> None:
        line = self.lane.line(data)
        if line is not None:
            self.packets += 1
            self.out.write(line + "\n")
            return
        try:
            decoded = decode_packet(
                data, field_types=self.field_types, max_payload=self.max_payload
            )
        except DecodeError as exc:
            self.undecodable += 1
            self._emit(self.err, _error_json(exc, data))
            return
        self.packets += 1
        self._emit(self.out, decoded.to_json_dict())

    def frame(self, frame: Frame) -> None:
        if frame.protocol in (Protocol.PACKET_ACK, Protocol.PACKET_NO_ACK):
            self.packet(frame.payload)
        elif frame.protocol == Protocol.ACK:
            self._emit(self.out, {"frame": "ack", "token": frame.token})
        else:
            self._emit(self.out, {"frame": "unknown_protocol_reply", "protocol": frame.payload[0]})

    def stats(self) -> dict[str, Any]:
        return {
            "frames": self.framing.as_dict(),
            "corrupt_frames": self.framing.corrupt,
            "packets": self.packets,
            "undecodable": self.undecodable,
            "bad_lines": self.bad_lines,
        }

    def flush(self) -> None:
        """Lines are written as they come and flushed once per chunk read, not per line."""
        self.out.flush()
        self.err.flush()

    @staticmethod
    def _emit(stream: IO[str], obj: dict[str, Any]) -> None:
        stream.write(json.dumps(obj) + "\n")


def _error_json(exc: DecodeError, data: bytes) -> dict[str, Any]:
    return {
        "error": str(exc),
        "kind": exc.kind,
        "field": exc.field,
        "offset": exc.offset,
        "bytes": data.hex(),
    }


def _looks_like_frame(data: bytes) -> bool:
    # A packet to the UART starts 7e 00 (addr 0x007E LE); a frame's second byte is a
    # protocol byte (0x40-0x42, 0xff) and its flags enclose it.
    return len(data) >= 2 and data[0] == 0x7E and data[-1] == 0x7E and data[1] in _PROTOCOL_BYTES


def _hex_lines(stream: IO[str]) -> Iterator[str]:
    for line in stream:
        text = line.split("#", 1)[0].strip()
        if text:
            yield text


def _decode_hex(lines: Iterable[str], decoder: _Decoder) -> None:
    for text in lines:
        try:
            data = bytes.fromhex(text.replace(":", " "))
        except ValueError as exc:
            decoder.bad_lines += 1
            decoder.err.write(json.dumps({"error": f"not hex: {exc}", "line": text}) + "\n")
            continue
        if _looks_like_frame(data):
            deframer = Deframer()
            for frame in deframer.feed(data):
                decoder.frame(frame)
            decoder.framing.add(deframer.stats)
        else:
            decoder.packet(data)
        decoder.flush()


def _decode_raw(stream: IO[bytes], decoder: _Decoder, *, fast: bool = True) -> None:
    """Frames of ``stream`` to ``decoder``; ``fast``: tuple frames of shapes the lane knows
    through the C walk (protocol/fastlane.py) where it is built, other frames through the
    deframer's C split (protocol/framing.py); ``fast=False``: all of it in Python."""
    deframer = Deframer(fast=fast)
    walk = _c_walk(decoder, deframer) if fast and fastlane.available() else None
    # read1: what the pipe or port has now, so a live stream is printed as it comes
    read = getattr(stream, "read1", stream.read)
    while chunk := read(1 << 16):
        if walk is None:
            for frame in deframer.feed(chunk):
                decoder.frame(frame)
        else:
            deframer.feed_walk(chunk, walk, decoder.frame)
        decoder.flush()
    decoder.framing.add(deframer.stats)


def _c_walk(decoder: _Decoder, deframer: Deframer) -> Callable[[bytes, int, int], int]:
    walker = fastlane.FrameWalker(decoder.lane, deframer.mtu)

    def walk(data: bytes, start: int, end: int) -> int:
        stop, text, lines = walker.walk(data, start, end)
        decoder.out.write(text)
        decoder.packets += lines
        deframer.stats.good += lines
        return stop

    return walk


@click.command("decode")
@click.argument("source", type=click.Path(dir_okay=False, allow_dash=True), default="-")
@click.option("--raw", is_flag=True, help="SOURCE is a binary stream of framed bytes.")
@click.option("--types", "types_spec", metavar="T1,T2,...", help=_TYPES_HELP)
@click.option("--stats", "show_stats", is_flag=True, help="Print frame counts by outcome last.")
@click.option(
    "--payload-len",
    default=TINYDB_PAYLOAD_LEN,
    show_default=True,
    help="TOSH_DATA_LENGTH of the build (29 for stock TinyOS).",
)
def decode_cmd(
    source: str, raw: bool, types_spec: str | None, show_stats: bool, payload_len: int
) -> None:
    """Decode TinyOS/TinyDB packets from SOURCE (a file, or - for stdin).

    Input is hex, one frame (7e ... 7e) or packet (TOS header + data) per line, or with
    --raw the binary byte stream of a serial line. Prints one JSON object per message;
    undecodable input is reported as JSON on stderr and skipped.
    """
    decoder = _Decoder(_parse_types(types_spec), payload_len, sys.stdout, sys.stderr)
    if raw:
        with click.open_file(source, "rb") as binary:
            _decode_raw(binary, decoder)
    else:
        with click.open_file(source, "r") as text:
            _decode_hex(_hex_lines(text), decoder)
    if show_stats:
        decoder.out.write(json.dumps({"stats": decoder.stats()}) + "\n")
    decoder.flush()


@click.command("listen")
@click.option("--port", "url", required=True, help="Device path, pyserial URL or sf://host:port.")
@platform_option("Sets the baud rate of a serial port (mica2 57600, mica/mica2dot 19200).")
@click.option("--baud", type=int, help="Baud rate, overriding --platform.")
@click.option(
    "--group",
    type=AmGroup(),
    default=None,
    help="Print only packets of this AM group (decimal or hex, 0x7d) [default: every group].",
)
@click.option("--types", "types_spec", metavar="T1,T2,...", help=_TYPES_HELP)
@click.option("--hex", "as_hex", is_flag=True, help="Print raw packet bytes like TinyOS Listen.")
@click.option("--count", type=int, help="Stop after this many packets.")
@click.option("--timeout", type=Duration(), help="Stop after this long (30s, 2m, 1h, 90).")
@click.option("--reconnect", is_flag=True, help="Reopen the port when the link drops.")
@click.option(
    "--save",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also record the serial bytes received as a capture, for `mote replay` "
    "(docs/capture.md); not through a SerialForwarder.",
)
def listen_cmd(
    url: str,
    platform: str,
    baud: int | None,
    group: int | None,
    types_spec: str | None,
    as_hex: bool,
    count: int | None,
    timeout: float | None,
    reconnect: bool,
    save: Path | None,
) -> None:
    """Print packets arriving on a serial endpoint as they come (Ctrl-C stops)."""
    field_types = _parse_types(types_spec)
    out = sys.stdout
    decoder = _Decoder(field_types, TINYDB_PAYLOAD_LEN, out, sys.stderr)
    capture = capture_for(save, url, platform, baud)
    tap = None if capture is None else capture.received
    # The links (pyserial, sockets) load here: `mote decode` of a file needs none of them.
    from motebase.gateway.transport import open_endpoint

    try:
        endpoint = open_endpoint(url, platform, baud, reconnect=reconnect, tap=tap)
    except (OSError, ValueError) as exc:
        if capture is not None:
            capture.close()
        raise click.ClickException(f"cannot open {url}: {exc}") from exc
    deadline = None if timeout is None else time.monotonic() + timeout
    seen = 0
    try:
        while count is None or seen < count:
            wait = 0.2 if deadline is None else min(0.2, deadline - time.monotonic())
            if wait <= 0:
                break
            packets = [p for p in _read_packets(endpoint, wait) if _in_group(p, group)]
            for packet in packets[: None if count is None else count - seen]:
                seen += 1
                if as_hex:
                    out.write(packet.hex(" ") + "\n")
                    out.flush()
                else:
                    decoder.packet(packet)
    except KeyboardInterrupt:
        pass
    finally:
        endpoint.close()
        if capture is not None:
            capture.close()


def capture_for(
    save: Path | None, url: str, platform: str, baud: int | None
) -> CaptureWriter | None:
    """The capture ``--save`` asks for, of `mote listen` and `mote query` alike."""
    if save is None:
        return None
    from motebase.gateway.transport import platform_baud
    from motebase.gateway.transport.url import is_sf_url

    if is_sf_url(url):
        raise click.BadParameter(
            "a SerialForwarder carries packets, not the serial line's bytes: capture at "
            "the serial port (the one `mote sf` serves)",
            param_hint="--save",
        )
    # Here, not at the top: a capture can be replayed into a session, whose modules
    # `mote decode` should not have to import.
    from motebase.gateway.capture import CaptureWriter

    rate = baud if baud is not None else platform_baud(platform)
    try:
        return CaptureWriter(save, port=url, platform=platform, baud=rate)
    except OSError as exc:
        raise click.BadParameter(str(exc), param_hint="--save") from None


def _in_group(packet: bytes, group: int | None) -> bool:
    """Whether ``packet`` passes --group: TOS_Msg's group is its byte 3 (addr, type, group)."""
    return group is None or (len(packet) > 3 and packet[3] == group)


def _read_packets(endpoint: Endpoint, wait: float) -> list[bytes]:
    # Only the link's errors are "link lost": one writing stdout (a closed pipe) is not.
    try:
        return endpoint.read_packets(wait)
    except OSError as exc:
        raise click.ClickException(f"link lost: {exc}") from exc


COMMANDS: list[click.Command] = [decode_cmd, listen_cmd]
