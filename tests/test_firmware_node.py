"""The firmware core through cffi: a root and a child node wired by an in-test HAL.

Queries go in as AM 101 messages built with the gateway's construct definitions, framed
for the root's UART exactly as the Java tools send them; results come out of the root's
UART and are decoded with the same definitions, so these tests also cross-check the C
encoders against the construct layouts byte for byte.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from motebase.emu._motesim import ffi, lib
from motebase.gateway.protocol import (
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
    decode_packet,
    decode_state,
    encode_state,
    frame_packet_ack,
    parse_mhop,
    parse_query_result,
    parse_status,
    parse_tos_packet,
)
from motebase.gateway.protocol.aggregates import WINDOWED
from motebase.gateway.protocol.motebase import add_trailer, parse_status_extension, parse_trailer
from motebase.gateway.protocol.result import WireType
from motebase.gateway.protocol.tos import BCAST_ADDR, DEFAULT_GROUP, UART_ADDR, AmType

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
    """Root (0) and child (1) in radio range; virtual ms clock; root UART captured. The
    radio acks a unicast its addressee heard (broadcasts: never)."""

    def __init__(self, size: int = 2) -> None:
        self.now = 0
        self.rng = 1
        self.nodes = [Node(i) for i in range(size)]
        self.deframer = Deframer()
        self.uart_frames: list[Any] = []
        self.deaf: set[int] = set()  # nodes that hear no radio packet (out of range)
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
    def hears(self, sender: Node, receiver: Node) -> bool:
        return receiver is not sender and receiver.ident not in self.deaf

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
                    to = packet[0] | packet[1] << 8
                    heard = False
                    for other in self.nodes:
                        if other.radio_on and self.hears(node, other):
                            lib.mote_on_radio_rx(other.state, packet, len(packet))
                            heard = heard or other.ident == to
                    lib.mote_on_send_done(node.state, int(heard and to != BCAST_ADDR))
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
        """PC -> root over the UART, the child hearing the root's rebroadcasts, then on to
        the start of epoch 1, which the root sets a few seconds ahead (core/schedule.h)."""
        qid = messages[0][0]
        for msg in messages:
            self.uart_in(AmType.QUERY, msg)
        start = lib.mote_query_start(self.nodes[0].state, qid)
        assert start > self.now
        self.run_until(start)

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


def expr_msg(
    qid: int,
    nf: int,
    ne: int,
    idx: int,
    ex: dict[str, Any],
    op_type: int,
    field_op: int = 0,
    field_const: int = 0,
) -> bytes:
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
                "fieldOp": field_op,
                "fieldConst": field_const,
                "opState": 0,
            },
        }
    )


def agg_query(
    qid: int, op: AggOp, args: Sequence[int] = (), field_op: int = 0, field_const: int = 0
) -> list[bytes]:
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
    return [
        field_msg(qid, 1, 1, 0, "light"),
        expr_msg(qid, 1, 1, 0, ex, op_type, field_op, field_const),
    ]


@pytest.fixture
def net() -> TinyNet:
    net = TinyNet()
    net.nodes[0].sensors[lib.ATTR_LIGHT] = 10
    net.nodes[1].sensors[lib.ATTR_LIGHT] = 30
    net.run_until(20_000)  # beacons build the tree
    assert lib.mote_parent(net.nodes[1].state) == 0
    return net


def single_record(parsed: dict[str, Any], state: bytes) -> bytes:
    """The root's record of query 3, group 0, expression 0 for the epoch `parsed` names."""
    return build_query_result(
        {
            "qid": 3,
            "epoch": parsed["epoch"],
            "qrType": QrType.AGG_SINGLE_FIELD,
            "timeSyncData": parsed["timeSyncData"],
            "d": {"groupNo": 0, "exprIdx": 0, "state": state},
        }
    )


def test_state_fits_the_atmega128_budget() -> None:
    size = lib.mote_state_size()
    print(f"sizeof(mote_state) = {size}")
    assert 0 < size <= 3176  # MOTE_STATE_MAX, firmware/core/mote.h


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
        assert payload == single_record(parsed, state)
        # stamped at the end of the root's interval, the last of the epoch: the root takes
        # its children's records through the whole interval (core/schedule.h)
        stamp = int.from_bytes(parsed["timeSyncData"][1:], "little")
        assert stamp % 1000 == 0
    assert net.stats(0).records_merged == 4


# --- the wide (motebase, 32-bit) layout --------------------------------------------------

