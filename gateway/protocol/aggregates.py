"""Aggregate partial-state records, wire format §9.1 and §9.3.

A QueryResult of ``qrType`` 3 carries one group record: ``groupNo``, ``exprIdx`` and the
raw partial state of that aggregate expression. The state's layout depends on the
aggregate (the ``op`` of the expression) and, for windowed aggregates, on the window
``w = args[0]`` and slide ``s = args[1]``: the ring holds ``w - s`` entries (one when
``w <= s``). Neither is on the wire next to the state, so decoding needs the query.

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

from gateway.protocol.codec import build, parse
from gateway.protocol.errors import DecodeError, EncodeError

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
    op: int, args: Sequence[int] = (), ring_entry: RingEntry = "int16"
) -> cs.Construct | None:
    """The construct of ``op``'s partial state, or None for aggregates without a layout here
    (NOOP, WINRAND, ADPDELTA, WAVELET: not wired in a default build)."""
    try:
        agg = AggOp(op)
    except ValueError:
        return None
    if agg in WINDOWED:
        return window_state(agg, args, ring_entry)
    return _FIXED_STATES.get(agg)


def state_size(op: int, args: Sequence[int] = (), ring_entry: RingEntry = "int16") -> int | None:
    con = state_struct(op, args, ring_entry)
    return None if con is None else int(con.sizeof())


def decode_state(
    op: int, state: bytes, args: Sequence[int] = (), ring_entry: RingEntry = "int16"
) -> dict[str, Any]:
    """Decode the partial state of aggregate ``op``; trailing bytes are ignored.

    Aggregates without a known layout come back as ``{"raw": state}``.
    """
    con = state_struct(op, args, ring_entry)
    if con is None:
        return {"raw": bytes(state)}
    kind = f"{_name(op)} partial state"
    size = int(con.sizeof())
    if len(state) < size:
        raise DecodeError(kind, f"needs {size} bytes, got {len(state)}", offset=len(state))
    return parse(kind, con, state[:size])


def encode_state(
    op: int, state: Mapping[str, Any], args: Sequence[int] = (), ring_entry: RingEntry = "int16"
) -> bytes:
    con = state_struct(op, args, ring_entry)
    if con is None:
        raw = state.get("raw")
        if not isinstance(raw, (bytes, bytearray)):
            raise EncodeError(f"aggregate {op}", "no known state layout; give {'raw': bytes}")
        return bytes(raw)
    return build(f"{_name(op)} partial state", con, state)


def _name(op: int) -> str:
    try:
        return AggOp(op).name
    except ValueError:
        return f"aggregate {op}"
