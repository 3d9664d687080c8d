"""One grammar for every `mote` command (issue 13 §3): durations, `--out -`, `--qid`,
`--group`, the platform list, help on every option, SQL errors with a caret, and output
that pipes (`encode-query | decode`, no truncation when not a terminal)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator
from importlib.metadata import distributions, entry_points
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from scripted_mote import ScriptedMote, TinyDBRoot, tuple_packet

from motebase.gateway.cli.main import build_cli, load, own_entry_points
from motebase.gateway.cli.params import PLATFORMS, Duration, parse_duration
from motebase.gateway.console import UNBOUNDED_WIDTH, make_console
from motebase.gateway.protocol import AmType, parse_query_message, parse_tos_packet
from motebase.spark.cli import _renamed, spark_interval
from motebase.spark.run import GatewayProgress
from motebase.spark.topology import read_positions

MOTE = str(Path(sys.executable).with_name("mote"))  # the installed console script
DURATION_ERROR = "is not a duration: give seconds (90, 1.5) or a number with a unit: " + (
    "500ms, 30s, 2m, 1h, 1d"
)


def mote(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MOTE, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )


def commands(group: click.Group, path: str = "mote") -> Iterator[tuple[str, click.Command]]:
    """Every command of the tree, groups included, with its full name (loaded as `mote`
    loads them: by name, from the entry points)."""
    yield path, group
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            yield from commands(command, f"{path} {name}")
        else:
            yield f"{path} {name}", command


def command_named(name: str) -> click.Command:
    cli = build_cli()
    command = cli.get_command(click.Context(cli), name)
    assert command is not None, name
    return command


def options(name: str) -> dict[str, click.Option]:
    """The options of `mote NAME` by their long name."""
    command = command_named(name)
    return {
        opt: param
        for param in command.params
        if isinstance(param, click.Option)
        for opt in param.opts
        if opt.startswith("--")
    }


def parsed(name: str, *args: str) -> dict[str, object]:
    """What `mote NAME ARGS` parses its options into, without running it."""
    command = command_named(name)
    with command.make_context(name, list(args)) as ctx:
        return dict(ctx.params)


# --- help ---------------------------------------------------------------------------------------


def test_every_option_of_every_command_has_help() -> None:
    missing = [
        f"{path} {param.opts[0]}"
        for path, command in commands(build_cli())
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip()
    ]
    assert missing == []


def test_every_argument_is_named_in_its_command_help() -> None:
    missing = [
        f"{path} {param.human_readable_name}"
        for path, command in commands(build_cli())
        for param in command.params
        if isinstance(param, click.Argument)
        and param.human_readable_name not in (command.help or "")
    ]
    assert missing == []


def test_the_only_hidden_options_are_old_names() -> None:
    hidden = sorted(
        f"{path} {param.opts[0]}"
        for path, command in commands(build_cli())
        for param in command.params
        if isinstance(param, click.Option) and param.hidden
    )
    assert hidden == ["mote spark --query-id", "mote spark --topology"]


# --- durations ----------------------------------------------------------------------------------

DURATION_OPTIONS = [
    ("query", "--duration"),
    ("queries", "--wait"),
    ("listen", "--timeout"),
    ("emulate", "--duration"),
    ("emulate", "--query-after"),
    ("run", "--duration"),
    ("spark", "--duration"),
    ("spark", "--until-idle"),
    ("spark", "--window"),
    ("spark", "--watermark"),
    ("spark", "--join-within"),
    ("spark", "--trigger"),
]


def test_the_duration_options_are_all_there_are() -> None:
    # Any option of a time in seconds is a Duration, and nothing else is.
    found = sorted(
        (path.split()[1], param.opts[0])
        for path, command in commands(build_cli())
        for param in command.params
        if isinstance(param.type, Duration) and not getattr(param, "hidden", False)
    )
    assert found == sorted(DURATION_OPTIONS)
    floats = [
        f"{path} {param.opts[0]}"
        for path, command in commands(build_cli())
        for param in command.params
        if isinstance(param.type, click.types.FloatParamType | click.FloatRange)
    ]
    # What remains a float is not a time: metres, joules, mAh, volts, a fraction.
    assert sorted(floats) == [
        "mote emulate --battery-j",
        "mote emulate --range",
        "mote emulate --spacing",
        "mote explain --battery-mah",
        "mote explain --remaining",
        "mote explain --volts",
        "mote plot topology --spacing",
    ]


REQUIRED = {
    "query": ["SELECT light FROM sensors", "--port", "x"],
    "queries": ["--port", "x"],
    "listen": ["--port", "x"],
    "emulate": [],
    "run": [],
    "spark": ["--log", ".", "--out", "out"],
}


@pytest.mark.parametrize(("command", "option"), DURATION_OPTIONS)
@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1m", 60.0), ("90", 90.0), ("1.5", 1.5), ("30s", 30.0), ("500ms", 0.5), ("1h", 3600.0)],
)
def test_every_duration_option_takes_every_form(
    command: str, option: str, text: str, seconds: float
) -> None:
    name = options(command)[option].name
    assert name is not None
    assert parsed(command, *REQUIRED[command], option, text)[name] == seconds


@pytest.mark.parametrize(("command", "option"), DURATION_OPTIONS)
def test_a_bad_duration_says_what_is_expected(command: str, option: str) -> None:
    result = CliRunner().invoke(build_cli(), [command, *REQUIRED[command], option, "1x"])
    assert result.exit_code == 2
    assert f"Invalid value for '{option}': '1x' {DURATION_ERROR}" in result.output


def test_run_takes_a_duration_in_minutes_from_the_shell(tmp_path: Path) -> None:
    # The report: `mote run --duration 1m` failed with "'1m' is not a valid float".
    result = mote("run", "--duration", "1m", "--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    bad = mote("run", "--duration", "1x", cwd=tmp_path)
    assert bad.returncode == 2
    assert f"Invalid value for '--duration': '1x' {DURATION_ERROR}" in bad.stderr
    assert not (tmp_path / "out").exists()  # refused before anything ran


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("0.25", 0.25), (".5", 0.5), ("2.5m", 150.0), ("1d", 86400.0), (" 3 s ", 3.0)],
)
def test_duration_forms(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "-1", "1 minute", "1e3", "m", "1.2.3", "5 min"])
def test_not_durations(text: str) -> None:
    with pytest.raises(click.BadParameter, match=re.escape(f"{text!r} {DURATION_ERROR}")):
        parse_duration(text)


def test_a_positive_duration_refuses_zero() -> None:
    result = CliRunner().invoke(build_cli(), ["queries", "--port", "x", "--wait", "0s"])
    assert result.exit_code == 2
    assert "Invalid value for '--wait': '0s' is not longer than zero" in result.output


@pytest.mark.parametrize(
    ("seconds", "interval"),
    [
        (60.0, "60 seconds"),
        (30.0, "30 seconds"),
        (0.5, "500 milliseconds"),
        (1.25, "1250 milliseconds"),
    ],
)
def test_spark_windows_get_spark_intervals(seconds: float, interval: str) -> None:
    assert spark_interval(seconds) == interval


def test_spark_window_defaults_are_the_old_ones() -> None:
    params = parsed("spark", *REQUIRED["spark"])
    assert (spark_interval(params["window"]), spark_interval(params["watermark"])) == (  # type: ignore[arg-type]
        "60 seconds",
        "30 seconds",
    )


# --- names --------------------------------------------------------------------------------------


def test_query_ids_are_spelled_qid_everywhere() -> None:
    spelled = {
        f"{path} {opt}"
        for path, command in commands(build_cli())
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden
        for opt in param.opts
        if "query-id" in opt or "qid" in opt
    }
    assert spelled == {
        "mote encode-query --qid",
        "mote plot log --qid",
        "mote plot topology --qid",
        "mote query --qid",
        "mote replay --qid",
        "mote spark --qid",
    }


def test_spark_keeps_query_id_and_topology_as_old_names() -> None:
    params = parsed("spark", *REQUIRED["spark"], "--query-id", "3", "--topology", "README.md")
    assert (params["qid"], params["qid_alias"]) == (None, 3)
    assert _renamed("--qid", None, "--query-id", 3) == 3
    assert _renamed("--qid", 3, "--query-id", None) == 3
    assert _renamed("--qid", 3, "--query-id", 3) == 3
    with pytest.raises(click.UsageError, match="--qid and --query-id \\(its old name\\) disagree"):
        _renamed("--qid", 3, "--query-id", 4)


def test_every_platform_option_offers_the_same_platforms() -> None:
    choices = {
        path: tuple(param.type.choices)
        for path, command in commands(build_cli())
        for param in command.params
        if isinstance(param, click.Option) and param.name == "platform"
    }
    # mote flash programs the images that exist (firmware/avr: mica2, mica2dot).
    assert choices.pop("mote flash") == ("mica2", "mica2dot")
    assert set(choices) == {
        f"mote {name}"
        for name in ("command", "emulate", "listen", "queries", "query", "run", "sf", "stop")
    }
    assert set(choices.values()) == {PLATFORMS}
    assert PLATFORMS == ("mica", "mica2", "mica2dot")


@pytest.mark.parametrize("command", ["query", "stop", "command", "queries", "encode-query"])
@pytest.mark.parametrize(("text", "group"), [("0x7d", 125), ("125", 125), ("0x22", 34), ("7", 7)])
def test_group_takes_hex_or_decimal(command: str, text: str, group: int) -> None:
    args = {"query": ["SELECT light FROM sensors", "--port", "x"], "stop": ["1", "--port", "x"],
            "command": ["reset", "--port", "x"], "queries": ["--port", "x"],
            "encode-query": ["SELECT light FROM sensors"]}[command]  # fmt: skip
    assert parsed(command, *args)["group"] == 0x7D
    assert parsed(command, *args, "--group", text)["group"] == group
    bad = CliRunner().invoke(build_cli(), [command, *args, "--group", "0x100"])
    assert bad.exit_code == 2
    assert "Invalid value for '--group': '0x100' is not a group: 0..255 (0x00..0xff)" in bad.output


@pytest.fixture
def scripted(tmp_path: Path) -> Iterator[ScriptedMote]:
    root = ScriptedMote(tmp_path, TinyDBRoot(running=[1]))
    yield root
    root.close()


def groups_received(root: ScriptedMote, am: AmType, count: int) -> set[int]:
    return {parse_tos_packet(p)[0]["group"] for p in root.wait_for(am, count)}


def test_group_reaches_the_packets_stop_sends(scripted: ScriptedMote, tmp_path: Path) -> None:
    result = mote("stop", "3", "--port", str(scripted.path), "--group", "0x22", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert groups_received(scripted, AmType.QUERY, 5) == {0x22}


def test_group_reaches_the_packets_command_and_queries_send(
    scripted: ScriptedMote, tmp_path: Path
) -> None:
    port = str(scripted.path)
    assert mote("command", "reset", "--port", port, "--group", "9", cwd=tmp_path).returncode == 0
    assert groups_received(scripted, AmType.COMMAND, 1) == {9}
    listed = mote("queries", "--port", port, "--group", "0x10", "--wait", "300ms", cwd=tmp_path)
    # The scripted root answers in the group it was asked in.
    assert (listed.returncode, listed.stdout) == (0, "1\n")
    assert groups_received(scripted, AmType.STATUS, 1) == {0x10}


# --- --out - ------------------------------------------------------------------------------------

SELECT = "SELECT nodeid, light FROM sensors EPOCH DURATION 1024"


def feed_tuples(root: ScriptedMote, epochs: int) -> threading.Thread:
    def run() -> None:
        qid = parse_tos_packet(root.wait_for(AmType.QUERY, 2)[0])[1][0]
        for epoch in range(1, epochs + 1):
            for node in (2, 1):  # the table sorts them
                root.send(tuple_packet(qid, epoch, node, [node, 10 * epoch + node], [4, 4]))
            time.sleep(0.05)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_query_out_dash_writes_json_lines_to_stdout_only(
    scripted: ScriptedMote, tmp_path: Path
) -> None:
    feeder = feed_tuples(scripted, epochs=30)
    result = mote("query", SELECT, "--port", str(scripted.path), "--out", "-", "--epochs", "2",
                  cwd=tmp_path)  # fmt: skip
    feeder.join(timeout=10)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["kind"], r["epoch"], r["node_id"], r["values"]) for r in lines[:4]] == [
        ("reading", 1, 2, {"nodeid": 2, "light": 12}),
        ("reading", 1, 1, {"nodeid": 1, "light": 11}),
        ("reading", 2, 2, {"nodeid": 2, "light": 22}),
        ("reading", 2, 1, {"nodeid": 1, "light": 21}),
    ]
    # The announcements, the table and the summary went to stderr.
    assert "query 2 started" in result.stderr
    assert "tuples" in result.stderr
    assert "nodeid" in result.stderr  # the table's header
    assert not (tmp_path / "-").exists()


def test_emulate_out_dash_writes_json_lines_to_stdout_only(tmp_path: Path) -> None:
    result = mote("emulate", "--nodes", "4", "--lossless", "--query-after", "20s", "--epochs", "2",
                  "--query", "SELECT nodeid, light FROM sensors SAMPLE PERIOD 1s", "--out", "-",
                  cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines and {line["kind"] for line in lines} == {"reading"}
    assert {line["node_id"] for line in lines} == {0, 1, 2, 3}
    assert "wrote stdout" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_emulate_refuses_out_and_truth_both_on_stdout(tmp_path: Path) -> None:
    result = mote("emulate", "--nodes", "2", "--query", "SELECT light FROM sensors",
                  "--out", "-", "--truth", "-", cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2
    assert "--out - and --truth - would mix on stdout: give one a file" in result.stderr


# --- consistency --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    ["SELECT light FROM sensors WHERE", "SELECT light\nFROM sensors WHERE light >> 3"],
)
def test_query_shows_sql_errors_with_the_caret_as_explain_does(
    sql: str, scripted: ScriptedMote, tmp_path: Path
) -> None:
    explained = mote("explain", sql, cwd=tmp_path)
    queried = mote("query", sql, "--port", str(scripted.path), cwd=tmp_path)
    assert explained.returncode == queried.returncode == 1
    assert queried.stderr == explained.stderr
    assert queried.stderr.rstrip("\n").endswith("^")
    assert scripted.received == []


def test_encode_query_pipes_into_decode(tmp_path: Path) -> None:
    sql = "SELECT nodeid, light FROM sensors WHERE light > 100 EPOCH DURATION 2048"
    encoded = mote("encode-query", sql, "--qid", "7", cwd=tmp_path)
    assert encoded.returncode == 0, encoded.stderr
    with subprocess.Popen(
        [MOTE, "encode-query", sql, "--qid", "7"], stdout=subprocess.PIPE, cwd=tmp_path
    ) as encode:
        decode = subprocess.run(
            [MOTE, "decode"], stdin=encode.stdout, capture_output=True, text=True, timeout=120,
            check=False, cwd=tmp_path,
        )  # fmt: skip
    assert (encode.returncode, decode.returncode, decode.stderr) == (0, 0, "")
    messages = [json.loads(line) for line in decode.stdout.splitlines()]
    assert len(messages) == len(encoded.stdout.splitlines()) == 3  # 2 fields, 1 expression
    assert {(m["am_name"], m["group"], m["addr"]) for m in messages} == {("QUERY", 0x7D, 0xFFFF)}
    bodies = [m["body"] for m in messages]
    assert {(b["qid"], b["numFields"], b["numExprs"], b["epochDuration"]) for b in bodies} == {
        (7, 2, 1, 2048 // 10)
    }
    assert [b["u"].get("name") for b in bodies[:2]] == ["nodeid", "light"]


def test_output_that_is_not_a_terminal_is_not_cut(tmp_path: Path) -> None:
    # The emulator's summary has ten columns: at rich's default 80 they were cut.
    result = mote("emulate", "--nodes", "3", "--duration", "2s", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    header = next(line for line in result.stdout.splitlines() if "node" in line and "alive" in line)
    for column in ("node", "alive", "parent", "depth", "energy J", "cpu J", "radio J", "sent",
                   "recv", "collided"):  # fmt: skip
        assert column in header
    assert "…" not in result.stdout
    assert len(header) > 80


def test_a_console_that_is_not_a_terminal_is_unbounded() -> None:
    console = make_console()  # pytest captures stdout: not a terminal
    assert (console.width, console.soft_wrap) == (UNBOUNDED_WIDTH, True)


def test_run_rate_is_over_the_gateway_run() -> None:
    # The report: "143 rows (4876385.3/s)", rows over the microseconds since Spark's start.
    progress = GatewayProgress(rows=143)
    assert progress.rate() == 0.0  # no query yet
    progress.started, progress.stopped = 100.0, 110.0
    assert progress.rate() == pytest.approx(14.3)


# --- positions files ------------------------------------------------------------------------


def test_emulate_keeps_the_mote_ids_of_a_positions_file(tmp_path: Path) -> None:
    # The report: ids 5, 12, 40 became 1, 2, 3, and `mote spark --topology` joined nothing.
    motes = tmp_path / "motes.txt"
    motes.write_text("moteid x y\n5 0 0\n12 10 0\n40 20 0\n")
    result = mote("emulate", "--positions", str(motes), "--range", "12", "--lossless",
                  "--query", "SELECT nodeid, light FROM sensors SAMPLE PERIOD 1s",
                  "--epochs", "2", "--query-after", "20s", "--out", "-", cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert {row["node_id"] for row in rows} == {0, 5, 12, 40}
    assert all(row["values"]["nodeid"] == row["node_id"] for row in rows)
    # What `mote spark --positions` joins the rows with: the file's own ids.
    assert {p.node_id for p in read_positions(motes)} == {5, 12, 40}
    assert (
        f"{motes} has no mote 0: the basestation (node 0, the root of the routing tree) is "
        "added at 10,0; --root-position X,Y places it\n"
        "37 ids up to the file's highest are not in it: absent nodes (dead from the start, "
        "no links)\n"
    ) in result.stderr


def test_query_out_dash_into_a_closed_stdout_stops_the_query_quietly(tmp_path: Path) -> None:
    root = ScriptedMote(tmp_path, TinyDBRoot())
    try:
        feeder = feed_tuples(root, epochs=40)
        read_end, write_end = os.pipe()
        os.close(read_end)  # `mote query --out - | head` once head has gone
        try:
            result = subprocess.run(
                [MOTE, "query", SELECT, "--port", str(root.path), "--out", "-",
                 "--duration", "2s", "--no-table"],
                stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120, check=False,
                cwd=tmp_path,
            )  # fmt: skip
        finally:
            os.close(write_end)
        feeder.join(timeout=10)
        assert (result.returncode, result.stderr) == (0, "query 1 started\n")
        sent = [parse_query_message(parse_tos_packet(p)[1]) for p in root.packets(AmType.QUERY)]
        assert [m["msgType"] for m in sent] == [0, 0, 1, 1, 1, 1, 1]  # 2 parts, then 5 DELs
    finally:
        root.close()


# --- loading --------------------------------------------------------------------------------------


def test_every_entry_point_loads_the_command_it_is_named_after() -> None:
    names = {ep.name for ep in entry_points(group="motebase.commands")}
    loaded = {path.split()[1] for path, _ in commands(build_cli()) if path.count(" ") == 1}
    assert loaded == names
    assert {"decode", "emulate", "query", "run", "spark"} <= names


def test_own_entry_points_are_what_importlib_metadata_reads() -> None:
    site = Path(sysconfig.get_paths()["purelib"])  # where pip installed motebase
    (installed,) = (d for d in distributions(path=[str(site)]) if d.name == "motebase")
    assert own_entry_points(site) == {
        ep.name: ep.value for ep in installed.entry_points.select(group="motebase.commands")
    }


def test_own_entry_points_leave_what_they_cannot_read_to_importlib(tmp_path: Path) -> None:
    def site_with(*infos: tuple[str, str]) -> Path:
        site = tmp_path / str(len(list(tmp_path.iterdir())))
        for name, text in infos:
            (site / name).mkdir(parents=True)
            (site / name / "entry_points.txt").write_text(text)
        return site

    group = "[console_scripts]\nmote = x:y\n\n[motebase.commands]\ndecode = a.b:c\nlog = a.d:e.f\n"
    assert own_entry_points(site_with(("motebase-0.1.0.dist-info", group))) == {
        "decode": "a.b:c",
        "log": "a.d:e.f",
    }
    assert own_entry_points(site_with()) == {}  # a checkout: no dist-info
    two = (("motebase-0.1.0.dist-info", group), ("motebase-0.2.0.dist-info", group))
    assert own_entry_points(site_with(*two)) == {}  # which one is installed is not ours to say
    extras = "[motebase.commands]\ndecode = a.b:c [extra]\n"
    assert own_entry_points(site_with(("motebase-0.1.0.dist-info", extras))) == {}
    assert load("motebase.gateway.cli.main:build_cli") is build_cli


def test_a_command_imports_only_what_it_runs(tmp_path: Path) -> None:
    # `mote decode` loads its own module, not the emulator, Spark or numpy: each
    # command is imported only when run (gateway/cli/main.py).
    code = (
        "import sys\n"
        "from motebase.gateway.cli.main import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('numpy', 'pyspark', 'motebase.emu', 'motebase.spark',"
        " 'motebase.gateway.session', 'motebase.gateway.tinysql', 'serial')\n"
        # Installed (not a checkout on PYTHONPATH), the command is found in motebase's own
        # entry_points.txt, without importlib.metadata.
        "from motebase.gateway.cli.main import own_entry_points\n"
        "heavy += ('importlib.metadata', 'socket') if own_entry_points() else ()\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)), file=sys.stderr)\n"
    )
    hex_line = "7e00f0"  # a truncated packet: reported, not decoded
    done = subprocess.run(
        [sys.executable, "-c", code, "decode", "-"],
        input=hex_line, capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0
    assert done.stderr.splitlines()[-1] == "[]"
