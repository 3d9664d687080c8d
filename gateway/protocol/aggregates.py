"""Aggregate partial-state records, wire format §9.1 and §9.3, and motebase's wide layouts.

A QueryResult of ``qrType`` 3 carries one group record: ``groupNo``, ``exprIdx`` and the
raw partial state of that aggregate expression. The state's layout depends on the
aggregate (the ``op`` of the expression), on the query's layout, and for windowed
aggregates on the window ``w = args[0]`` and slide ``s = args[1]``. None of these is on the
wire next to the state, so decoding needs the query.

Two layouts (firmware/ops/agg.h has the same table):

- **narrow** (``wide=False``): TinyDB 1.x's 16-bit states, what an unmodified mote sends
  and the Java tools read. Windows carry ``lastResult``, TinyDB's ring meta (head, tail,
  size, nvals, epochsLeft) and a ring of ``w - s`` entries (one when ``w <= s``) of the
  node's own per-epoch contributions; only ``lastResult`` is ever read.
- **wide** (``wide=True``): motebase motes on both ends. 16 bits overflow in ordinary
  deployments (100 nodes of light 200-800 sum past 2^15; ``WINAVG(light, 8, 4)`` over 25
  nodes sums 8 epochs of each), so values are int32 and counts uint32. A window sends
  only its window result, in its operation's layout (its ring stays on the mote), and
  EXPAVG sends the epoch's own ``{sum, count}``; the gateway smooths it across epochs
  (:func:`motebase.gateway.finalize.expavg_step`). Per-reading arithmetic is 32-bit on those
  motes too.

  ==========================  ==========================================
  SUM, WINSUM                 value int32                          (4 B)
  CNT, WINCNT                 count uint32                         (4 B)
  MIN, MAX, WINMIN, WINMAX    value int32, id uint16               (6 B)
  AVG, WINAVG, EXPAVG         sum int32, count uint32              (8 B)
  ==========================  ==========================================

Windowed rings of WINSUM/WINMIN/WINMAX/WINCNT: TinyDB 1.x stores ``uint8`` samples
(quirk A13, truncating 16-bit readings). motebase does not reproduce that quirk
(design.md §2): its motes keep ``int16`` entries. ``ring_entry="uint8"`` decodes the
original layout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import IntEnum
from typing import Any, Literal

import construct as cs

from motebase.gateway.protocol.codec import build, parse
from motebase.gateway.protocol.errors import DecodeError, EncodeError

#: Bytes of ``QueryResult.d`` left for the state after groupNo and exprIdx.
MAX_STATE_LEN = 25

RingEntry = Literal["int16", "uint8"]


class AggOp(IntEnum):
    """Aggregate ids shared by the mote (``Aggregates.h``) and Java (``catalog.xml``)."""

    NOOP = 0
    SUM = 1
    MIN = 2
    MAX = 3
    CNT = 4  # COUNT
    AVG = 5
    EXPAVG = 6
    WINAVG = 7
    WINSUM = 8
    WINMIN = 9
    WINMAX = 10
    WINCNT = 11
    DELTA = 12
    TREND = 13
    WINRAND = 14
    ADPDELTA = 15
    WAVELET = 17


WINDOWED = frozenset({AggOp.WINAVG, AggOp.WINSUM, AggOp.WINMIN, AggOp.WINMAX, AggOp.WINCNT})
TEMPORAL = WINDOWED | {AggOp.EXPAVG, AggOp.DELTA, AggOp.TREND, AggOp.WINRAND, AggOp.ADPDELTA}

#: SUM, MIN, MAX, COUNT: the value and, for MIN/MAX, the node that holds it.
ValueIdState = cs.Struct("value" / cs.Int16sl, "id" / cs.Int16sl)
AvgState = cs.Struct("sum" / cs.Int16sl, "count" / cs.Int16ul)
ExpAvgState = cs.Struct("value" / cs.Int16sl, "epochsLeft" / cs.Int8ul)
DeltaState = cs.Struct("value" / cs.Int16sl, "lastValue" / cs.Int16sl, "epochsLeft" / cs.Int8ul)
TrendState = cs.Struct(
    "value" / cs.Int16sl, "lastVal" / cs.Int16sl, "trend" / cs.Int16sl, "epochsLeft" / cs.Int8ul
)

#: The wide layouts (motebase motes on both ends; module docstring).
WideValueState = cs.Struct("value" / cs.Int32sl)
WideCountState = cs.Struct("count" / cs.Int32ul)
WideExtremeState = cs.Struct("value" / cs.Int32sl, "id" / cs.Int16ul)
WideAvgState = cs.Struct("sum" / cs.Int32sl, "count" / cs.Int32ul)

_WIDE_STATES: dict[AggOp, cs.Construct] = {
    AggOp.SUM: WideValueState,
    AggOp.WINSUM: WideValueState,
    AggOp.CNT: WideCountState,
    AggOp.WINCNT: WideCountState,
    AggOp.MIN: WideExtremeState,
    AggOp.MAX: WideExtremeState,
    AggOp.WINMIN: WideExtremeState,
    AggOp.WINMAX: WideExtremeState,
    AggOp.AVG: WideAvgState,
    AggOp.WINAVG: WideAvgState,
    AggOp.EXPAVG: WideAvgState,
}

_FIXED_STATES: dict[AggOp, cs.Construct] = {
    AggOp.SUM: ValueIdState,
    AggOp.MIN: ValueIdState,
    AggOp.MAX: ValueIdState,
    AggOp.CNT: ValueIdState,
    AggOp.AVG: AvgState,
    AggOp.EXPAVG: ExpAvgState,
    AggOp.DELTA: DeltaState,
    AggOp.TREND: TrendState,
}


def window_ring_len(args: Sequence[int]) -> int:
    """Ring entries of a windowed aggregate: ``w - s`` if ``w > s`` else one."""
    w = args[0] if len(args) > 0 else 0
    s = args[1] if len(args) > 1 else 0
    return w - s if w > s else 1


def window_state(op: AggOp, args: Sequence[int], ring_entry: RingEntry = "int16") -> cs.Construct:
    """The state struct of a windowed aggregate for window/slide ``args``."""
    if op == AggOp.WINAVG:
        last, entry = AvgState, AvgState
    else:
        last, entry = ValueIdState, (cs.Int16sl if ring_entry == "int16" else cs.Int8ul)
    return cs.Struct(
        "lastResult" / last,
        "head" / cs.Int8ul,
        "tail" / cs.Int8ul,
        "size" / cs.Int8ul,
        "nvals" / cs.Int8ul,
        "epochsLeft" / cs.Int8ul,
        "ring" / cs.Array(window_ring_len(args), entry),
    )


def state_struct(
    op: int, args: Sequence[int] = (), ring_entry: RingEntry = "int16", wide: bool = False
) -> cs.Construct | None:
    """The construct of ``op``'s partial state in the narrow (TinyDB) or ``wide`` layout, or
    None for aggregates without a layout here (NOOP, WINRAND, ADPDELTA, WAVELET: not wired
    in a default build; DELTA and TREND in the wide layout)."""
    try:
        agg = AggOp(op)
    except ValueError:
        return None
    if wide:
        return _WIDE_STATES.get(agg)
    if agg in WINDOWED:
        return window_state(agg, args, ring_entry)
    return _FIXED_STATES.get(agg)


def state_size(
    op: int, args: Sequence[int] = (), ring_entry: RingEntry = "int16", wide: bool = False
) -> int | None:
    con = state_struct(op, args, ring_entry, wide)
    return None if con is None else int(con.sizeof())


def decode_state(
    op: int,
    state: bytes,
    args: Sequence[int] = (),
    ring_entry: RingEntry = "int16",
    wide: bool = False,
) -> dict[str, Any]:
    """Decode the partial state of aggregate ``op``; trailing bytes are ignored.

    Aggregates without a known layout come back as ``{"raw": state}``.
    """
    con = state_struct(op, args, ring_entry, wide)
    if con is None:
        return {"raw": bytes(state)}
    kind = f"{_name(op)} {'wide ' if wide else ''}partial state"
    size = int(con.sizeof())
    if len(state) < size:
        raise DecodeError(kind, f"needs {size} bytes, got {len(state)}", offset=len(state))
    return parse(kind, con, state[:size])


def encode_state(
    op: int,
    state: Mapping[str, Any],
    args: Sequence[int] = (),
    ring_entry: RingEntry = "int16",
    wide: bool = False,
) -> bytes:
    con = state_struct(op, args, ring_entry, wide)
    if con is None:
        raw = state.get("raw")
        if not isinstance(raw, (bytes, bytearray)):
            raise EncodeError(f"aggregate {op}", "no known state layout; give {'raw': bytes}")
        return bytes(raw)
    return build(f"{_name(op)} {'wide ' if wide else ''}partial state", con, state)


def _name(op: int) -> str:
    try:
        return AggOp(op).name
    except ValueError:
        return f"aggregate {op}"