TIMES = 1  # fieldOp *
ROOT_LIGHT, CHILD_LIGHT = 800, 700  # light * 100: 80,000 and 70,000, past int16


def wide_net() -> TinyNet:
    net = TinyNet()
    net.nodes[0].sensors[lib.ATTR_LIGHT] = ROOT_LIGHT
    net.nodes[1].sensors[lib.ATTR_LIGHT] = CHILD_LIGHT
    net.run_until(20_000)
    assert lib.mote_parent(net.nodes[1].state) == 0
    return net


def install_wide(net: TinyNet, messages: Sequence[bytes], qid: int) -> None:
    """Install on both nodes in the wide layout: the parts carry motebase's trailer with
    its flag, as the gateway sends them to a motebase root (protocol/motebase.py)."""
    net.install([add_trailer(msg, wide=True) for msg in messages])
    for node in net.nodes:
        assert lib.mote_query_status(node.state, qid) == 2  # running


def expected_wide_state(op: AggOp, epoch: int) -> dict[str, Any]:
    """Root (80,000, id 0) merged with its child (70,000, id 1); windows 3 / 1."""
    n = min(epoch, 3)
    total = (ROOT_LIGHT + CHILD_LIGHT) * 100
    return {
        AggOp.SUM: {"value": total},
        AggOp.MIN: {"value": CHILD_LIGHT * 100, "id": 1},
        AggOp.MAX: {"value": ROOT_LIGHT * 100, "id": 0},
        AggOp.CNT: {"count": 2},
        AggOp.AVG: {"sum": total, "count": 2},
        AggOp.EXPAVG: {"sum": total, "count": 2},  # the epoch's own parts; the gateway smooths
        AggOp.WINSUM: {"value": total * n},
        AggOp.WINMIN: {"value": CHILD_LIGHT * 100, "id": 1},
        AggOp.WINMAX: {"value": ROOT_LIGHT * 100, "id": 0},
        AggOp.WINCNT: {"count": 2 * n},
        AggOp.WINAVG: {"sum": total * n, "count": 2 * n},
    }[op]


@pytest.mark.parametrize(("op", "args"), AGGREGATES, ids=[a.name for a, _ in AGGREGATES])
def test_every_wide_aggregate_reaches_the_uart_byte_exact(op: AggOp, args: tuple[int, ...]) -> None:
    net = wide_net()
    install_wide(net, agg_query(3, op, args, TIMES, 100), 3)
    net.run_until(net.now + 4500)
    results = net.results()
    assert [r[2][2] for r in results] == [1, 2, 3, 4]
    for _header, _mhop, payload in results:
        parsed = parse_query_result(payload)
        epoch = parsed["epoch"]
        state = encode_state(op, expected_wide_state(op, epoch), args, wide=True)
        assert len(state) == {AggOp.MIN: 6, AggOp.MAX: 6, AggOp.WINMIN: 6, AggOp.WINMAX: 6}.get(
            op, 8 if op in (AggOp.AVG, AggOp.EXPAVG, AggOp.WINAVG) else 4
        )
        assert payload == single_record(parsed, state)
    assert net.stats(0).records_merged == 4


def test_the_narrow_layout_wraps_where_the_wide_one_does_not(net: TinyNet) -> None:
    net.nodes[0].sensors[lib.ATTR_LIGHT] = ROOT_LIGHT
    net.nodes[1].sensors[lib.ATTR_LIGHT] = CHILD_LIGHT
    net.install(agg_query(3, AggOp.SUM, (), TIMES, 100))
    net.run_until(net.now + 2500)
    results = net.results()
    assert len(results) >= 2
    for _header, _mhop, payload in results:
        state = parse_query_result(payload)["d"]["state"]
        # TinyDB: 800 * 100 wraps to 14,464 and 700 * 100 to 4,464; their sum fits
        assert decode_state(AggOp.SUM, state) == {"value": 14464 + 4464, "id": 0}


def wide_records(net: TinyNet, op: AggOp) -> list[tuple[int, dict[str, Any]]]:
    out = []
    for _header, _mhop, payload in net.results():
        parsed = parse_query_result(payload)
        out.append((parsed["epoch"], decode_state(op, parsed["d"]["state"], wide=True)))
    return out


