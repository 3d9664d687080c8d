"""The channel-capacity rule `mote explain --nodes` states (gateway/plan/capacity.py)."""

from __future__ import annotations

from click.testing import CliRunner

from motebase.gateway.cli.sql_cmds import explain_cmd
from motebase.gateway.plan import compile_query
from motebase.gateway.plan.capacity import capacity, epoch_intervals


def test_records_per_node_follow_the_interval() -> None:
    # 2.04 s / 4 = 510 ms; 2 records x 50 ms x 5/4 = 125 ms a group: 4 groups
    load = capacity(
        compile_query(
            "SELECT nodeid/4, AVG(light), COUNT(*) FROM sensors GROUP BY nodeid/4 "
            "EPOCH DURATION 2048"
        )
    )
    assert load is not None
    assert (load.records_per_group, load.max_groups, load.grouped) == (2, 4, True)
    # at 4 s the same query carries 8 groups (4.09 s / 4 = 1022 ms; 1022 // 125)
    wider = capacity(
        compile_query(
            "SELECT nodeid/4, AVG(light), COUNT(*) FROM sensors GROUP BY nodeid/4 "
            "EPOCH DURATION 4096"
        )
    )
    assert wider is not None and wider.max_groups == 8


def test_intervals_are_the_firmwares() -> None:
    # the values firmware/tests/test_schedule.c checks for sched_intervals
    periods = (1020, 1530, 1540, 1600, 2040, 4090, 6000, 8190, 31000)
    assert [epoch_intervals(p) for p in periods] == [8, 8, 4, 4, 4, 4, 6, 8, 8]


def test_tuples_are_bounded_by_the_busiest_root_child() -> None:
    load = capacity(compile_query("SELECT nodeid, light FROM sensors EPOCH DURATION 1024"), 150)
    assert load is not None
    # tuples of 4 value bytes: 14 + 4 for the first, 4 + 4 for three more, 42 of 42 bytes;
    # 1.02 s x 4 / 40 ms
    assert (load.records_per_group, load.tuples_per_frame, load.max_subtree) == (0, 4, 102)
    assert "fits only if the busiest root child carries at most 102 of 149" in "\n".join(
        load.describe()
    )
    small = capacity(compile_query("SELECT nodeid, light FROM sensors EPOCH DURATION 1024"), 25)
    assert small is not None and small.describe()[-1] == "fits any tree of 25 nodes"


def test_wider_tuples_fewer_to_a_frame() -> None:
    # 4 fields of 2 bytes: 14 + 8, then 5 + 8: two in 42
    sql = "SELECT nodeid, light, temp, voltage FROM sensors EPOCH DURATION 1024"
    load = capacity(compile_query(sql), 100)
    assert load is not None and (load.tuples_per_frame, load.max_subtree) == (2, 51)
    # 2 x 4 + 6 x 2 = 20 value bytes: 14 + 20 leaves 8, less than another item (25)
    fields = "timelo, timehi, nodeid, voltage, light, temp, accel_x, noise"
    wide = capacity(compile_query(f"SELECT {fields} FROM sensors EPOCH DURATION 1024"))
    assert wide is not None and wide.tuples_per_frame == 1


def test_a_level_shares_its_interval() -> None:
    # COUNT at 2.04 s: 510 ms / (50 ms x 5/4) = 8 records in an interval, for every node
    # of one level that hears the others (a 30 m range on a 10 m grid has 20 and loses
    # records, docs/radio.md)
    load = capacity(compile_query("SELECT COUNT(*) FROM sensors EPOCH DURATION 2048"))
    assert load is not None and load.max_groups == 8
    assert load.describe()[1] == (
        "the nodes of one level share that interval: it holds the records of 8 of them "
        "(a group each) within radio range of each other; a denser level loses records "
        "(docs/radio.md)"
    )


def test_a_query_that_does_not_fit_one_record_says_so() -> None:
    sql = "SELECT MAX(light), MIN(light), SUM(light), AVG(temp), COUNT(*) FROM sensors"
    load = capacity(compile_query(f"{sql} EPOCH DURATION 512"))
    assert load is not None and load.max_groups == 0
    assert load.describe()[-1].startswith("over capacity")


def test_explain_prints_the_capacity() -> None:
    result = CliRunner().invoke(
        explain_cmd, ["--nodes", "100", "SELECT nodeid, light FROM sensors EPOCH DURATION 4096"]
    )
    assert result.exit_code == 0, result.output
    assert "channel capacity" in result.output
    assert "one root child carries at most 409 nodes" in result.output
    assert "fits any tree of 100 nodes" in result.output
