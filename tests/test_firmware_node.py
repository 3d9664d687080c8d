"""The firmware core through cffi: a root and a child node wired by an in-test HAL.

Queries go in as AM 101 messages built with the gateway's construct definitions, framed
for the root's UART exactly as the Java tools send them; results come out of the root's
UART and are decoded with the same definitions, so these tests also cross-check the C
encoders against the construct layouts byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from emu._motesim import ffi, lib

from gateway.protocol import (
    AggOp,
    Deframer,
    ExprOpType,
    MsgType,
    Protocol,
    QrType,
    QueryPart,
    SelOp,
    build_command,
    build_query_message,
    build_query_result,
    build_status,
    build_tos_packet,
    encode_state,
    frame_packet_ack,
    parse_mhop,
    parse_query_result,
    parse_status,
    parse_tos_packet,
)
from gateway.protocol.result import WireType
from gateway.protocol.tos import BCAST_ADDR, DEFAULT_GROUP, UART_ADDR, AmType

RADIO_MS = 5
EPOCH_UNITS = 100  # 1000 ms
NO_GROUP = -1


@dataclass
class Node:
    """One mote: its state block, its HAL table and what the test sees of its world."""

    ident: int
    state: Any = None
    hal: Any = None
    alarm: int | None = None
    radio_on: bool = True
    outgoing: tuple[int, bytes] | None = None  # (deliver_at, packet)
    sensors: dict[int, int] = field(default_factory=dict)


class TinyNet:
    """Root (0) and child (1) in radio range; virtual ms clock; root UART captured."""

    def __init__(self) -> None:
        self.now = 0
        self.rng = 1
        self.nodes = [Node(0), Node(1)]
        self.deframer = Deframer()
        self.uart_frames: list[Any] = []
        self._keep: list[Any] = []
        for node in self.nodes:
            self._wire(node)
        for node in self.nodes:
            lib.mote_init(node.state, node.ident, node.hal)

    def _wire(self, node: Node) -> None:
        handle = ffi.new_handle(node)
        memory = ffi.new("uint8_t[]", lib.mote_state_size())
        node.state = ffi.cast("mote_state *", memory)
        self._keep.append(memory)  # a cast does not keep its source alive
        callbacks = {
            "now_ms": ffi.callback("uint32_t(void *)", lambda ctx: self.now),
            "set_alarm": ffi.callback("void(void *, uint32_t)", self._set_alarm),
            "radio_send": ffi.callback("uint8_t(void *, const uint8_t *, uint8_t)", self._send),
            "uart_send": ffi.callback("void(void *, const uint8_t *, uint16_t)", self._uart),
            "sensor_read": ffi.callback("int16_t(void *, uint8_t)", self._sensor),
            "power": ffi.callback("void(void *, uint8_t, uint8_t)", self._power),
            "leds": ffi.callback("void(void *, uint8_t)", lambda ctx, bits: None),
            "rand16": ffi.callback("uint16_t(void *)", self._rand),
        }
        hal = ffi.new("mote_hal *")
        hal.ctx = handle
        for name, cb in callbacks.items():
            setattr(hal, name, cb)
        node.hal = hal
        self._keep += [handle, hal, *callbacks.values()]

    # HAL callbacks ---------------------------------------------------------------
    @staticmethod
    def _node(ctx: Any) -> Node:
        node: Node = ffi.from_handle(ctx)
        return node

    def _set_alarm(self, ctx: Any, at: int) -> None:
        self._node(ctx).alarm = at

    def _send(self, ctx: Any, msg: Any, length: int) -> int:
        node = self._node(ctx)
        if node.outgoing is not None:
            return 0
        node.outgoing = (self.now + RADIO_MS, bytes(ffi.buffer(msg, length)))
        return 1

    def _uart(self, ctx: Any, data: Any, length: int) -> None:
        self.uart_frames += self.deframer.feed(bytes(ffi.buffer(data, length)))

    def _sensor(self, ctx: Any, attr: int) -> int:
        return self._node(ctx).sensors.get(attr, 0)

    def _power(self, ctx: Any, part: int, on: int) -> None:
        if part == lib.MOTE_PWR_RADIO:
            self._node(ctx).radio_on = bool(on)

    def _rand(self, ctx: Any) -> int:
        self.rng = (self.rng * 25173 + 13849) & 0xFFFF
        return self.rng

    # driving ----------------------------------------------------------------------
    def run_until(self, until: int) -> None:
        while True:
            times = [n.alarm for n in self.nodes if n.alarm is not None]
            times += [n.outgoing[0] for n in self.nodes if n.outgoing is not None]
            nxt = min(times, default=until + 1)
            if nxt > until:
                self.now = until
                return
            self.now = max(self.now, nxt)
            for node in self.nodes:
                if node.outgoing is not None and node.outgoing[0] <= self.now:
                    _, packet = node.outgoing
                    node.outgoing = None
                    for other in self.nodes:
                        if other is not node and other.radio_on:
                            lib.mote_on_radio_rx(other.state, packet, len(packet))
                    lib.mote_on_send_done(node.state, 1)
            for node in self.nodes:
                if node.alarm is not None and node.alarm <= self.now:
                    node.alarm = None
                    lib.mote_on_alarm(node.state)

    def uart_in(self, am: int, data: bytes, token: int = 14) -> None:
        packet = build_tos_packet(BCAST_ADDR, am, DEFAULT_GROUP, data)
        frame = frame_packet_ack(packet, token)
        lib.mote_on_uart_rx(self.nodes[0].state, frame, len(frame))

    def radio_in(self, node: int, am: int, data: bytes) -> None:
        packet = build_tos_packet(BCAST_ADDR, am, DEFAULT_GROUP, data, length=49)
        lib.mote_on_radio_rx(self.nodes[node].state, packet, len(packet))

    def install(self, messages: Sequence[bytes]) -> None:
        """PC -> root over the UART, and the child hearing the root's rebroadcast at once,
        so both start the query at the same epoch boundary."""
        for msg in messages:
            self.uart_in(AmType.QUERY, msg)
            self.radio_in(1, AmType.QUERY, msg[:1] + b"\x00\x00" + msg[3:])

    def results(self) -> list[tuple[dict[str, Any], dict[str, Any], bytes]]:
        out = []
        for frame in self.uart_frames:
            if frame.protocol != Protocol.PACKET_NO_ACK:
                continue
            header, data = parse_tos_packet(frame.payload)
            if header["type"] == AmType.QUERY_RESULT:
                mhop, payload = parse_mhop(data)
                out.append((header, mhop, payload))
        return out

    def stats(self, node: int) -> Any:
        st = ffi.new("mote_stats *")
        lib.mote_get_stats(self.nodes[node].state, st)
        return st


def field_msg(qid: int, nf: int, ne: int, idx: int, name: str, **hdr: Any) -> bytes:
    return build_query_message(
        {
            "qid": qid,
            "numFields": nf,
            "numExprs": ne,
            "epochDuration": EPOCH_UNITS,
            "type": QueryPart.FIELD,
            "idx": idx,
            "u": {"name": name, "op": 0, "type": WireType.UINTTWO},
            **hdr,
        }
    )


def expr_msg(qid: int, nf: int, ne: int, idx: int, ex: dict[str, Any], op_type: int) -> bytes:
    return build_query_message(
        {
            "qid": qid,
            "numFields": nf,
            "numExprs": ne,
            "epochDuration": EPOCH_UNITS,
            "type": QueryPart.EXPR,
            "idx": idx,
            "u": {
                "opFlags": {"success": False, "isStringExp": False, "opType": op_type},
                "idx": 0,
                "ex": ex,
                "fieldOp": 0,
                "fieldConst": 0,
                "opState": 0,
            },
        }
    )


def agg_query(qid: int, op: AggOp, args: Sequence[int] = ()) -> list[bytes]:
    ex: dict[str, Any] = {
        "field": 0,
        "groupingField": NO_GROUP,
        "groupFieldOp": 0,
        "groupFieldConst": 0,
        "op": int(op),
    }
    op_type = ExprOpType.AGG
    if args:
        ex["args"] = [*args, 0, 0, 0, 0][:4]
        op_type = ExprOpType.TEMP_AGG
    return [field_msg(qid, 1, 1, 0, "light"), expr_msg(qid, 1, 1, 0, ex, op_type)]


@pytest.fixture
def net() -> TinyNet:
    net = TinyNet()
    net.nodes[0].sensors[lib.ATTR_LIGHT] = 10
    net.nodes[1].sensors[lib.ATTR_LIGHT] = 30
    net.run_until(20_000)  # beacons build the tree
    assert lib.mote_parent(net.nodes[1].state) == 0
    return net


def test_state_fits_the_atmega128_budget() -> None:
    size = lib.mote_state_size()
    print(f"sizeof(mote_state) = {size}")
    assert 0 < size <= 3072


def test_catalog_ids_are_exposed_for_the_emulator() -> None:
    assert ffi.string(lib.catalog_get(lib.ATTR_LIGHT).name) == b"light"
    assert ffi.string(lib.catalog_get(lib.ATTR_MAG_Y).name) == b"mag_y"
    assert lib.catalog_get(lib.ATTR_DEPTH).type == WireType.UINTONE
    assert lib.catalog_get(lib.ATTR_NODEID).constant == 1


def test_uart_query_is_acked_and_forwarded(net: TinyNet) -> None:
    net.uart_in(AmType.QUERY, agg_query(7, AggOp.MAX)[0], token=99)
    acks = [f for f in net.uart_frames if f.protocol == Protocol.ACK]
    assert [a.token for a in acks] == [99]
    assert lib.mote_query_status(net.nodes[0].state, 7) == 1  # assembling
    net.uart_in(AmType.QUERY, agg_query(7, AggOp.MAX)[1])
    net.run_until(net.now + 3000)
    assert lib.mote_query_status(net.nodes[1].state, 7) == 2  # reached the child by radio


def _expavg(value: int, v: int, new_bits: int) -> int:
    b = 16 - new_bits
    return value - (value >> b) + (v >> b)


def _window(op: AggOp, epoch: int, own: int, last: dict[str, Any]) -> dict[str, Any]:
    """The root's state for window 3 / slide 1 after `epoch` epochs of constant readings."""
    pushes = epoch
    ring_entry: Any = {"sum": own, "count": 1} if op == AggOp.WINAVG else own
    empty: Any = {"sum": 0, "count": 0} if op == AggOp.WINAVG else 0
    return {
        "lastResult": last,
        "head": 0 if pushes <= 2 else (pushes - 2) % 2,
        "tail": pushes % 2,
        "size": 2,
        "nvals": min(pushes, 2),
        "epochsLeft": 0,
        "ring": [ring_entry, ring_entry if pushes >= 2 else empty],
    }


