"""Serial captures: the bytes a basestation sent, when they came, and their replay.

`mote listen --save FILE` and `mote query --save FILE` record every chunk of bytes read
from the serial port, before any deframing, so a capture holds what the line carried,
corrupt frames and noise included. `mote replay FILE` feeds the chunks, at their recorded
times, through the same deframer, session and assembler as a live `mote query`, in virtual
time, so it writes the rows and result-log records the live run wrote.

The format (docs/capture.md) is JSON lines:

- first a header: ``{"capture": "motebase-serial", "version": 1, "port": ..., "platform":
  ..., "baud": ..., "started": UNIX_TIME}``;
- ``{"t": SECONDS, "rx": HEX}``: a chunk read ``t`` seconds after ``started``;
- ``{"t": SECONDS, "query": {"qid", "sql", "wide_states", "start_time"}}``: written by
  `mote query --save` when it starts a query, so a replay needs no SQL.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from motebase.gateway.assembly import RegisteredQuery, Row
from motebase.gateway.plan import compile_query
from motebase.gateway.protocol import AmType, DecodeError, decode_packet
from motebase.gateway.protocol.framing import Deframer, Protocol
from motebase.gateway.session import QuerySession, RowSink, SessionConfig, deliver

FORMAT = "motebase-serial"
VERSION = 1


class CaptureError(ValueError):
    """A file that is not a capture, or a capture that cannot be replayed as asked."""


@dataclass(frozen=True)
class CaptureHeader:
    port: str
    platform: str
    baud: int
    started: float


@dataclass(frozen=True)
class CapturedQuery:
    """A query `mote query --save` started while capturing: enough to assemble its
    results as that run did."""

    qid: int
    sql: str
    wide_states: bool
    start_time: float


@dataclass(frozen=True)
class Capture:
    header: CaptureHeader
    chunks: tuple[tuple[float, bytes], ...]
    queries: tuple[CapturedQuery, ...]


class CaptureWriter:
    """Writes a capture; :meth:`received` is the serial endpoint's tap (it runs on the
    reader thread), and as a row sink it records the query a session starts."""

    def __init__(
        self,
        path: Path,
        *,
        port: str,
        platform: str,
        baud: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._file: IO[str] = path.open("w", encoding="utf-8")
        self._started = clock()
        header = {"capture": FORMAT, "version": VERSION, "port": port}
        self._line({**header, "platform": platform, "baud": baud, "started": self._started})

    def received(self, chunk: bytes) -> None:
        self._line({"t": self._elapsed(), "rx": chunk.hex()})

    def start(self, query: RegisteredQuery) -> None:
        wide = query.plan.wide_states
        entry = {"qid": query.query_id, "sql": query.sql, "wide_states": wide}
        self._line({"t": self._elapsed(), "query": {**entry, "start_time": query.start_time}})

    def write(self, rows: Sequence[Row]) -> None:
        pass  # the rows are in the captured bytes

    def close(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.close()

    def _elapsed(self) -> float:
        return round(self._clock() - self._started, 6)

    def _line(self, obj: dict[str, Any]) -> None:
        with self._lock:
            if self._file.closed:
                return  # bytes read while the link closes, after the run ended
            # flushed at once: a capture cut short by a crash keeps what came before
            self._file.write(json.dumps(obj) + "\n")
            self._file.flush()


def read_capture(path: Path) -> Capture:
    """Parse a capture file; CaptureError names the line that is wrong."""
    chunks: list[tuple[float, bytes]] = []
    queries: list[CapturedQuery] = []
    header: CaptureHeader | None = None
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            try:
                entry = json.loads(line)
                if header is None:
                    header = _header(entry)
                elif "rx" in entry:
                    chunks.append((float(entry["t"]), bytes.fromhex(entry["rx"])))
                else:
                    q = entry["query"]
                    queries.append(
                        CapturedQuery(
                            int(q["qid"]), str(q["sql"]), bool(q["wide_states"]), q["start_time"]
                        )
                    )
            except (ValueError, KeyError, TypeError) as exc:
                raise CaptureError(f"{path}, line {number}: not a capture line ({exc})") from None
    if header is None:
        raise CaptureError(f"{path} is empty")
    return Capture(header, tuple(chunks), tuple(queries))


def _header(entry: dict[str, Any]) -> CaptureHeader:
    if entry.get("capture") != FORMAT or entry.get("version") != VERSION:
        raise ValueError(f"the header must say capture {FORMAT!r}, version {VERSION}")
    return CaptureHeader(
        str(entry["port"]), str(entry["platform"]), int(entry["baud"]), float(entry["started"])
    )


class CaptureEndpoint:
    """A capture's bytes as an endpoint, in the capture's time: :meth:`clock` is the time
    the chunk being read arrived, and a read with nothing due advances it by the timeout,
    as waiting on a quiet line does. Nothing is sent: a replay only listens."""

    def __init__(self, capture: Capture) -> None:
        self._started = capture.header.started
        self._chunks = deque(capture.chunks)
        self._deframer = Deframer()
        self.now = self._started

    def clock(self) -> float:
        return self.now

    @property
    def exhausted(self) -> bool:
        return not self._chunks

    def read_packets(self, timeout: float) -> list[bytes]:
        deadline = self.now + timeout
        while self._chunks and self._started + self._chunks[0][0] <= deadline:
            t, data = self._chunks.popleft()
            self.now = max(self.now, self._started + t)
            packets = [
                frame.payload
                for frame in self._deframer.feed(data)
                if frame.protocol in (Protocol.PACKET_NO_ACK, Protocol.PACKET_ACK)
            ]
            if packets:
                return packets
        self.now = deadline
        return []

    def write_packet(self, packet: bytes, *, ack: bool = True) -> bool:
        return False

    def close(self) -> None:
        pass


def result_query_ids(capture: Capture) -> set[int]:
    """The query ids of the results (AM 240) in a capture."""
    deframer = Deframer()
    qids: set[int] = set()
    for _, data in capture.chunks:
        for frame in deframer.feed(data):
            try:
                decoded = decode_packet(frame.payload)
            except DecodeError:
                continue
            if decoded.am == AmType.QUERY_RESULT:
                qids.add(decoded.body["qid"])
    return qids


def query_to_replay(
    capture: Capture, sql: str | None, qid: int | None, wide_states: bool
) -> RegisteredQuery:
    """The query whose results a replay assembles: the one `mote query --save` recorded
    (``qid`` picks one of several), or ``sql`` under ``qid`` (by default the only query id
    the results carry), with epoch times counted from the capture's start.
    ``wide_states`` says whether its motes use motebase's 32-bit aggregate states. May
    raise TinySQLError for ``sql``."""
    if sql is None:
        recorded = [q for q in capture.queries if qid is None or q.qid == qid]
        if len(recorded) != 1:
            ids = ", ".join(str(q.qid) for q in capture.queries) or "none"
            raise CaptureError(
                f"the capture records queries {ids}: give --sql (and --qid), or --qid of one"
            )
        found = recorded[0]
        return _registered(found.sql, found.qid, found.wide_states, found.start_time)
    if qid is None:
        qids = result_query_ids(capture)
        if len(qids) != 1:
            ids = ", ".join(map(str, sorted(qids))) or "none"
            raise CaptureError(f"the capture has results of queries {ids}: give --qid")
        (qid,) = qids
    return _registered(sql, qid, wide_states, capture.header.started)


def _registered(sql: str, qid: int, wide_states: bool, start_time: float) -> RegisteredQuery:
    plan = compile_query(sql)
    if wide_states:
        plan = replace(plan, wide_states=True)
    return RegisteredQuery(qid, plan, start_time=start_time, sql=sql)


def replay(
    capture: Capture, query: RegisteredQuery, sinks: Sequence[RowSink], poll_s: float = 0.2
) -> QuerySession:
    """Assemble ``query``'s results from ``capture`` into ``sinks`` as `mote query` does
    (start, every batch of rows, the open aggregates at the end, close); returns the
    session for its counters."""
    endpoint = CaptureEndpoint(capture)
    # Silence is no news in a replay: the live run already reported it.
    config = SessionConfig(silence_epochs=None)
    session = QuerySession(endpoint, config=config, clock=endpoint.clock)
    session.follow(query)
    for sink in sinks:
        sink.start(query)
    try:
        while not endpoint.exhausted:
            deliver(sinks, session.poll_batches(poll_s))
        deliver(sinks, [*session.poll_batches(0), *session.finish()])
    finally:
        for sink in sinks:
            sink.close()
    return session
