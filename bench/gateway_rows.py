"""Gateway, serial bytes to assembled rows, on one core: issue 14's 250,000 frames/s.

The input is bench/gateway_decode.py's: N serial frames of AM 240 tuple results (three
2-byte fields, 25 origins, epochs counting up). Each case reads the same bytes in 64 KiB
chunks, as a serial link's reader does, through the gateway's own Deframer, into a
QuerySession following `SELECT nodeid, light, temp` with its ResultAssembler (duplicate
filter, epoch unwrapping, epoch times), in this process:

  batches   QuerySession.poll_batches: the readings of each run of tuples as one
            ReadingBatch of numpy columns -- the rate the gateway takes results at
  readings  QuerySession.poll: the same readings as one Reading object each (what the
            sinks take today)
  naive     bench/gateway_decode.py's naive decoder (split, unescape, crc_hqx,
            struct.unpack; no rows, no duplicate filter): the baseline

    python bench/gateway_rows.py                  # 100,000 frames, 3 runs each, interleaved
    python bench/gateway_rows.py --frames 2000 --repeat 1 --out /tmp/rows.json
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from gateway_decode import naive_decode, stream
from ratios import arguments, median_ratio, rates, write_report

from motebase.gateway.assembly import ReadingBatch, RegisteredQuery
from motebase.gateway.plan.compile import compile_query
from motebase.gateway.protocol.framing import Deframer
from motebase.gateway.session import QuerySession, SessionConfig

RESULTS = Path(__file__).resolve().parent / "results" / "gateway_rows.json"
SQL = "SELECT nodeid, light, temp FROM sensors SAMPLE PERIOD 1s"
CHUNK = 1 << 16


class ChunkLink:
    """An endpoint reading ``data`` a chunk at a time through a Deframer, as the serial
    link's reader thread does (without the thread)."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._at = 0
        self._deframer = Deframer()

    @property
    def drained(self) -> bool:
        return self._at >= len(self._data)

    def read_packets(self, timeout: float) -> list[bytes]:
        chunk = self._data[self._at : self._at + CHUNK]
        self._at += CHUNK
        return [frame.payload for frame in self._deframer.feed(chunk)]

    def write_packet(self, packet: bytes, *, ack: bool = True) -> bool:
        return True

    def close(self) -> None:
        pass


def session_rows(data: bytes, batches: bool) -> int:
    """Readings assembled from ``data``, through batches or one object each."""
    link = ChunkLink(data)
    session = QuerySession(link, clock=lambda: 0.0, config=SessionConfig(silence_epochs=0))
    session.follow(RegisteredQuery(1, compile_query(SQL), start_time=0.0, sql=SQL))
    rows = 0
    while not link.drained:
        if batches:
            rows += sum(
                len(item) if isinstance(item, ReadingBatch) else 1
                for item in session.poll_batches(0)
            )
        else:
            rows += len(session.poll(0))
    return rows + len(session.finish())


def timed(run: Callable[[], int], expected: int) -> float:
    start = time.perf_counter()
    got = run()
    elapsed = time.perf_counter() - start
    assert got == expected, (got, expected)
    return elapsed


def main() -> None:
    args = arguments(__doc__, "frames", 100_000, RESULTS, cases="batches,readings,naive")
    data = stream(args.frames)
    runs: dict[str, Callable[[], int]] = {
        "batches": lambda: session_rows(data, True),
        "readings": lambda: session_rows(data, False),
        "naive": lambda: naive_decode(data),
    }
    times: dict[str, list[float]] = {case: [] for case in args.cases.split(",")}
    for _ in range(args.repeat):  # interleaved: a busy moment slows all alike
        for case, seconds in times.items():
            seconds.append(timed(runs[case], args.frames))
    report: dict[str, object] = {
        "frames": args.frames,
        "repeat": args.repeat,
        **{case: rates(args.frames, seconds, "frames") for case, seconds in times.items()},
    }
    for case in ("batches", "readings"):
        if case in times and "naive" in times:
            report[f"{case}_over_naive_median"] = median_ratio(times[case], times["naive"])
    write_report(args.out, report)


if __name__ == "__main__":
    main()
