"""Gateway decode throughput: `mote decode --raw` against a naive decoder, in one run.

Issue 14 measures the gateway as ratios in one run on one machine. The input is N serial
frames of AM 240 tuple results (three 2-byte fields, 25 origins, epochs counting up),
built from the gateway's own construct layouts (protocol/result.py, protocol/tos.py) and
framed by protocol/framing.py. Two decoders read the same bytes:

  mote     `mote decode --raw --types 4,4,4` in a subprocess, JSON lines to /dev/null:
           deframing, CRC, construct parses, JSON -- what a user runs
  naive    split on 0x7E, unescape with bytes.replace, binascii.crc_hqx, struct.unpack
           of the fields: the baseline issue 14 compares with (no JSON)

    python bench/gateway_decode.py    # 100,000 frames, 3 runs each, interleaved
    python bench/gateway_decode.py --frames 2000 --repeat 1 --out /tmp/gw.json

The mote run includes the interpreter's start and `mote`'s imports (about 0.2 s here),
as a user's does.
"""

from __future__ import annotations

import binascii
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ratios import arguments, median_ratio, rates, write_report

from motebase.gateway.protocol.framing import frame_packet
from motebase.gateway.protocol.result import QrType, WireType, build_query_result
from motebase.gateway.protocol.tos import (
    DEFAULT_GROUP,
    UART_ADDR,
    AmType,
    build_mhop,
    build_tos_packet,
)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "gateway_decode.json"
TYPES = (WireType.UINTTWO, WireType.UINTTWO, WireType.UINTTWO)
MOTE = "from motebase.gateway.cli.main import main; main()"


def result_frame(origin: int, epoch: int) -> bytes:
    result = build_query_result(
        {"qid": 1, "epoch": epoch, "qrType": QrType.NOT_AGG, "d": {"values": [origin, 500, 20]}},
        TYPES,
    )
    payload = build_mhop(0, origin, epoch & 0xFF, 1, result)
    return frame_packet(build_tos_packet(UART_ADDR, AmType.QUERY_RESULT, DEFAULT_GROUP, payload))


def stream(frames: int) -> bytes:
    return b"".join(result_frame(i % 25, 1 + i // 25) for i in range(frames))


def naive_decode(data: bytes) -> int:
    """Values decoded from well-formed frames: no error reporting, no JSON."""
    decoded = 0
    for chunk in data.split(b"\x7e"):
        if len(chunk) < 4:
            continue
        body = chunk.replace(b"\x7d\x5e", b"\x7e").replace(b"\x7d\x5d", b"\x7d")
        if binascii.crc_hqx(body[:-2], 0) != struct.unpack_from("<H", body, len(body) - 2)[0]:
            continue
        packet = body[1:-2]
        if len(packet) >= 5 + 7 + 42 and packet[2] == AmType.QUERY_RESULT:
            struct.unpack_from("<BbHB5shhBBI3H", packet, 5 + 7)
            decoded += 1
    return decoded


def run_mote(path: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", MOTE, "decode", "--raw", str(path), "--types", "4,4,4"],
        stdout=subprocess.DEVNULL,
        check=True,
    )
    return time.perf_counter() - start


def main() -> None:
    args = arguments(__doc__, "frames", 100_000, RESULTS)
    data = stream(args.frames)
    naive: list[float] = []
    mote: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "frames.raw"
        path.write_bytes(data)
        for _ in range(args.repeat):  # interleaved: a busy moment slows both alike
            start = time.perf_counter()
            decoded = naive_decode(data)
            naive.append(time.perf_counter() - start)
            assert decoded == args.frames, decoded
            mote.append(run_mote(path))
    report = {
        "frames": args.frames,
        "repeat": args.repeat,
        "mote_decode": rates(args.frames, mote, "frames"),
        "naive": rates(args.frames, naive, "frames"),
        "mote_over_naive_best": round(min(naive) / min(mote), 4),
        "mote_over_naive_median": median_ratio(mote, naive),
    }
    write_report(args.out, report)


if __name__ == "__main__":
    main()