def test_wide_window_ages_out_epochs_whose_where_failed() -> None:
    """WINSUM(3, 1, light * 100) WHERE light * 100 > 30000 (false for 14,464 in 16 bits):
    once the readings stop passing, the window reports what its last 3 epochs hold, then
    nothing."""
    net = wide_net()
    sel = {"field": 0, "op": SelOp.GT, "value": 30000}
    agg = {"field": 0, "groupingField": NO_GROUP, "groupFieldOp": 0, "groupFieldConst": 0}
    parts = [
        field_msg(4, 1, 2, 0, "light"),
        expr_msg(4, 1, 2, 0, sel, ExprOpType.SEL, TIMES, 100),
        expr_msg(
            4,
            1,
            2,
            1,
            agg | {"op": int(AggOp.WINSUM), "args": [3, 1, 0, 0]},
            ExprOpType.TEMP_AGG,
            TIMES,
            100,
        ),
    ]
    install_wide(net, parts, 4)
    # both nodes sample late in the epoch (their intervals end it): change the lights just
    # after an epoch boundary, before either samples the new epoch
    net.run_until((net.now // 1000 + 4) * 1000 + 1)
    net.nodes[0].sensors[lib.ATTR_LIGHT] = 200  # 20,000: fails the WHERE
    net.nodes[1].sensors[lib.ATTR_LIGHT] = 100
    net.run_until(net.now + 6000)
    records = wide_records(net, AggOp.WINSUM)
    epochs = [e for e, _ in records]
    last = epochs[-1] - 2  # the last epoch with readings
    assert last >= 3 and epochs == list(range(1, last + 3))
    total = (ROOT_LIGHT + CHILD_LIGHT) * 100
    want = [total * min(e, 3) for e in range(1, last + 1)] + [total * 2, total]
    assert [r["value"] for _, r in records] == want


def test_wide_window_with_a_slide_longer_than_the_window() -> None:
    """WINAVG(1, 2): every second epoch, over that epoch alone."""
    net = wide_net()
    install_wide(net, agg_query(5, AggOp.WINAVG, (1, 2), TIMES, 100), 5)
    net.run_until(net.now + 6500)
    records = wide_records(net, AggOp.WINAVG)
    assert [e for e, _ in records] == [2, 4, 6]
    total = (ROOT_LIGHT + CHILD_LIGHT) * 100
    assert all(r == {"sum": total, "count": 2} for _, r in records)


class TreeNet(TinyNet):
    """Nodes in radio range only along ``links``; records what each node's evaluation read
    (``hal.observe``), from which a reference computes what the root must report."""

    def __init__(self, size: int, links: set[tuple[int, int]]) -> None:
        self.links = links | {(b, a) for a, b in links}
        self.observed: list[tuple[int, int, int, bool, list[int]]] = []
        super().__init__(size)

    def _wire(self, node: Node) -> None:
        super()._wire(node)
        observe = ffi.callback("void(void *, const mote_observation *)", self._observe)
        node.hal.observe = observe
        self._keep.append(observe)

    def _observe(self, ctx: Any, obs: Any) -> None:
        if obs.kind == lib.MOTE_OBS_SAMPLED:
            values = [obs.values[i] for i in range(obs.n_fields)]
            self.observed.append((self._node(ctx).ident, obs.qid, obs.epoch, obs.status, values))

    def hears(self, sender: Node, receiver: Node) -> bool:
        return (sender.ident, receiver.ident) in self.links


def _reference(
    op: AggOp, args: Sequence[int], readings: dict[int, dict[int, tuple[int, int]]], epoch: int
) -> dict[int, dict[str, Any]]:
    """What the root reports at `epoch`, per group: the readings (node -> (group, value)) of
    that epoch, or of epochs epoch-w+1 .. epoch for a window that reports at it."""
    window, slide = (args[0], args[1]) if op in WINDOWED else (1, 1)
    if epoch % slide:
        return {}
    out: dict[int, dict[str, Any]] = {}
    for group in (1, 2):
        values = [
            value
            for e in range(epoch - window + 1, epoch + 1)
            for g, value in readings.get(e, {}).values()
            if g == group
        ]
        if not values:
            continue
        base = {
            AggOp.WINSUM: AggOp.SUM,
            AggOp.WINMIN: AggOp.MIN,
            AggOp.WINMAX: AggOp.MAX,
            AggOp.WINCNT: AggOp.CNT,
            AggOp.WINAVG: AggOp.AVG,
            AggOp.EXPAVG: AggOp.AVG,
        }.get(op, op)
        out[group] = {
            AggOp.SUM: {"value": sum(values)},
            AggOp.CNT: {"count": len(values)},
            AggOp.AVG: {"sum": sum(values), "count": len(values)},
            AggOp.MIN: {"value": min(values)},
            AggOp.MAX: {"value": max(values)},
        }[base]
    return out


TREE_AGGREGATES: list[tuple[AggOp, tuple[int, ...]]] = [
    *((op, ()) for op in (AggOp.SUM, AggOp.MIN, AggOp.MAX, AggOp.CNT, AggOp.AVG)),
    (AggOp.EXPAVG, (14,)),
    (AggOp.WINSUM, (3, 1)),
    (AggOp.WINAVG, (4, 2)),
    (AggOp.WINMIN, (2, 3)),
    (AggOp.WINMAX, (5, 5)),
    (AggOp.WINCNT, (6, 2)),
]


@pytest.mark.parametrize(
    ("op", "args"), TREE_AGGREGATES, ids=[f"{a.name}{list(g)}" for a, g in TREE_AGGREGATES]
)
def test_wide_aggregates_over_a_tree_match_what_the_nodes_read(
    op: AggOp, args: tuple[int, ...]
) -> None:
    """SELECT op(light * 100) WHERE light * 100 > 30000 GROUP BY temp on the tree
    0-1-2-3, 1-4, readings (up to 100,000) drawn at random every epoch: the root's records
    are exactly the aggregate of what the nodes read (hal.observe), epoch by epoch."""
    rnd = random.Random(int(op) * 31 + sum(args))
    net = TreeNet(5, {(0, 1), (1, 2), (2, 3), (1, 4)})
    net.run_until(30_000)
    assert [lib.mote_depth(n.state) for n in net.nodes] == [0, 1, 2, 3, 2]
    sel = {"field": 0, "op": SelOp.GT, "value": 30000}
    agg: dict[str, Any] = {"field": 0, "groupingField": 1, "groupFieldOp": 0}
    agg |= {"groupFieldConst": 0, "op": int(op)}
    kind = ExprOpType.AGG
    if args:
        agg["args"] = [*args, 0, 0, 0, 0][:4]
        kind = ExprOpType.TEMP_AGG
    parts = [
        field_msg(7, 2, 2, 0, "light"),
        field_msg(7, 2, 2, 1, "temp"),
        expr_msg(7, 2, 2, 0, sel, ExprOpType.SEL, TIMES, 100),
        expr_msg(7, 2, 2, 1, agg, kind, TIMES, 100),
    ]
    for msg in parts:  # the wide layout: motebase's trailer with its flag
        net.uart_in(AmType.QUERY, add_trailer(msg, wide=True))
    net.run_until(net.now + 3000)  # the parts travel down the chain
    for _ in range(30):  # new readings just after each epoch boundary, before any node samples
        net.run_until((net.now // 1000 + 1) * 1000 + 1)
        for node in net.nodes:
            node.sensors[lib.ATTR_LIGHT] = rnd.choice([100, 250, 310, 700, 800, 1000])
            node.sensors[lib.ATTR_TEMP] = rnd.choice([1, 2])
    readings: dict[int, dict[int, tuple[int, int]]] = {}
    for node_id, qid, epoch, passed, values in net.observed:
        if qid == 7 and passed:
            assert node_id not in readings.setdefault(epoch, {})
            readings[epoch][node_id] = (values[1], values[0] * 100)
    got: dict[int, dict[int, dict[str, Any]]] = {}
    for _header, _mhop, payload in net.results():
        parsed = parse_query_result(payload)
        state = decode_state(op, parsed["d"]["state"], args, wide=True)
        got.setdefault(parsed["epoch"], {})[parsed["d"]["groupNo"]] = state
    last = max(got)
    compared = 0
    for epoch in range(1, last + 1):
        want = _reference(op, args, readings, epoch)
        have = got.get(epoch, {})
        assert sorted(have) == sorted(want), epoch
        for group, state in have.items():
            if "id" in state:  # MIN/MAX: a node that read that value in the window
                holder = state.pop("id")
                window = args[0] if args else 1
                assert any(
                    readings.get(e, {}).get(holder) == (group, state["value"])
                    for e in range(epoch - window + 1, epoch + 1)
                )
            assert state == want[group], (epoch, group)
            compared += 1
    assert compared >= 10
    if op not in (AggOp.CNT, AggOp.WINCNT):  # values past TinyDB's int16 went through
        assert any(v > 0x7FFF for s in got.values() for st in s.values() for v in st.values())


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


def stop_message(qid: int) -> bytes:
    return build_query_message({"qid": qid, "msgType": MsgType.DEL, "u": {"ttl": 3}})


def _status_reply(net: TinyNet) -> bytes:
    """Ask the root for its status over the UART; the payload of its reply."""
    seen = len(net.uart_frames)
    net.uart_in(AmType.STATUS, build_status({"fromBase": 1}))
    replies = [
        parse_tos_packet(f.payload)[1]
        for f in net.uart_frames[seen:]
        if f.protocol == Protocol.PACKET_NO_ACK and f.payload[2] == AmType.STATUS
    ]
    assert len(replies) == 1
    payload: bytes = replies[0]
    return payload


def test_status_reply_announces_motebase_and_the_ids_still_busy(net: TinyNet) -> None:
    """The status extension (protocol/motebase.py) decodes the C reply: capabilities, and
    a stopped query's id as busy, so the gateway does not give it to a new query."""
    assert parse_status_extension(_status_reply(net)) == {
        "wide_states": True,
        "epoch_base": True,
        "busy": (),
    }
    net.install(agg_query(8, AggOp.MAX))
    net.run_until(net.now + 2000)
    net.uart_in(AmType.QUERY, stop_message(8))
    net.run_until(net.now + 12_000)
    reply = _status_reply(net)
    assert parse_status(reply)["numQueries"] == 0
    ext = parse_status_extension(reply)
    assert ext is not None and ext["busy"] == (8,)


def capture_sends(net: TinyNet, node: int) -> list[bytes]:
    """Every packet `node` puts on the air from now on."""
    sent: list[bytes] = []
    send = net._send

    def capture(ctx: Any, msg: Any, length: int) -> int:
        sent.append(bytes(ffi.buffer(msg, length)))
        return send(ctx, msg, length)

    cb = ffi.callback("uint8_t(void *, const uint8_t *, uint8_t)", capture)
    net._keep.append(cb)
    net.nodes[node].hal.radio_send = cb
    return sent


def test_beacons_decode_with_construct_and_tell_the_root_the_depth(net: TinyNet) -> None:
    root, child = capture_sends(net, 0), capture_sends(net, 1)
    net.run_until(net.now + 20_000)

    def beacons(sent: list[bytes]) -> list[Any]:
        return [p.body for p in map(decode_packet, sent) if p.am == AmType.MULTIHOP_ROUTE]

    assert beacons(child) and beacons(root)
    assert all(b["parent"] == 0 and b["motebase"]["deepest"] == 1 for b in beacons(child))
    assert beacons(root)[-1]["motebase"]["deepest"] == 1  # it heard its child's
    # the root counts its beacons; the child carries the count its parent last told it
    root_gens = [b["motebase"]["generation"] for b in beacons(root)]
    assert root_gens == list(range(root_gens[0], root_gens[0] + len(root_gens)))
    child_gens = [b["motebase"]["generation"] for b in beacons(child)]
    assert child_gens == sorted(child_gens) and root_gens[0] <= child_gens[-1] <= root_gens[-1]


def test_root_rebroadcasts_parts_with_the_epoch_base_it_chose(net: TinyNet) -> None:
    """The PC sends the trailer without a base; the root picks epoch 1's start and every
    part it passes down carries it, so all nodes number epochs alike (core/schedule.h)."""
    sent = capture_sends(net, 0)
    parts = [add_trailer(m, wide=True) for m in agg_query(4, AggOp.SUM)]
    assert parse_trailer(parts[0]) == {"wide": True, "base": None}
    net.install(parts)
    trailers = [parse_trailer(parse_tos_packet(p)[1]) for p in sent if p[2] == AmType.QUERY]
    assert len(trailers) >= 2
    assert all(t is not None and t["wide"] and t["base"] is not None for t in trailers)
    assert len({t["base"] for t in trailers if t is not None}) == 1


def test_a_node_that_missed_the_stop_is_stopped_by_the_root(net: TinyNet) -> None:
    """The child hears no DEL; its next result, for a query the root no longer runs, makes
    the root send one (core/stops.h) -- the child does not run on for ever."""
    net.install(agg_query(8, AggOp.MAX))
    net.run_until(net.now + 2000)
    net.deaf.add(1)
    net.uart_in(AmType.QUERY, stop_message(8))
    net.run_until(net.now + 6000)
    assert lib.mote_query_status(net.nodes[0].state, 8) == 0
    assert lib.mote_query_status(net.nodes[1].state, 8) == 2  # still running, unaware
    net.deaf.clear()
    net.run_until(net.now + 6000)
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
