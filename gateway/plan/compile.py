"""TinySQL text -> QueryPlan: parse, bind, settle the epoch, order the selections."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from motebase.gateway.catalog import Catalog, default_catalog
from motebase.gateway.plan import ordering
from motebase.gateway.plan.binder import BoundQuery, PendingAggregate, bind
from motebase.gateway.plan.explain import Explain
from motebase.gateway.plan.lifetime import (
    BatteryState,
    LifetimeEstimate,
    estimate_lifetime,
    period_units,
)
from motebase.gateway.plan.model import (
    DEFAULT_EPOCH_MS,
    EPOCH_ONCE_UNITS,
    MS_PER_EPOCH_UNIT,
    OutputAction,
    PlanAggregate,
    PlanExpression,
    PlanSelection,
    QueryPlan,
)
from motebase.gateway.plan.overflow import overflow_notes
from motebase.gateway.plan.pushdown import decide_pushdown
from motebase.gateway.plan.rowexpr import RowRef
from motebase.gateway.protocol.aggregates import WINDOWED, AggOp
from motebase.gateway.protocol.query import COMMAND_NAME_LEN
from motebase.gateway.tinysql import ast
from motebase.gateway.tinysql.errors import TinySQLError
from motebase.gateway.tinysql.parser import EPOCH_UNITS, TIME_UNITS, parse_statement

#: The tools accept EPOCH DURATION n for 64 < n (SensorQueryer.validEpochDur).
MIN_EPOCH_MS_EXCLUSIVE = 64
#: 0x7FFF units means ONCE, so 0x7FFE x 10 ms is the longest epoch the wire carries.
MAX_EPOCH_UNITS = EPOCH_ONCE_UNITS - 1
MAX_NUM_EPOCHS = 0x7FFF
MAX_AGG_ARG = 255
#: Largest w - s of a window: its TinyDB state (9 bytes + the ring) fills a 25-byte record.
MAX_WINAVG_RING = 4
MAX_WINDOW_RING = 8
#: CmdBufInfo.param, the OUTPUT ACTION argument, is a 16-bit signed integer.
INT16 = (-32768, 32767)


@dataclass(frozen=True)
class _Timing:
    requested_ms: float | None  # None: ONCE
    units: int
    lifetime: LifetimeEstimate | None
    notes: tuple[str, ...] = ()


def compile_query(
    sql: str,
    *,
    catalog: Catalog | None = None,
    optimize: bool = True,
    battery: BatteryState | None = None,
    children: int = 0,
) -> QueryPlan:
    """Compile one SELECT into a plan; raises :class:`TinySQLError`.

    ``optimize=False`` keeps the TinyDB tools' expression order (byte-identical messages);
    ``battery`` and ``children`` (result messages the node receives per epoch) feed the
    LIFETIME computation.
    """
    statement = parse_statement(sql)
    if isinstance(statement, ast.StopQuery):
        raise TinySQLError(
            "STOP QUERY stops a running query; it compiles to no query messages",
            statement.pos.line,
            statement.pos.column,
            "SELECT",
        )
    catalog = catalog or default_catalog()
    bound = bind(statement, catalog)
    selections = [_with_selectivity(s, bound) for s in bound.selections]
    timing = _timing(bound, catalog, battery or BatteryState.full(catalog.energy), children)
    aggregates = [_resolve_aggregate(a, bound, timing) for a in bound.aggregates]

    needed = [f.name for f in bound.fields]
    naive_order = tuple(reversed(range(len(selections))))  # the tools insert at the front
    naive = ordering.estimate("tools' order", selections, naive_order, bound.attributes, needed)
    chosen = naive
    if optimize:
        candidate = ordering.estimate(
            "optimised",
            selections,
            _cheapest_from(naive_order, selections, bound),
            bound.attributes,
            needed,
        )
        if candidate.energy_uj < naive.energy_uj - 1e-9:
            chosen = candidate
    sample_all = ordering.estimate(
        "sample all first (NO INTERLEAVE)", [], (), bound.attributes, needed
    )

    expressions: list[PlanExpression] = [
        replace(selections[i], expr_idx=k) for k, i in enumerate(chosen.selection_order)
    ]
    expressions += [replace(a, expr_idx=len(expressions) + k) for k, a in enumerate(aggregates)]
    plan_aggregates = tuple(e for e in expressions if isinstance(e, PlanAggregate))
    passing = math.prod(s.selectivity for s in selections)
    num_epochs = _num_epochs(statement, timing)
    explanation = Explain(
        sql=sql,
        fields=tuple(bound.fields),
        expressions=tuple(expressions),
        requested_epoch_ms=timing.requested_ms,
        epoch_units=timing.units,
        num_epochs=num_epochs,
        chosen=chosen,
        naive=naive,
        sample_all=sample_all,
        selections_in_source_order=tuple(selections),
        optimized=optimize,
        pushdown=decide_pushdown(plan_aggregates, chosen, passing, bound.attributes),
        lifetime=timing.lifetime,
        notes=timing.notes + _notes(bound) + overflow_notes(expressions, bound.attributes),
    )
    return QueryPlan(
        sql=sql,
        fields=tuple(bound.fields),
        expressions=tuple(expressions),
        group_by=bound.group.attribute if bound.group else None,
        epoch_ms=None if timing.requested_ms is None else timing.units * MS_PER_EPOCH_UNIT,
        epoch_units=timing.units,
        num_epochs=num_epochs,
        no_interleave=statement.no_interleave,
        output_action=_output_action(statement.output_action),
        outputs=tuple(bound.outputs),
        having=bound.having,
        optimized=optimize,
        explanation=explanation,
    )


def _output_action(clause: ast.OutputAction | None) -> OutputAction | None:
    """The BUFFER part's command, refused here when CmdBufInfo cannot carry it, so that
    `mote explain` rejects what the encoder would."""
    if clause is None:
        return None
    name, argument, pos = clause.command, clause.argument, clause.pos
    try:
        size = len(name.encode("latin-1"))
    except UnicodeEncodeError:
        size = None
    if size is None or size > COMMAND_NAME_LEN:
        raise TinySQLError(
            f"OUTPUT ACTION {name}: the query message carries a command name of at most "
            f"{COMMAND_NAME_LEN} Latin-1 characters (CmdBufInfo.name is char[{COMMAND_NAME_LEN}])",
            pos.line,
            pos.column,
            f"a command name of at most {COMMAND_NAME_LEN} characters",
        )
    if argument is not None and not INT16[0] <= argument <= INT16[1]:
        raise TinySQLError(
            f"OUTPUT ACTION {name}({argument}): the argument does not fit 16 bits",
            pos.line,
            pos.column,
            "an integer between -32768 and 32767",
        )
    return OutputAction(name, argument)


def _with_selectivity(selection: PlanSelection, bound: BoundQuery) -> PlanSelection:
    attribute = bound.attributes[selection.attribute]
    return replace(
        selection,
        selectivity=ordering.selectivity(attribute, selection.arith, selection.op, selection.value),
    )


def _cheapest_from(
    naive_order: tuple[int, ...], selections: list[PlanSelection], bound: BoundQuery
) -> tuple[int, ...]:
    """The cheapest order, ties broken in favour of the tools' order."""
    in_naive_order = [selections[i] for i in naive_order]
    return tuple(naive_order[k] for k in ordering.cheapest_order(in_naive_order, bound.attributes))