def expected_state(op: AggOp, args: Sequence[int], epoch: int) -> dict[str, Any]:
    """Root (light 10) merged with its child (light 30), epoch `epoch` (1-based)."""
    n = min(epoch, 3)
    simple: dict[AggOp, Callable[[], dict[str, Any]]] = {
        AggOp.SUM: lambda: {"value": 40, "id": 0},
        AggOp.MIN: lambda: {"value": 10, "id": 0},
        AggOp.MAX: lambda: {"value": 30, "id": 1},
        AggOp.CNT: lambda: {"value": 2, "id": 0},
        AggOp.AVG: lambda: {"sum": 40, "count": 2},
        AggOp.WINSUM: lambda: _window(op, epoch, 10, {"value": 40 * n, "id": 0}),
        AggOp.WINMIN: lambda: _window(op, epoch, 10, {"value": 10, "id": 0}),
        AggOp.WINMAX: lambda: _window(op, epoch, 10, {"value": 30, "id": 1}),
        AggOp.WINCNT: lambda: _window(op, epoch, 1, {"value": 2 * n, "id": 0}),
        AggOp.WINAVG: lambda: _window(op, epoch, 10, {"sum": 40 * n, "count": 2 * n}),
    }
    if op == AggOp.EXPAVG:
        root = child = 0
        for _ in range(epoch):
            child = _expavg(child, 30, args[0])
            root = _expavg(_expavg(root, 10, args[0]), child, args[0])
        return {"value": root, "epochsLeft": 0}
    return simple[op]()


