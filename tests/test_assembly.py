"""Result assembly: tuples, aggregate buckets, ordering, duplicates, HAVING, GROUP BY."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from motebase.gateway.assembly import (
    AggregateResult,
    AggregateRow,
    Reading,
    RegisteredQuery,
    ResultAssembler,
    Row,
    TupleResult,
)
from motebase.gateway.plan import compile_query

START = 1_000_000.0


def assembler_for(sql: str, qid: int = 1, **kwargs: float) -> ResultAssembler:
    assembler = ResultAssembler(**kwargs)  # type: ignore[arg-type]
    assembler.register(RegisteredQuery(qid, compile_query(sql), START, sql))
    return assembler


def max_state(value: int, node: int = 0) -> bytes:
    """MAX partial state: value int16 LE, id int16 LE."""
    return value.to_bytes(2, "little", signed=True) + node.to_bytes(2, "little")


def avg_state(total: int, count: int) -> bytes:
    return total.to_bytes(2, "little", signed=True) + count.to_bytes(2, "little")


def record(
    epoch: int, expr_idx: int, state: bytes, group: int = 0, qid: int = 1, origin: int = 0
) -> AggregateResult:
    return AggregateResult(qid, epoch, origin, group, expr_idx, state)


# -- tuples --------------------------------------------------------------------------


def test_tuple_becomes_a_row_at_once_with_identity_and_event_time() -> None:
    asm = assembler_for("SELECT nodeid, light FROM sensors EPOCH DURATION 2000")
    rows = asm.add(TupleResult(1, 3, 7, {"nodeid": 7, "light": 412}), receive_time=START + 6.5)
    assert rows == [
        Reading(
            query_id=1,
            epoch=3,
            node_id=7,
            epoch_time=START + 3 * 2.0,
            receive_time=START + 6.5,
            values={"nodeid": 7, "light": 412},
            columns={"nodeid": 7, "light": 412},
        )
    ]


def test_duplicate_tuple_of_the_same_node_and_epoch_is_emitted_once() -> None:
    asm = assembler_for("SELECT nodeid, light FROM sensors")
    first = TupleResult(1, 2, 4, {"nodeid": 4, "light": 10})
    assert len(asm.add(first, START)) == 1
    assert asm.add(first, START + 0.1) == []
    assert len(asm.add(TupleResult(1, 2, 5, {"nodeid": 5, "light": 11}), START)) == 1
    assert len(asm.add(TupleResult(1, 3, 4, {"nodeid": 4, "light": 12}), START)) == 1
    assert asm.stats.duplicates == 1
    assert asm.stats.tuples == 3


def test_out_of_order_tuples_are_still_emitted() -> None:
    asm = assembler_for("SELECT nodeid, light FROM sensors")
    asm.add(TupleResult(1, 9, 4, {"nodeid": 4, "light": 1}), START)
    late = asm.add(TupleResult(1, 7, 4, {"nodeid": 4, "light": 2}), START)
    assert [r.epoch for r in late] == [7]


def test_select_list_arithmetic_is_applied_by_the_gateway() -> None:
    asm = assembler_for("SELECT light + 10 FROM sensors")
    (row,) = asm.add(TupleResult(1, 1, 2, {"light": 90}), START)
    assert isinstance(row, Reading)
    assert row.values == {"light": 90}
    assert row.columns == {"light + 10": 100}


def test_null_fields_stay_null() -> None:
    asm = assembler_for("SELECT nodeid, light FROM sensors")
    (row,) = asm.add(TupleResult(1, 1, 2, {"nodeid": 2, "light": None}), START)
    assert row.columns == {"nodeid": 2, "light": None}


def test_results_of_unknown_queries_are_counted_and_dropped() -> None:
    asm = assembler_for("SELECT light FROM sensors", qid=1)
    assert asm.add(TupleResult(9, 1, 2, {"light": 1}), START) == []
    assert asm.stats.unknown_query == 1


# -- aggregates ----------------------------------------------------------------------


def test_epoch_bucket_closes_when_a_later_epoch_starts() -> None:
    asm = assembler_for("SELECT MAX(light), AVG(temp) FROM sensors EPOCH DURATION 1000")
    assert asm.add(record(1, 0, max_state(500, 3)), START + 1) == []
    assert asm.add(record(1, 1, avg_state(30, 4)), START + 1) == []
    rows = asm.add(record(2, 0, max_state(600, 4)), START + 2)
    assert len(rows) == 1
    row = rows[0]
    assert isinstance(row, AggregateRow)
    assert (row.query_id, row.epoch, row.group) == (1, 1, 0)
    assert row.columns == {"MAX(light)": 500, "AVG(temp)": 7.5}
    assert [a.value for a in row.aggregates] == [500, 7.5]
    assert row.aggregates[0].partial == max_state(500, 3)
    assert row.epoch_time == START + 1.0


def test_records_of_an_older_epoch_within_the_window_merge_into_its_bucket() -> None:
    asm = assembler_for("SELECT MAX(light), AVG(temp) FROM sensors", reorder_window=3)
    asm.add(record(5, 0, max_state(10)), START)
    asm.add(record(6, 0, max_state(20)), START)  # epoch 5 lacks AVG: stays open
    rows = asm.add(record(5, 1, avg_state(9, 3)), START)  # late, completes epoch 5
    assert [(r.epoch, r.columns) for r in rows] == [(5, {"MAX(light)": 10, "AVG(temp)": 3.0})]


def test_incomplete_bucket_closes_once_results_run_past_the_window() -> None:
    asm = assembler_for("SELECT MAX(light), AVG(temp) FROM sensors", reorder_window=2)
    asm.add(record(1, 0, max_state(10)), START)
    assert asm.add(record(3, 0, max_state(30)), START) == []
    rows = asm.add(record(4, 0, max_state(40)), START)
    assert [(r.epoch, r.columns) for r in rows] == [(1, {"MAX(light)": 10, "AVG(temp)": None})]


def test_a_row_does_not_wait_for_a_window_that_does_not_report_in_its_epoch() -> None:
    # WINSUM(light, 4, 2) reports at even epochs only (wire format §9.3): epoch 1's row is
    # complete with MAX alone and closes as soon as epoch 2 begins, in epoch order.
    asm = assembler_for("SELECT MAX(light), WINSUM(light, 4, 2) FROM sensors", reorder_window=3)
    assert asm.add(record(1, 0, max_state(10)), START) == []
    rows = asm.add(record(2, 0, max_state(20)), START)
    assert [(r.epoch, r.columns) for r in rows] == [
        (1, {"MAX(light)": 10, "WINSUM(light, 4, 2)": None})
    ]
    assert asm.add(record(3, 0, max_state(30)), START) == []  # epoch 2 waits for its window


def test_records_older_than_the_window_or_for_closed_buckets_are_late() -> None:
    asm = assembler_for("SELECT MAX(light) FROM sensors", reorder_window=2)
    asm.add(record(1, 0, max_state(1)), START)
    asm.add(record(2, 0, max_state(2)), START)  # closes epoch 1
    assert asm.add(record(1, 0, max_state(99)), START) == []  # bucket already closed
    asm.add(record(10, 0, max_state(3)), START)
    assert asm.add(record(7, 0, max_state(4)), START) == []  # older than 10 - 2
    assert asm.stats.late == 2


def test_a_second_record_for_the_same_expression_is_ignored() -> None:
    asm = assembler_for("SELECT MAX(light) FROM sensors")
    asm.add(record(1, 0, max_state(50)), START)
    asm.add(record(1, 0, max_state(70)), START)
    (row,) = asm.flush()
    assert row.columns == {"MAX(light)": 50}
    assert asm.stats.duplicates == 1


def test_group_by_gives_one_row_per_group_and_epoch() -> None:
    sql = "SELECT MAX(light) FROM sensors GROUP BY nodeid EPOCH DURATION 1000"
    asm = assembler_for(sql)
    asm.add(record(1, 0, max_state(11), group=1), START)
    asm.add(record(1, 0, max_state(22), group=2), START)
    asm.add(record(1, 0, max_state(33), group=2), START)  # duplicate of group 2
    rows = asm.add(record(2, 0, max_state(44), group=1), START)
    assert sorted((r.group, r.columns["MAX(light)"]) for r in rows) == [(1, 11), (2, 22)]
    assert all(isinstance(r, AggregateRow) for r in rows)


def test_having_filters_finalized_groups() -> None:
    sql = "SELECT AVG(light) FROM sensors GROUP BY nodeid HAVING AVG(light) > 100"
    asm = assembler_for(sql)
    asm.add(record(1, 0, avg_state(300, 2), group=1), START)  # 150: kept
    asm.add(record(1, 0, avg_state(100, 2), group=2), START)  # 50: filtered
    rows = asm.flush()
    assert [(r.group, r.columns) for r in rows] == [(1, {"AVG(light)": 150.0})]
    assert asm.stats.filtered_by_having == 1


def test_having_on_an_aggregate_that_is_not_selected() -> None:
    sql = "SELECT MAX(light) FROM sensors GROUP BY nodeid HAVING MIN(light) > 5"
    plan = compile_query(sql)
    (hidden,) = [a for a in plan.aggregates if a.hidden]
    (shown,) = [a for a in plan.aggregates if not a.hidden]
    asm = assembler_for(sql)
    asm.add(record(1, shown.expr_idx, max_state(50), group=1), START)
    asm.add(record(1, hidden.expr_idx, max_state(9), group=1), START)
    asm.add(record(1, shown.expr_idx, max_state(60), group=2), START)
    asm.add(record(1, hidden.expr_idx, max_state(2), group=2), START)
    rows = asm.flush()
    assert [(r.group, r.columns) for r in rows] == [(1, {"MAX(light)": 50})]
    assert [a.name for a in rows[0].aggregates] == ["MAX"]  # the hidden MIN is not output


def test_open_buckets_close_after_the_timeout() -> None:
    asm = assembler_for("SELECT MAX(light) FROM sensors", close_timeout=5.0)
    asm.add(record(1, 0, max_state(8)), START)
    assert asm.expire(START + 4.9) == []
    (row,) = asm.expire(START + 5.0)
    assert row.columns == {"MAX(light)": 8}
    assert asm.add(record(1, 0, max_state(9)), START + 6) == []  # closed: late


def test_malformed_records_are_counted_not_raised() -> None:
    asm = assembler_for("SELECT MAX(light) FROM sensors")
    assert asm.add(record(1, 5, max_state(1)), START) == []  # no expression 5
    assert asm.add(record(1, 0, b"\x01"), START) == []  # truncated state
    assert asm.stats.malformed == 2


def test_unregister_flushes_the_open_buckets() -> None:
    asm = assembler_for("SELECT COUNT(light) FROM sensors")
    asm.add(record(4, 0, max_state(25)), START)
    (row,) = asm.unregister(1)
    assert (row.epoch, row.columns) == (4, {"COUNT(light)": 25})
    assert asm.add(record(5, 0, max_state(25)), START) == []


def test_epochs_seen_tracks_first_and_latest() -> None:
    asm = assembler_for("SELECT light FROM sensors")
    assert asm.epochs_seen(1) is None
    asm.add(TupleResult(1, 4, 1, {"light": 1}), START)
    asm.add(TupleResult(1, 6, 1, {"light": 1}), START)
    asm.add(TupleResult(1, 3, 1, {"light": 1}), START)
    assert asm.epochs_seen(1) == (3, 6)


def test_window_must_fit_inside_the_duplicate_horizon() -> None:
    with pytest.raises(ValueError):
        ResultAssembler(reorder_window=10, horizon=10)


def test_epochs_keep_counting_past_the_16_bit_wrap() -> None:
    asm = assembler_for("SELECT MAX(light) FROM sensors EPOCH DURATION 1000")
    asm.add(record(65534, 0, max_state(1)), START)
    rows = asm.add(record(65535, 0, max_state(2)), START)
    rows += asm.add(record(0, 0, max_state(3)), START)  # the wire wrapped
    rows += asm.add(record(1, 0, max_state(4)), START)
    rows += asm.add(record(65535, 0, max_state(9)), START)  # a late duplicate, not a new epoch
    assert [(r.epoch, r.columns["MAX(light)"]) for r in rows] == [
        (65534, 1),
        (65535, 2),
        (65536, 3),
    ]
    assert rows[-1].epoch_time == START + 65536.0
    assert asm.stats.late == 1


def test_tuples_across_the_wrap_are_not_duplicates() -> None:
    asm = assembler_for("SELECT light FROM sensors")
    asm.add(TupleResult(1, 65535, 2, {"light": 1}), START)
    (row,) = asm.add(TupleResult(1, 0, 2, {"light": 2}), START)
    assert row.epoch == 65536


# -- the wide layout (plan.wide_states) ------------------------------------------------


def wide_assembler_for(sql: str, qid: int = 1) -> ResultAssembler:
    assembler = ResultAssembler()
    plan = replace(compile_query(sql), wide_states=True)
    assembler.register(RegisteredQuery(qid, plan, START, sql))
    return assembler


def wide_avg_state(total: int, count: int) -> bytes:
    """Wide AVG / EXPAVG partial state: sum int32 LE, count uint32 LE."""
    return total.to_bytes(4, "little", signed=True) + count.to_bytes(4, "little")


def test_a_wide_plan_reads_32_bit_states() -> None:
    asm = wide_assembler_for("SELECT SUM(light), AVG(light) FROM sensors EPOCH DURATION 1000")
    asm.add(record(1, 0, (80800).to_bytes(4, "little", signed=True)), START)
    asm.add(record(1, 1, wide_avg_state(80800, 101)), START)
    (row,) = asm.flush()
    assert isinstance(row, AggregateRow)
    assert row.columns == {"SUM(light)": 80800, "AVG(light)": 800.0}
    assert row.aggregates[0].partial == (80800).to_bytes(4, "little")


def test_a_narrow_state_in_a_wide_plan_is_malformed() -> None:
    asm = wide_assembler_for("SELECT AVG(light) FROM sensors")
    assert asm.add(record(1, 0, avg_state(10, 1)), START) == []  # 4 bytes, needs 8
    assert asm.stats.malformed == 1


def test_wide_expavg_is_smoothed_per_group_in_epoch_order() -> None:
    # EXPAVG(14): v += (epoch average - v) / 4, from 0, once per epoch with readings
    sql = "select expavg(14, light), nodeid group by nodeid epoch duration 1000"
    asm = wide_assembler_for(sql)
    column = "expavg(14, light)"
    rows: list[Row] = []
    for epoch, group, total, count in [
        (1, 1, 800, 2),  # group 1 averages 400 ...
        (1, 2, 100, 1),
        (2, 1, 1200, 3),
        (3, 2, 300, 1),  # group 1 has no readings in epoch 3: no row, v unchanged
        (4, 1, 1600, 2),
    ]:
        rows += asm.add(record(epoch, 0, wide_avg_state(total, count), group=group), START)
    rows += asm.flush()
    aggregate_rows = [r for r in rows if isinstance(r, AggregateRow)]
    assert [(r.epoch, r.group, r.columns[column]) for r in aggregate_rows] == [
        (1, 1, 100.0),
        (1, 2, 25.0),
        (2, 1, 175.0),
        (3, 2, 25.0 + (300.0 - 25.0) / 4),
        (4, 1, 175.0 + (800.0 - 175.0) / 4),
    ]
    assert aggregate_rows[0].aggregates[0].partial == wide_avg_state(800, 2)  # raw record kept


def wide_count(n: int) -> bytes:
    return n.to_bytes(4, "little")


def wide_extreme(value: int, node: int) -> bytes:
    return value.to_bytes(4, "little", signed=True) + node.to_bytes(2, "little")


def test_a_groups_records_from_different_origins_merge_in_the_wide_layout() -> None:
    # A group a mote had no slot for comes up in records of its own (firmware/core/
    # processing.c): the root's and two spilled ones, each from the node that made it.
    asm = wide_assembler_for(
        "SELECT nodeid, COUNT(*), AVG(light), MAX(temp) FROM sensors GROUP BY nodeid"
    )
    for origin, count, total, hottest in [(0, 2, 900, 470), (7, 1, 300, 480), (9, 3, 1200, 460)]:
        asm.add(record(1, 0, wide_count(count), group=5, origin=origin), START)
        asm.add(record(1, 1, wide_avg_state(total, count), group=5, origin=origin), START)
        asm.add(record(1, 2, wide_extreme(hottest, origin), group=5, origin=origin), START)
    asm.add(record(1, 0, wide_count(1), group=5, origin=7), START)  # a duplicate of node 7's
    (row,) = asm.flush()
    assert isinstance(row, AggregateRow)
    assert row.columns == {"nodeid": 5, "COUNT(*)": 6, "AVG(light)": 400.0, "MAX(temp)": 480}
    assert asm.stats.duplicates == 1


def test_a_narrow_group_keeps_its_first_record() -> None:
    # TinyDB motes send one record per group: a second one is a duplicate, never merged.
    asm = assembler_for("SELECT nodeid, COUNT(*) FROM sensors GROUP BY nodeid")
    asm.add(record(1, 0, max_state(2), group=5, origin=0), START)
    asm.add(record(1, 0, max_state(3), group=5, origin=7), START)
    (row,) = asm.flush()
    assert isinstance(row, AggregateRow) and row.columns["COUNT(*)"] == 2
    assert asm.stats.duplicates == 1


def test_narrow_expavg_reads_the_motes_smoothed_value() -> None:
    asm = assembler_for("select expavg(14, light) epoch duration 1000")
    asm.add(record(1, 0, (175).to_bytes(2, "little") + b"\x00"), START)
    (row,) = asm.flush()
    assert row.columns == {"expavg(14, light)": 175}


def test_duplicates_are_recognised_within_the_horizon_and_forgotten_past_it() -> None:
    """The duplicate filter against its former form, a set of (origin, epoch) rebuilt
    without the keys past the horizon at every new latest epoch (issue 14 keys it by
    epoch): a random stream of new, repeated, late and very late tuples."""
    horizon = 8
    asm = assembler_for("SELECT nodeid, light FROM sensors", reorder_window=2, horizon=horizon)
    rng = random.Random(14)
    seen: set[tuple[int, int]] = set()
    latest = -1
    for _ in range(3000):
        origin = rng.randrange(5)
        epoch = max(1, latest + rng.randrange(-2 * horizon, 3))
        duplicate = (origin, epoch) in seen
        if not duplicate:
            seen.add((origin, epoch))
            if epoch > latest:
                latest = epoch
                seen = {k for k in seen if k[1] >= latest - horizon}
        rows = asm.add(TupleResult(1, epoch, origin, {"nodeid": origin, "light": 1}), START)
        assert (rows == []) == duplicate