# --- epoch --------------------------------------------------------------------------------


def _timing(bound: BoundQuery, catalog: Catalog, battery: BatteryState, children: int) -> _Timing:
    timing = bound.query.timing
    if isinstance(timing, ast.Once):
        return _Timing(None, EPOCH_ONCE_UNITS, None)
    if isinstance(timing, ast.Lifetime):
        return _lifetime_timing(timing, bound, catalog, battery, children)
    if timing is None:
        return _Timing(DEFAULT_EPOCH_MS, DEFAULT_EPOCH_MS // MS_PER_EPOCH_UNIT, None)
    ms = _milliseconds(timing.period)
    if ms <= MIN_EPOCH_MS_EXCLUSIVE or ms // MS_PER_EPOCH_UNIT > MAX_EPOCH_UNITS:
        raise TinySQLError(
            f"an epoch of {ms:g} ms is outside what the wire carries: more than "
            f"{MIN_EPOCH_MS_EXCLUSIVE} ms and at most {MAX_EPOCH_UNITS * 10 + 9} ms "
            f"(epochDuration counts 10-ms units; 0x7fff means ONCE)",
            timing.period.pos.line,
            timing.period.pos.column,
            "a shorter epoch",
        )
    return _Timing(ms, int(ms // MS_PER_EPOCH_UNIT), None)


def _lifetime_timing(
    clause: ast.Lifetime, bound: BoundQuery, catalog: Catalog, battery: BatteryState, children: int
) -> _Timing:
    if clause.duration.unit is None:
        raise TinySQLError(
            "LIFETIME needs a unit",
            clause.duration.pos.line,
            clause.duration.pos.column,
            "a unit such as days or hours",
        )
    lifetime_ms = _milliseconds(clause.duration)
    if lifetime_ms <= 0:
        # The sample period is the battery's energy spread over the lifetime: none to spread.
        raise TinySQLError(
            f"LIFETIME {clause.duration.value:g} {clause.duration.unit.lower()} must be "
            "longer than zero",
            clause.pos.line,
            clause.pos.column,
            "a lifetime such as 30 days",
        )
    min_period = None if clause.min_sample_rate is None else _rate_period(clause.min_sample_rate)
    estimate = estimate_lifetime(
        lifetime_ms,
        [bound.attributes[f.name] for f in bound.fields],
        catalog.energy,
        battery,
        children=children,
        aggregate=bound.is_aggregate,
        min_rate_period_ms=min_period,
    )
    pos = clause.pos
    if not estimate.feasible:
        raise TinySQLError(
            f"LIFETIME {clause.duration.value:g} {clause.duration.unit.lower()} cannot be met "
            f"at any sample period: the slot schedule keeps a {estimate.role.split(',')[0]} "
            f"awake {estimate.awake_fraction:.1%} of the time ({estimate.floor_mw:.2f} mW), "
            f"so the battery ({estimate.c_rem_j:,.0f} J) lasts at most "
            f"{estimate.max_lifetime_h:,.0f} h",
            pos.line,
            pos.column,
            f"a lifetime under {estimate.max_lifetime_h:,.0f} hours",
        )
    if not estimate.meets_min_rate:
        rate = clause.min_sample_rate
        assert rate is not None and min_period is not None
        raise TinySQLError(
            f"LIFETIME cannot be met at MIN SAMPLE RATE: the battery allows one sample every "
            f"{estimate.period_ms / 1000.0:,.3f} s, the minimum rate needs one every "
            f"{min_period / 1000.0:,.3f} s",
            rate.pos.line,
            rate.pos.column,
        )
    units = period_units(estimate.period_ms)
    notes: list[str] = []
    minimum_units = MIN_EPOCH_MS_EXCLUSIVE // MS_PER_EPOCH_UNIT + 1
    if units < minimum_units:
        notes.append(
            f"the battery allows a {estimate.period_ms:.1f} ms period; using the "
            f"shortest epoch the tools accept, {minimum_units * 10} ms"
        )
        units = minimum_units
    if units > MAX_EPOCH_UNITS:
        raise TinySQLError(
            f"LIFETIME needs one sample every {estimate.period_ms / 1000.0:,.1f} s, longer "
            f"than the longest epoch the wire carries ({MAX_EPOCH_UNITS * 10 / 1000.0:g} s)",
            pos.line,
            pos.column,
        )
    return _Timing(estimate.period_ms, units, estimate, tuple(notes))


def _rate_period(rate: ast.TimeValue) -> float:
    """MIN SAMPLE RATE r: r samples per second, or with a unit one sample per r."""
    if rate.unit is not None:
        return _milliseconds(rate)
    if rate.value <= 0:
        raise TinySQLError(
            "MIN SAMPLE RATE must be positive", rate.pos.line, rate.pos.column, "samples per second"
        )
    return 1000.0 / rate.value


def _milliseconds(value: ast.TimeValue) -> float:
    return float(value.value) * (TIME_UNITS[value.unit] if value.unit else 1.0)


def _num_epochs(query: ast.SelectQuery, timing: _Timing) -> int | None:
    clause = query.for_clause
    if clause is None:
        return None
    count, pos = clause.count, clause.pos
    if timing.requested_ms is None:
        raise TinySQLError("FOR cannot be combined with ONCE", pos.line, pos.column)
    if count.unit is None or count.unit in EPOCH_UNITS:
        if isinstance(count.value, float):
            raise TinySQLError(
                "FOR needs a whole number of epochs", count.pos.line, count.pos.column, "an integer"
            )
        epochs = count.value
    else:
        epochs = math.ceil(_milliseconds(count) / (timing.units * MS_PER_EPOCH_UNIT) - 1e-9)
    if not 1 <= epochs <= MAX_NUM_EPOCHS:
        raise TinySQLError(
            f"FOR {epochs} epochs is outside 1..{MAX_NUM_EPOCHS}",
            count.pos.line,
            count.pos.column,
            "a positive number of epochs",
        )
    return int(epochs)


# --- aggregates ---------------------------------------------------------------------------


def _resolve_aggregate(
    pending: PendingAggregate, bound: BoundQuery, timing: _Timing
) -> PlanAggregate:
    definition = pending.definition
    args = tuple(_epochs_argument(arg, definition.name, timing) for arg in pending.raw_args)
    _check_window(definition.name, definition.op_id, args, pending.pos)
    return PlanAggregate(
        expr_idx=-1,
        name=definition.name,
        op_id=definition.op_id,
        attribute=pending.attribute,
        field_index=pending.field_index,
        args=args,
        temporal=definition.temporal,
        arith=pending.arith,
        group=bound.group,
        column=pending.column,
        hidden=pending.hidden,
    )


def _check_window(name: str, op_id: int, args: tuple[int, ...], pos: ast.Pos) -> None:
    """Windows the motes refuse (firmware/ops/agg.h agg_check): no epochs, no slide, or a
    ring of w - s epochs that a TinyDB record cannot carry."""
    if op_id not in WINDOWED or len(args) < 2:
        return
    window, slide = args[0], args[1]
    ring_max = MAX_WINAVG_RING if op_id == AggOp.WINAVG else MAX_WINDOW_RING
    if window == 0 or slide == 0:
        problem = "a window of 0 epochs" if window == 0 else "a slide of 0 epochs"
    elif window - slide > ring_max:
        problem = f"a window more than {ring_max} epochs longer than its slide"
    else:
        return
    raise TinySQLError(
        f"{name}: motes refuse {problem} (window {window}, slide {slide} epochs)",
        pos.line,
        pos.column,
        "window and slide of at least one epoch",
    )


def _epochs_argument(arg: ast.Number, aggregate: str, timing: _Timing) -> int:
    """A constant argument in epochs: as written, or a duration over the sample period."""
    if arg.unit is None:
        value = arg.value
    elif timing.requested_ms is None:
        raise TinySQLError(
            f"{aggregate}: a duration argument needs a sample period, and a ONCE query has none",
            arg.pos.line,
            arg.pos.column,
        )
    else:
        value = max(
            1, round(float(arg.value) * TIME_UNITS[arg.unit] / (timing.units * MS_PER_EPOCH_UNIT))
        )
    if isinstance(value, float) or not 0 <= value <= MAX_AGG_ARG:
        raise TinySQLError(
            f"{aggregate}: argument {arg.value}{arg.unit or ''} must be a whole "
            f"number of epochs in 0..{MAX_AGG_ARG}",
            arg.pos.line,
            arg.pos.column,
            "an integer argument",
        )
    return int(value)


def _notes(bound: BoundQuery) -> tuple[str, ...]:
    notes = []
    tuple_bytes = sum(bound.attributes[f.name].size for f in bound.fields)
    if not bound.is_aggregate and tuple_bytes > 22:
        notes.append(
            f"result tuples carry {tuple_bytes} bytes of fields; an unmodified "
            "TinyDB 1.x mote overflows its 22-byte tuple space (quirk A11)"
        )
    if any(not isinstance(o.value, RowRef) for o in bound.outputs):
        notes.append(
            "select-list arithmetic is applied by the gateway to each result (the "
            "query message cannot carry it)"
        )
    if bound.query.no_interleave:
        notes.append("NO INTERLEAVE is recorded in the plan; the query message has no bit for it")
    return tuple(notes)
