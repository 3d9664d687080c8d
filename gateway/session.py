"""A query session: the gateway's conversation with a TinyDB basestation mote.

It does what the TinyDB Java tools did over the serial link (wire format §6.3-6.5, §15):
ask the root which query ids are running (StatusMessage, fromBase = 1) and take the next
one, send every part of a query as AM 101 broadcasts acknowledged by protocol 65, resend
the parts a node asks for (QueryRequestMessage, AM 104), stop a query with a DEL message
sent several times, change a query's rate, and send named commands (CommandMsg, AM 103:
queue policy and length, NO INTERLEAVE, reset), which unmodified TinyDB motes ignore.
Incoming results go to the assembler; the rows it produces are returned from ``poll``
for the caller's sinks.

The session never owns the link's life: it is handed an endpoint (usually a
``ReconnectingEndpoint``), so a link that drops and comes back leaves the assembler's
state, and every row already produced, untouched. When the link comes back the session
asks the root again which queries it runs and re-sends those of its own the root lost
(a basestation that rebooted during the outage); a query that stays silent for
``silence_epochs`` epochs is reported, once per silent stretch.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from motebase.gateway.assembly import (
    AggregateResult,
    Assembled,
    Reading,
    ReadingBatch,
    RegisteredQuery,
    ResultAssembler,
    ResultPlan,
    Row,
    TupleResult,
    WireResult,
    expand_rows,
)
from motebase.gateway.encoder import encode_query
from motebase.gateway.plan.model import QueryPlan
from motebase.gateway.protocol import (
    ALL_NODES,
    BCAST_ADDR,
    DEFAULT_GROUP,
    UART_ADDR,
    AmType,
    DecodeError,
    MsgType,
    QrType,
    QueryPart,
    ResultSchema,
    build_command,
    build_query_message,
    build_status,
    build_tos_packet,
    parse_query_message,
)
from motebase.gateway.protocol.command import check_command
from motebase.gateway.protocol.motebase import add_trailer, parse_status_extension
from motebase.gateway.protocol.result import time_sync_ms
from motebase.gateway.protocol.tos import TOS_HEADER_LEN
from motebase.gateway.protocol.tuple_lane import ResultDecoder
from motebase.gateway.protocol.tuple_runs import TupleRun, tuple_runs
from motebase.gateway.ratecontrol import RateDecision, RateGovernor
from motebase.gateway.transport.base import LinkStats

log = logging.getLogger(__name__)

#: ``u.ttl`` of the Java tool's DEL message.
STOP_TTL = 3
#: Milliseconds per unit of ``epochDuration``.
MS_PER_EPOCH_UNIT = 10
#: Usable query ids: 0xFF means "no query" on the motes.
MAX_QUERY_ID = 254
#: Where the user learns why a basestation does not acknowledge (the section's anchor,
#: as GitHub renders the heading): a path in the source tree, which the message names.
NO_ACK_HELP = "docs/hardware.md#the-basestation-does-not-acknowledge"


class Endpoint(Protocol):
    """The transport seen by a session (motebase.gateway.transport.Endpoint)."""

    def read_packets(self, timeout: float) -> list[bytes]: ...

    def write_packet(self, packet: bytes, *, ack: bool = True) -> bool: ...

    def close(self) -> None: ...


class SendError(ConnectionError):
    """A message was not acknowledged by the basestation after all attempts."""


@dataclass(frozen=True)
class SessionConfig:
    """Link behaviour; the defaults follow the TinyDB Java tools."""

    group: int = DEFAULT_GROUP
    send_attempts: int = 3
    #: Pause between the parts of a query, so the root has rebroadcast one part (a 56-byte
    #: packet is ~18 ms on a Mica2, plus backoff) before the next arrives; a busy root
    #: drops the forward. The Java tool paused 1 s.
    part_gap_s: float = 0.1
    status_wait_s: float = 1.0
    stop_repeats: int = 5
    stop_gap_s: float = 0.2
    promiscuous: bool = False
    #: Partial-state layout of aggregates: None negotiates (motebase's 32-bit states when
    #: the root announces itself as a motebase mote, TinyDB's otherwise); False forces
    #: TinyDB's 16-bit layout -- for a network mixing unmodified TinyDB motes in, whose
    #: root may be a motebase mote.
    wide_states: bool | None = None
    #: Report a periodic query that has delivered no result for this many epochs (None:
    #: never). A network that lost the query, a broken tree or a dead root look alike
    #: from here; so does a WHERE clause no reading passes.
    silence_epochs: int | None = 5
    #: How long after its parts were sent a query's first epoch may begin: a motebase
    #: root waits SCHED_START_DELAY_MS and one epoch (firmware/core/schedule.h). Silence
    #: is counted from then, so a query is not reported silent before it could speak.
    first_epoch_delay_s: float = 4.096
    #: Lower a SELECT's sample rate (RATE) when the network delivers too little of it
    #: (gateway/ratecontrol.py); the user is told, as for a silent query.
    adapt_rate: bool = False


@dataclass
class SessionCounters:
    sent_parts: int = 0
    resent_parts: int = 0
    failed_sends: int = 0
    undecodable: int = 0
    not_for_uart: int = 0
    mismatched: int = 0


def query_packet(message: bytes, group: int = DEFAULT_GROUP) -> bytes:
    """A QueryMessage as the Java tool sends it: broadcast AM 101, length 40 (49 with
    motebase's trailer, gateway/protocol/motebase.py)."""
    return build_tos_packet(BCAST_ADDR, AmType.QUERY, group, message)


@dataclass(frozen=True)
class RootInfo:
    """What a motebase root announced in its status reply (protocol/motebase.py)."""

    wide_states: bool
    epoch_base: bool
    busy: frozenset[int]


def status_request(group: int = DEFAULT_GROUP) -> bytes:
    """A StatusMessage asking the root for its running queries (fromBase = 1)."""
    return build_tos_packet(BCAST_ADDR, AmType.STATUS, group, build_status({"fromBase": 1}))


def stop_message(qid: int) -> bytes:
    """DEL for ``qid`` with the Java tool's ttl."""
    return build_query_message({"qid": qid, "msgType": MsgType.DEL, "u": {"ttl": STOP_TTL}})


def rate_message(qid: int, epoch_ms: int) -> bytes:
    """RATE: the new epoch duration of ``qid``, in 10-ms units like the query itself."""
    units = epoch_ms // MS_PER_EPOCH_UNIT
    empty_part = {"name": "", "op": 0, "type": 0}  # the union is unused: all zeros
    return build_query_message(
        {"qid": qid, "msgType": MsgType.RATE, "epochDuration": units, "u": empty_part}
    )


def command_packet(
    name: str,
    params: dict[str, Any],
    seq: int,
    target: int = ALL_NODES,
    group: int = DEFAULT_GROUP,
) -> bytes:
    """A named CommandMsg for ``target`` (-1: every node), broadcast like the Java tools."""
    message = build_command({"nodeid": target, "seqNo": seq, "name": name, "params": params})
    return build_tos_packet(BCAST_ADDR, AmType.COMMAND, group, message)


def first_command_seq(clock: Callable[[], float] = time.time) -> int:
    """Motes take a command only if its sequence number's low byte is newer than the last
    one they saw (or far from it, wire format §15). A session starts from the clock, in
    tenths of a second, so a later session's commands count as new."""
    return int(clock() * 10) & 0xFFFFFFFF


def next_query_id(running: Iterable[int]) -> int:
    """TinyDBMain's rule: one past the highest running id (the lowest free id on wrap)."""
    taken = set(running)
    if not taken:
        return 1
    candidate = max(taken) + 1
    if candidate <= MAX_QUERY_ID:
        return candidate
    free = [q for q in range(MAX_QUERY_ID + 1) if q not in taken]
    if not free:
        raise RuntimeError("every query id is in use")
    return free[0]


def missing_parts(parts: Sequence[bytes], mask: int) -> list[bytes]:
    """The parts a QueryRequestMessage's ``qmsgMask`` says the requester lacks (§6.5).

    Bit i: field i; bit numFields + j: expression j; bit numFields + numExprs: the buffer
    part. The mask has no bit for the N_EPOCHS part, and the motes never resend it (A9),
    which leaves a FOR-clause query incomplete at the requester; the gateway always
    includes it so the requester can finish the query.
    """
    missing: list[bytes] = []
    for part in parts:
        header = parse_query_message(part)
        num_fields, kind, idx = header["numFields"], header["type"], header["idx"]
        if kind == QueryPart.FIELD:
            bit = idx
        elif kind == QueryPart.EXPR:
            bit = num_fields + idx
        elif kind == QueryPart.BUFFER:
            bit = num_fields + header["numExprs"]
        else:
            missing.append(part)
            continue
        if bit >= 32 or not (mask >> bit) & 1:
            missing.append(part)
    return missing


def result_schema(plan: ResultPlan) -> ResultSchema:
    """How to decode the results of ``plan``: tuple field types; aggregate states stay raw
    so the result log can keep them byte for byte."""
    return ResultSchema(field_types=tuple(f.wire_type for f in plan.fields))


def wire_result(body: dict[str, Any], origin: int, plan: ResultPlan) -> WireResult | None:
    """A decoded QueryResult as the assembler's input; None for a result type the plan
    does not produce (e.g. tuples of an older query that had the same id)."""
    d = body["d"]
    aggregating = bool(plan.aggregates)
    stamp = time_sync_ms(body["timeSyncData"])
    if body["qrType"] == QrType.NOT_AGG and not aggregating:
        names = [f.name for f in plan.fields]
        values = dict(zip(names, d["values"], strict=False))
        return TupleResult(body["qid"], body["epoch"], origin, values, stamp)
    if body["qrType"] == QrType.AGG_SINGLE_FIELD and aggregating:
        state = bytes(d["state"])
        return AggregateResult(
            body["qid"], body["epoch"], origin, d["groupNo"], d["exprIdx"], state, stamp
        )
    return None


class QuerySession:
    """Send queries to, and assemble results from, one basestation link."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        assembler: ResultAssembler | None = None,
        config: SessionConfig | None = None,
        clock: Callable[[], float] = time.time,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        """``notify`` gets the messages for the user (query re-sent, query silent);
        by default they are logged as warnings."""
        self.endpoint = endpoint
        self.assembler = assembler or ResultAssembler()
        self.config = config or SessionConfig()
        self.counters = SessionCounters()
        self._clock = clock
        self._parts: dict[int, list[bytes]] = {}  # of running queries, for resending
        self._schemas: dict[int, ResultSchema] = {}
        self._decoder = ResultDecoder(self._schemas)
        self._reported_qids: set[int] | None = None
        self._heard_qids: set[int] | None = None
        #: The root's motebase announcement from the last status reply; None for an
        #: unmodified TinyDB root (or before any reply).
        self.root: RootInfo | None = None
        self._used_qids: set[int] = set()
        self._pending: list[Assembled] = []
        self._command_seq = first_command_seq(clock)
        self._notify = notify or log.warning
        self._status_replied = False
        self._reconnects_seen = _reconnects(endpoint)
        self._recovery_due = False
        self._epoch_ms: dict[int, int | None] = {}  # of running queries
        self._last_heard: dict[int, float] = {}  # when a result of the query last came
        self._silent: set[int] = set()  # queries already reported silent
        self._governors: dict[int, RateGovernor] = {}  # tuple queries under adapt_rate
        #: receive time - the root's logical time of the newest stamped tuple (seconds)
        self._root_clock_offset: float | None = None

    def clock(self) -> float:
        """The session's time in seconds: row timestamps and every wait it does."""
        return self._clock()

    # -- query ids -------------------------------------------------------------------

    def running_query_ids(self, wait_s: float | None = None) -> set[int]:
        """Ask the root for its running queries and collect replies for ``wait_s``."""
        return self.survey(wait_s)[0]

    def survey(self, wait_s: float | None = None) -> tuple[set[int], set[int]]:
        """Ask the root for its running queries and listen for ``wait_s`` (default
        ``config.status_wait_s``): (ids the root reports, ids of results heard meanwhile).

        The two differ while a stopped query drains or when the root missed a query's
        parts; rows the results complete are kept for the next ``poll``.
        """
        return self._survey(wait_s)

    def allocate_query_id(self) -> int:
        """The next id after the highest one in use, as TinyDBMain does.

        In use: what the root reports running, what a motebase root reports busy (stopped
        or draining queries whose results may still arrive, firmware/core/stops.h), ids of
        results heard while waiting for its answer (a query just stopped keeps delivering
        until the DEL has crossed the network) and every id this session has used.
        """
        reported, heard = self._survey(None)
        busy = self.root.busy if self.root is not None else frozenset()
        return next_query_id(reported | heard | busy | self._used_qids)

    def _survey(self, wait_s: float | None) -> tuple[set[int], set[int]]:
        """(ids the root reports, ids of results heard) during one status request."""
        wait = self.config.status_wait_s if wait_s is None else wait_s
        self._reported_qids, self._heard_qids = set(), set()
        self._status_replied = False
        try:
            self._send(status_request(self.config.group))
            deadline = self._clock() + wait
            while (left := deadline - self._clock()) > 0:
                self._pending.extend(self._receive(left))
            return self._reported_qids, self._heard_qids
        finally:
            self._reported_qids = self._heard_qids = None

    # -- sending ---------------------------------------------------------------------

    def start_query(
        self, plan: QueryPlan, sql: str = "", qid: int | None = None
    ) -> RegisteredQuery:
        """Send every part of the query and start assembling its results."""
        query_id = self.allocate_query_id() if qid is None else qid
        if plan.no_interleave:
            # Not a query flag on the wire: a node-wide mode, switched on by command.
            self.send_command("nointerleave", {"enabled": 1})
        plan, parts = self._parts_for(plan, query_id)
        self._used_qids.add(query_id)
        query = RegisteredQuery(query_id, plan, start_time=self._clock(), sql=sql)
        self.assembler.register(query)
        self._schemas[query_id] = result_schema(plan)
        self._parts[query_id] = parts
        self._epoch_ms[query_id] = plan.epoch_ms
        if self.config.adapt_rate and plan.epoch_ms and not plan.aggregates:
            self._governors[query_id] = RateGovernor(plan.epoch_ms)
        self._send_parts(query_id)
        return query

    def follow(self, query: RegisteredQuery) -> None:
        """Assemble the results of a query this session did not send (one a capture
        recorded, gateway/capture.py), exactly as those of one it started."""
        self._used_qids.add(query.query_id)
        self.assembler.register(query)
        self._schemas[query.query_id] = result_schema(query.plan)

    def _send_parts(self, qid: int) -> None:
        epoch_s = (self._epoch_ms[qid] or 0) / 1000
        self._last_heard[qid] = self._clock() + self.config.first_epoch_delay_s + epoch_s
        self._silent.discard(qid)
        for index, part in enumerate(self._parts[qid]):
            if index:
                self._pending.extend(self._receive(self.config.part_gap_s))
            self._send(query_packet(part, self.config.group))
            self.counters.sent_parts += 1

    def _parts_for(self, plan: QueryPlan, qid: int) -> tuple[QueryPlan, list[bytes]]:
        """The plan as it will run and its parts: with motebase's trailer and, unless the
        configuration forbids it, its 32-bit partial states when the root is a motebase
        mote; as the Java tools send them otherwise."""
        parts = encode_query(plan, qid)
        if self.root is None:
            return plan, parts
        wide = self.root.wide_states and self.config.wide_states is not False
        if wide:
            plan = replace(plan, wide_states=True)
        return plan, [add_trailer(part, wide=wide) for part in parts]

    def stop_query(self, qid: int) -> list[Row]:
        """Send DEL for ``qid`` as the Java tool's abort does; return its last rows."""
        packet = query_packet(stop_message(qid), self.config.group)
        for repeat in range(self.config.stop_repeats):
            if repeat:
                self._pending.extend(self._receive(self.config.stop_gap_s))
            self._send(packet, required=False)
        self._forget(qid)
        rows = expand_rows(self._take_pending()) + self.assembler.unregister(qid)
        self._schemas.pop(qid, None)
        return rows

    def _forget(self, qid: int) -> None:
        self._parts.pop(qid, None)
        self._epoch_ms.pop(qid, None)
        self._last_heard.pop(qid, None)
        self._silent.discard(qid)
        self._governors.pop(qid, None)

    def set_rate(self, qid: int, epoch_ms: int) -> None:
        """Change the epoch duration of a running query (RATE message). The root starts
        it at the next epoch boundary, numbering epochs on; rows are timed by it from the
        epoch after the newest heard."""
        self._send(query_packet(rate_message(qid, epoch_ms), self.config.group))
        seen = self.assembler.epochs_seen(qid)
        self._retimed(qid, (seen[1] if seen else 0) + 1, epoch_ms)

    def _retimed(self, qid: int, epoch: int, epoch_ms: int) -> None:
        """After a RATE the root took: silence, rows and the governor go by the new
        period from ``epoch`` on."""
        if qid in self._epoch_ms:
            self._epoch_ms[qid] = epoch_ms
        self.assembler.retime(qid, epoch, epoch_ms, self._rate_start(epoch_ms))
        if qid in self._governors:
            self._governors[qid].epoch_ms = epoch_ms

    def send_command(
        self, name: str, params: dict[str, Any] | None = None, target: int = ALL_NODES
    ) -> None:
        """Send a named command (``KNOWN_COMMANDS``); the motes flood and execute it.

        Raises ValueError (``CommandParamError``), sending nothing, for an unknown name or
        parameters the firmware would refuse: a mote drops those silently, so the caller
        would otherwise never learn the command did nothing.
        """
        check_command(name, params or {})
        self._command_seq = (self._command_seq + 1) & 0xFFFFFFFF
        self._send(command_packet(name, params or {}, self._command_seq, target, self.config.group))

    # -- receiving -------------------------------------------------------------------

    def poll(self, timeout: float) -> list[Row]:
        """Wait up to ``timeout`` for packets; return the rows they (and timeouts) completed."""
        return expand_rows(self.poll_batches(timeout))

    def poll_batches(self, timeout: float) -> list[Assembled]:
        """:meth:`poll`, with the readings of each run of tuple results in one
        :class:`ReadingBatch` (columns) rather than a :class:`Reading` each: the way to
        take results at the serial line's full rate (issue 14)."""
        rows = self._take_pending()
        if _reconnects(self.endpoint) != self._reconnects_seen:
            self._reconnects_seen = _reconnects(self.endpoint)
            self._recovery_due = True
        if self._recovery_due:
            rows.extend(self._recover())
        rows.extend(self._receive(timeout))
        self._check_silence()
        rows.extend(self.assembler.expire(self._clock()))
        self._govern(rows)
        return rows

    def _rate_start(self, epoch_ms: int) -> float | None:
        """When the root will start the new period: at its next multiple on the root's
        logical clock (firmware/core/querymsg.c), which the tuples' stamps tell; None
        before any stamped tuple."""
        if self._root_clock_offset is None:
            return None
        now_ms = int((self._clock() - self._root_clock_offset) * 1000)
        return self._root_clock_offset + (now_ms - now_ms % epoch_ms + epoch_ms) / 1000.0

    def _govern(self, rows: list[Assembled]) -> None:
        """Feed the rate governors; lower a rate one of them calls for, and say so."""
        for row in reversed(rows):  # the newest stamped tuple: one look on most polls
            if isinstance(row, Reading) and row.node_time is not None:
                self._root_clock_offset = row.receive_time - row.node_time / 1000.0
                break
            if isinstance(row, ReadingBatch) and (stamped := row.node_time.nonzero()[0]).size:
                newest = int(row.node_time[stamped[-1]])
                self._root_clock_offset = row.receive_time - newest / 1000.0
                break
        if not self._governors:
            return
        for row in rows:
            governor = self._governors.get(row.query_id)
            if governor is None:
                continue
            if isinstance(row, Reading):
                governor.observe(row.epoch, row.node_id)
            elif isinstance(row, ReadingBatch):
                for epoch, node in zip(row.epoch.tolist(), row.node_id.tolist(), strict=True):
                    governor.observe(epoch, node)
        for qid, governor in list(self._governors.items()):
            decision = governor.decide()
            if decision is not None:
                self._lower_rate(qid, decision)

    def _lower_rate(self, qid: int, decision: RateDecision) -> None:
        packet = query_packet(rate_message(qid, decision.epoch_ms), self.config.group)
        if not self._send(packet, required=False):
            self._governors[qid].epoch_ms = decision.old_epoch_ms  # judged again later
            self._notify(f"query {qid}: the basestation did not take the lower rate (RATE)")
            return
        self._retimed(qid, decision.after_epoch + 1, decision.epoch_ms)
        self._notify(decision.describe(qid))

    def _recover(self) -> list[Row]:
        """After a reconnect: re-send every query of this session the root does not
        run. Results heard meanwhile count as running (a status reply can be lost, and
        re-sending a running query would restart its epochs). Without a status reply
        (the root still booting, the link gone again) the next poll asks again."""
        try:
            reported, heard = self._survey(None)
            if not self._status_replied:
                return []
            self._recovery_due = False
            rows: list[Row] = []
            for qid in sorted(set(self._parts) - reported - heard):
                rows.extend(self.assembler.restart(qid, self._clock()))
                self._send_parts(qid)
                self._notify(
                    f"query {qid} re-sent: the basestation did not run it after the link came back"
                )
            return rows
        except SendError as exc:
            log.info("query recovery postponed: %s", exc)
            self._recovery_due = True
            return []

    def _check_silence(self) -> None:
        limit = self.config.silence_epochs
        if not limit:
            return
        now = self._clock()
        for qid, epoch_ms in self._epoch_ms.items():
            if epoch_ms is None or qid in self._silent:
                continue
            silent_s = now - self._last_heard[qid]
            if silent_s * 1000 >= limit * epoch_ms:
                self._silent.add(qid)
                self._notify(
                    f"query {qid}: no results for {limit} epochs ({silent_s:.1f} s); the "
                    "network may have lost it, or no reading passes its WHERE clause"
                )

    def finish(self) -> list[Row]:
        """Close every open aggregate bucket (end of the session)."""
        return expand_rows(self._take_pending()) + self.assembler.flush()

    def close(self) -> None:
        self.endpoint.close()

    def _take_pending(self) -> list[Assembled]:
        rows, self._pending = self._pending, []
        return rows

    def _receive(self, timeout: float) -> list[Assembled]:
        rows: list[Assembled] = []
        for item in tuple_runs(self._decoder, self.endpoint.read_packets(timeout)):
            if isinstance(item, TupleRun):
                rows.extend(self._on_tuples(item))
            else:
                rows.extend(self._dispatch(item))
        return rows

    def _dispatch(self, packet: bytes) -> list[Row]:
        try:
            decoded = self._decoder.decode(packet)
        except DecodeError:
            self.counters.undecodable += 1
            return []
        if decoded.am == AmType.QUERY_RESULT:
            if decoded.header["addr"] != UART_ADDR and not self.config.promiscuous:
                self.counters.not_for_uart += 1
                return []
            return self._on_result(decoded.body, decoded.mhop)
        if decoded.am == AmType.STATUS and decoded.body["fromBase"] == 0:
            if self._reported_qids is not None:
                self._status_replied = True
                count = decoded.body["numQueries"]
                self._reported_qids.update(decoded.body["queries"][:count])
                self.root = _root_info(packet[TOS_HEADER_LEN:])
        elif decoded.am == AmType.QUERY_REQUEST:
            self._on_query_request(decoded.body["qid"], decoded.body["qmsgMask"])
        return []

    def _on_tuples(self, run: TupleRun) -> list[ReadingBatch]:
        """A run of tuple results of one query, as :meth:`_dispatch` takes each of them."""
        if run.am != AmType.QUERY_RESULT:
            return []
        if not self.config.promiscuous:
            for_uart = run.column("header.addr") == UART_ADDR
            if not for_uart.all():
                self.counters.not_for_uart += len(run) - int(for_uart.sum())
                run.select(for_uart)
                if not len(run):
                    return []
        qid = run.qid
        self._heard(qid)
        plan = self.assembler.plan_of(qid)
        if plan is None:
            self.assembler.stats.unknown_query += len(run)
            return []
        if plan.aggregates:  # tuples of an older query that had the same id
            self.counters.mismatched += len(run)
            return []
        names = [f.name for f in plan.fields]
        values = dict(zip(names, run.values(), strict=False))
        return self.assembler.add_tuples(
            qid,
            run.column("body.epoch"),
            run.column("mhop.originaddr"),
            values,
            run.stamps(),
            self._clock(),
        )

    def _heard(self, qid: int) -> None:
        if self._heard_qids is not None:
            self._heard_qids.add(qid)
        if qid in self._last_heard:
            self._last_heard[qid] = self._clock()
            if qid in self._silent:
                self._silent.discard(qid)
                self._notify(f"query {qid}: results again")

    def _on_result(self, body: dict[str, Any], mhop: dict[str, Any] | None) -> list[Row]:
        qid = body["qid"]
        self._heard(qid)
        plan = self.assembler.plan_of(body["qid"])
        if plan is None:
            self.assembler.stats.unknown_query += 1
            return []
        origin = mhop["originaddr"] if mhop is not None else 0
        result = wire_result(body, origin, plan)
        if result is None:
            self.counters.mismatched += 1
            return []
        return self.assembler.add(result, self._clock())

    def _on_query_request(self, qid: int, mask: int) -> None:
        parts = self._parts.get(qid)
        if parts is None:
            return
        for part in missing_parts(parts, mask):
            if self._send(query_packet(part, self.config.group), required=False):
                self.counters.resent_parts += 1

    def _send(self, packet: bytes, *, required: bool = True) -> bool:
        for _ in range(self.config.send_attempts):
            if self.endpoint.write_packet(packet, ack=True):
                return True
        self.counters.failed_sends += 1
        if required:
            raise SendError(
                f"basestation did not acknowledge AM {packet[2]} "
                f"after {self.config.send_attempts} attempts (see {NO_ACK_HELP})"
            )
        return False


def _reconnects(endpoint: Endpoint) -> int:
    """How often the endpoint's link was reopened; 0 for a plain one."""
    stats = getattr(endpoint, "stats", None)
    return stats.reconnects if isinstance(stats, LinkStats) else 0


def _root_info(payload: bytes) -> RootInfo | None:
    ext = parse_status_extension(payload)
    if ext is None:
        return None
    return RootInfo(ext["wide_states"], ext["epoch_base"], frozenset(ext["busy"]))


@dataclass(frozen=True)
class RunLimits:
    """When ``run_query`` ends: after N epochs of results, after T seconds, when ``stop``
    is set (between two polls, so no assembled row is lost), or on Ctrl-C."""

    epochs: int | None = None
    duration_s: float | None = None
    stop: threading.Event | None = None


class RowSink(Protocol):
    def start(self, query: RegisteredQuery) -> None: ...

    def write(self, rows: Sequence[Row]) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class BatchSink(Protocol):
    """A sink that also takes readings in batches (:class:`ReadingBatch`): :func:`deliver`
    gives it what the session assembled as it is, and rows to any other sink."""

    def write_batches(self, items: Sequence[Assembled]) -> None: ...


def deliver(sinks: Sequence[RowSink], items: Sequence[Assembled]) -> None:
    """Hand what the session assembled to every sink: batches to those that take them,
    their readings, expanded once, to the others."""
    if not items:
        return
    rows: list[Row] | None = None
    for sink in sinks:
        if isinstance(sink, BatchSink):
            sink.write_batches(items)
            continue
        if rows is None:
            rows = expand_rows(items)
        sink.write(rows)


def run_query(
    session: QuerySession,
    plan: QueryPlan,
    sql: str,
    sinks: Sequence[RowSink],
    limits: RunLimits,
    *,
    qid: int | None = None,
    stop_at_end: bool = True,
    poll_s: float = 0.2,
) -> RegisteredQuery:
    """Start a query, feed its rows to the sinks until the limits are reached, stop it.

    N epochs are complete when a result of epoch first + N arrives (first = the first
    epoch seen); a ONCE query ends after its one epoch, a FOR-clause query after its
    last. Whatever ends the run (limits, Ctrl-C, a dead link), the rows already
    assembled and the still-open aggregate buckets reach the sinks.
    """
    query = session.start_query(plan, sql, qid)
    wanted = _wanted_epochs(plan, limits)
    deadline = None if limits.duration_s is None else session.clock() + limits.duration_s
    try:
        for sink in sinks:
            sink.start(query)
        while deadline is None or session.clock() < deadline:
            if limits.stop is not None and limits.stop.is_set():
                break
            deliver(sinks, session.poll_batches(poll_s))
            seen = session.assembler.epochs_seen(query.query_id)
            if wanted is not None and seen is not None and seen[1] >= seen[0] + wanted:
                break
    finally:
        rows: list[Row] = []
        try:
            if stop_at_end:
                rows = session.stop_query(query.query_id)
        finally:
            deliver(sinks, rows + session.finish())
            for sink in sinks:
                sink.close()
    return query


def _wanted_epochs(plan: QueryPlan, limits: RunLimits) -> int | None:
    if limits.epochs is not None:
        return limits.epochs
    if plan.epoch_ms is None:
        return 1
    return plan.num_epochs