AGGREGATES: list[tuple[AggOp, tuple[int, ...]]] = [
    (AggOp.SUM, ()),
    (AggOp.MIN, ()),
    (AggOp.MAX, ()),
    (AggOp.CNT, ()),
    (AggOp.AVG, ()),
    (AggOp.EXPAVG, (14,)),
    (AggOp.WINAVG, (3, 1)),
    (AggOp.WINSUM, (3, 1)),
    (AggOp.WINMIN, (3, 1)),
    (AggOp.WINMAX, (3, 1)),
    (AggOp.WINCNT, (3, 1)),
]


@pytest.mark.parametrize(("op", "args"), AGGREGATES, ids=[a.name for a, _ in AGGREGATES])
def test_every_aggregate_reaches_the_uart_byte_exact(
    net: TinyNet, op: AggOp, args: tuple[int, ...]
) -> None:
    net.install(agg_query(3, op, args))
    net.run_until(net.now + 4500)
    results = net.results()
    assert [r[2][2] for r in results] == [1, 2, 3, 4]  # epoch numbers, one record each
    for header, mhop, payload in results:
        assert header["addr"] == UART_ADDR and header["length"] == 49
        assert mhop["originaddr"] == 0 and mhop["hopcount"] == 0
        parsed = parse_query_result(payload)
        epoch = parsed["epoch"]
        state = encode_state(op, expected_state(op, args, epoch), args)
        want = build_query_result(
            {
                "qid": 3,
                "epoch": epoch,
                "qrType": QrType.AGG_SINGLE_FIELD,
                "timeSyncData": parsed["timeSyncData"],
                "d": {"groupNo": 0, "exprIdx": 0, "state": state},
            }
        )
        assert payload == want
        # stamped at the end of the root's interval, the last of the epoch: the root takes
        # its children's records through the whole interval (core/schedule.h)
        stamp = int.from_bytes(parsed["timeSyncData"][1:], "little")
        assert stamp % 1000 == 0
    assert net.stats(0).records_merged == 4


