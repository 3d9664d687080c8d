"""Final values from aggregate partial states, as the TinyDB Java readers computed them.

Motes send raw partial states up the tree and to the PC (wire format §9.2); turning a
state into a value is the gateway's job (§7.5): the first 16-bit word for SUM, MIN, MAX,
COUNT and the other single-value aggregates, sum / count for AVG, and for the windowed
aggregates the ``lastResult`` the mote reports for the closing window. The layouts are
decoded with the protocol package's construct definitions; this module only chooses
which decoded member is the value.

Unlike Java's IntReader, values are read signed (the mote keeps them in int16, and a
SUM or MIN of negative readings must not come out as 65,000-something).

A query whose plan says ``wide_states`` is decoded in motebase's wide layout (32-bit
values, uint32 counts; :mod:`motebase.gateway.protocol.aggregates`): AVG and WINAVG are sum /
count, the others their value. A wide EXPAVG record carries the epoch's own sum and
count; :func:`finalize` returns that epoch's average and the assembler smooths it across
epochs with :func:`expavg_step` (the reference semantics of the emulator use the same
function).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from motebase.gateway.protocol.aggregates import AggOp, decode_state, encode_state, state_size
from motebase.gateway.protocol.errors import DecodeError


class AggregateSpec(Protocol):
    """What finalization needs to know about an aggregate expression (PlanAggregate)."""

    @property
    def expr_idx(self) -> int: ...

    @property
    def name(self) -> str: ...

    @property
    def column(self) -> str: ...

    @property
    def op_id(self) -> int: ...

    @property
    def attribute(self) -> str: ...

    @property
    def args(self) -> Sequence[int]: ...


@dataclass(frozen=True)
class AggregateValue:
    """One finalized aggregate of a group: ``value`` is None when no record arrived or the
    state holds no data (AVG over zero readings); ``partial`` is the raw state as sent."""

    name: str
    column: str
    attribute: str
    expr_idx: int
    value: int | float | None
    partial: bytes | None


class FinalizeError(ValueError):
    """A partial state that cannot be read for its aggregate."""


def _ratio(pair: Mapping[str, Any]) -> float | None:
    count = int(pair["count"])
    return None if count == 0 else int(pair["sum"]) / count


def state_value(op_id: int, state: Mapping[str, Any]) -> int | float | None:
    """The final value of a decoded partial state of aggregate ``op_id`` (either layout):
    sum / count where the state has both (AVG, WINAVG, a wide EXPAVG: that epoch's
    average), else its value (a narrow window's ``lastResult`` value) or count."""
    if "lastResult" in state:
        state = state["lastResult"]
    if "sum" in state and "count" in state:
        return _ratio(state)
    if "value" in state:
        return int(state["value"])
    if "count" in state:
        return int(state["count"])
    raise FinalizeError(f"aggregate {op_id} has no known final value")


def expavg_step(smoothed: float, average: float, new_bits: int) -> float:
    """One epoch of EXPAVG(b): ``v + (average - v) / 2^(16 - b)``; the weight is 1 (the new
    average replaces ``v``) when ``b >= 16``. ``v`` starts at 0 and is stepped once per epoch
    that has readings, in epoch order."""
    return smoothed + (average - smoothed) / (1 << max(0, 16 - new_bits))


#: Wide states two records of one group may be merged in (firmware/core/processing.c:
#: a group a node has no slot for goes up on its own, in as many records as it takes).
MERGEABLE = frozenset({AggOp.SUM, AggOp.CNT, AggOp.MIN, AggOp.MAX, AggOp.AVG, AggOp.EXPAVG})


def _wrap32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


def merge_partials(spec: AggregateSpec, a: bytes, b: bytes) -> bytes | None:
    """The wide partial state of both records' readings -- the mote's own merge (TAG):
    sums and counts add, MIN/MAX keep the extreme (and who holds it; ``a`` on a tie).
    None where records do not merge (windows and EXPAVG narrow keep state across epochs)."""
    if spec.op_id not in MERGEABLE:
        return None
    size = state_size(spec.op_id, spec.args, wide=True)
    assert size is not None
    x = decode_state(spec.op_id, a[:size], spec.args, wide=True)
    y = decode_state(spec.op_id, b[:size], spec.args, wide=True)
    merged: dict[str, int]
    if spec.op_id in (AggOp.MIN, AggOp.MAX):
        better = y["value"] < x["value"] if spec.op_id == AggOp.MIN else y["value"] > x["value"]
        merged = {"value": y["value"], "id": y["id"]} if better else dict(x)
    elif "sum" in x:
        merged = {"sum": _wrap32(x["sum"] + y["sum"]), "count": (x["count"] + y["count"]) % 2**32}
    elif "count" in x:
        merged = {"count": (x["count"] + y["count"]) % 2**32}
    else:
        merged = {"value": _wrap32(x["value"] + y["value"])}
    return encode_state(spec.op_id, merged, spec.args, wide=True)


def finalize(spec: AggregateSpec, partial: bytes | None, *, wide: bool = False) -> AggregateValue:
    """Finalize the record of one aggregate expression (``partial`` None: no record),
    decoded in the narrow (TinyDB) or ``wide`` layout.

    ``partial`` may carry the padding of the 25-byte record area; only the state's own
    bytes are kept.
    """
    value: int | float | None = None
    kept = partial
    if partial is not None:
        size = state_size(spec.op_id, spec.args, wide=wide)
        if size is None:
            raise FinalizeError(f"{spec.name}: aggregate {spec.op_id} has no known state layout")
        kept = partial[:size]
        try:
            state = decode_state(spec.op_id, kept, spec.args, wide=wide)
        except DecodeError as exc:
            raise FinalizeError(f"{spec.name}: {exc}") from exc
        value = state_value(spec.op_id, state)
    return AggregateValue(
        name=spec.name,
        column=spec.column,
        attribute=spec.attribute,
        expr_idx=spec.expr_idx,
        value=value,
        partial=kept,
    )