def test_tuples_from_the_child_are_forwarded_byte_exact(net: TinyNet) -> None:
    # SELECT nodeid, light, depth, bogus WHERE light >= 20
    sel = {"field": 1, "op": SelOp.GE, "value": 20}
    parts = [
        field_msg(5, 4, 1, 0, "nodeid"),
        field_msg(5, 4, 1, 1, "light"),
        field_msg(5, 4, 1, 2, "depth"),
        field_msg(5, 4, 1, 3, "bogus"),
        expr_msg(5, 4, 1, 0, sel, ExprOpType.SEL),
    ]
    net.install(parts)
    net.run_until(net.now + 3500)
    results = net.results()
    assert len(results) == 3
    for _header, mhop, payload in results:
        assert mhop["originaddr"] == 1 and mhop["sourceaddr"] == 0
        parsed = parse_query_result(payload)
        want = build_query_result(
            {
                "qid": 5,
                "epoch": parsed["epoch"],
                "qrType": QrType.NOT_AGG,
                "timeSyncData": parsed["timeSyncData"],
                "d": {"values": [1, 30, 1, None]},
            },
            field_types=[WireType.UINTTWO, WireType.UINTTWO, WireType.UINTONE],
        )
        assert payload == want
    stats = net.stats(1)
    assert stats.results_sent == stats.samples[lib.ATTR_LIGHT] >= 3
    assert net.stats(0).results_forwarded == 3


def test_group_by_sends_one_record_per_group(net: TinyNet) -> None:
    # SELECT nodeid, SUM(light) GROUP BY nodeid: two groups at the root
    ex = {"field": 1, "groupingField": 0, "groupFieldOp": 0, "groupFieldConst": 0, "op": 1}
    parts = [
        field_msg(6, 2, 1, 0, "nodeid"),
        field_msg(6, 2, 1, 1, "light"),
        expr_msg(6, 2, 1, 0, ex, ExprOpType.AGG),
    ]
    net.install(parts)
    net.run_until(net.now + 1500)
    records = [parse_query_result(p) for _, _, p in net.results()]
    assert sorted((r["d"]["groupNo"], r["result_idx"]) for r in records) == [(0, 0), (1, 1)]
    sums = {r["d"]["groupNo"]: int.from_bytes(r["d"]["state"][:2], "little") for r in records}
    assert sums == {0: 10, 1: 30}


def test_commands_and_status(net: TinyNet) -> None:
    net.install(agg_query(8, AggOp.MAX))
    net.run_until(net.now + 1100)  # the root relays the query parts in its interval
    net.uart_in(
        AmType.COMMAND,
        build_command({"seqNo": 1, "name": "qpolicy", "params": {"policy": "delta"}}),
    )
    net.uart_in(AmType.COMMAND, build_command({"seqNo": 2, "name": "warp", "params": {"raw": b""}}))
    net.uart_in(
        AmType.COMMAND,
        build_command({"seqNo": 3, "name": "setrate", "params": {"qid": 8, "epochDuration": 200}}),
    )
    net.run_until(net.now + 5000)
    for node in (0, 1):
        stats = net.stats(node)
        assert stats.commands_executed == 2 and stats.commands_unknown == 1
    net.uart_in(AmType.STATUS, build_status({"fromBase": 1}))
    statuses = [
        parse_tos_packet(f.payload)
        for f in net.uart_frames
        if f.protocol == Protocol.PACKET_NO_ACK and f.payload[2] == AmType.STATUS
    ]
    assert len(statuses) == 1
    reply = parse_status(statuses[0][1])
    assert reply["fromBase"] == 0 and reply["numQueries"] == 1 and reply["queries"][0] == 8
    # DEL: stops after draining, on both nodes
    stop = build_query_message({"qid": 8, "msgType": MsgType.DEL, "u": {"ttl": 3}})
    net.uart_in(AmType.QUERY, stop)
    net.run_until(net.now + 12_000)
    assert lib.mote_query_status(net.nodes[0].state, 8) == 0
    assert lib.mote_query_status(net.nodes[1].state, 8) == 0


def test_malformed_part_is_counted_and_harmless(net: TinyNet) -> None:
    good = agg_query(9, AggOp.SUM)
    net.uart_in(AmType.QUERY, good[0])
    bad = bytearray(good[1])
    bad[23] = 5  # groupingField 5 of a 1-field query
    net.uart_in(AmType.QUERY, bytes(bad))
    net.uart_in(AmType.QUERY, good[1][:30])  # truncated
    assert net.stats(0).parts_rejected == 2
    net.uart_in(AmType.QUERY, good[1])
    assert lib.mote_query_status(net.nodes[0].state, 9) == 2
