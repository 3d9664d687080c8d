"""`mote log verify|repair|cat` on the issue's damaged logs (tests/damaged_log.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from damaged_log import CASES, build_log, flip_bit, record, segment

from motebase.gateway.cli.main import build_cli
from motebase.gateway.resultlog import ResultLog

SEG = {first: f"{first:020d}.seg" for first in (90, 265)}
HINT = "quarantines the damage and keeps every intact record"

#: `mote log verify` on each damaged log: stdout, exit status 1.
VERIFY_DAMAGED = {
    "A": "{d}/" + SEG[265] + ", byte 2074: corrupt record, record offset 299",
    "B": "{d}/" + SEG[265] + ", byte 183: corrupt record, record offset 268",
    "C": "{d}/" + SEG[90] + ", byte 1810: corrupt record, record offset 120",
    "D": "{d}/committed: commit marker missing or unreadable, record offsets 0-299",
    "E": "{d}/" + SEG[265] + ", byte 0: records missing, record offsets 265-299",
    "G": "{d}/" + SEG[90] + ": missing segment file, record offsets 90-177",
}

#: What `mote log repair` says it did, after the line naming the damage.
REPAIRED = {
    "A": [
        f"moved {SEG[265]} to quarantine/{SEG[265]}; its 34 intact records rewritten as {SEG[265]}",
        f"declared lost: record offset 299 (corrupt record: {SEG[265]})",
    ],
    "B": [
        f"moved {SEG[265]} to quarantine/{SEG[265]}; its 34 intact records rewritten as {SEG[265]}",
        f"declared lost: record offset 268 (corrupt record: {SEG[265]})",
    ],
    "C": [
        f"moved {SEG[90]} to quarantine/{SEG[90]}; its 87 intact records rewritten as {SEG[90]}",
        f"declared lost: record offset 120 (corrupt record: {SEG[90]})",
    ],
    "D": ["commit marker: missing -> 299"],
    "E": [
        f"moved {SEG[265]} to quarantine/{SEG[265]}; it held no intact record",
        f"declared lost: record offsets 265-299 (records missing: {SEG[265]})",
    ],
    "G": [f"declared lost: record offsets 90-177 (missing segment file: {SEG[90]})"],
}

#: `mote log verify` once repaired (F needs no repair): the one-line summary.
VERIFY_HEALTHY = {
    "A": "299 records in 4 segments, committed offset 299, 1 offset declared lost (299)",
    "B": "299 records in 4 segments, committed offset 299, 1 offset declared lost (268)",
    "C": "299 records in 4 segments, committed offset 299, 1 offset declared lost (120)",
    "D": "300 records in 4 segments, committed offset 299",
    "E": "265 records in 3 segments, committed offset 299, 35 offsets declared lost (265-299)",
    "F": "300 records in 4 segments, committed offset 299, a torn tail of 16 bytes in "
    f"{SEG[265]} (the next writer truncates it)",
    "G": "212 records in 3 segments, committed offset 299, 88 offsets declared lost (90-177)",
}


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    return build_log(tmp_path / "log")


def mote(*args: str | Path) -> Result:
    return CliRunner().invoke(build_cli(), ["log", *map(str, args)])


@pytest.mark.parametrize("name", sorted(VERIFY_DAMAGED))
def test_verify_names_the_damage_and_fails(log_dir: Path, name: str) -> None:
    CASES[name].damage(log_dir)
    result = mote("verify", log_dir)
    assert result.exit_code == 1
    assert result.stdout == VERIFY_DAMAGED[name].format(d=log_dir) + "\n"
    assert result.stderr == (
        f"{log_dir}: damaged in 1 place(s); `mote log repair {log_dir}` {HINT}\n"
    )


@pytest.mark.parametrize("name", sorted(REPAIRED))
def test_repair_says_what_it_did_then_verify_passes(log_dir: Path, name: str) -> None:
    CASES[name].damage(log_dir)
    result = mote("repair", log_dir)
    assert result.exit_code == 0, result.output
    damage = "damage: " + VERIFY_DAMAGED[name].format(d=log_dir)
    next_offset = "the next record gets offset 300"
    assert result.stdout.splitlines() == [damage, *REPAIRED[name], next_offset]
    verified = mote("verify", log_dir)
    assert (verified.exit_code, verified.stdout) == (
        0,
        f"{log_dir}: ok, {VERIFY_HEALTHY[name]}\n",
    )


@pytest.mark.parametrize("first", [0, 90])
def test_a_segment_whose_first_record_was_lost_reads_after_repair(
    log_dir: Path, first: int
) -> None:
    # The rewritten segment keeps its name, the offset of a record it no longer holds:
    # the offsets before its first record are declared lost, not missing.
    flip_bit(segment(log_dir, first), first)
    assert mote("repair", log_dir).exit_code == 0
    verified = mote("verify", log_dir)
    assert verified.exit_code == 0, verified.output
    offsets = [offset for offset, _ in ResultLog(log_dir).read()]
    assert offsets == [o for o in range(300) if o != first]


def test_garbage_tail_verifies_and_needs_no_repair(log_dir: Path) -> None:
    CASES["F"].damage(log_dir)
    verified = mote("verify", log_dir)
    assert (verified.exit_code, verified.stdout) == (0, f"{log_dir}: ok, {VERIFY_HEALTHY['F']}\n")
    repaired = mote("repair", log_dir)
    assert (repaired.exit_code, repaired.stdout) == (
        0,
        f"{log_dir}: nothing to repair; the next record gets offset 300\n",
    )


def test_verify_of_a_healthy_log(log_dir: Path) -> None:
    result = mote("verify", log_dir)
    assert (result.exit_code, result.stdout) == (
        0,
        f"{log_dir}: ok, 300 records in 4 segments, committed offset 299\n",
    )


def test_repair_refuses_while_a_writer_runs(log_dir: Path) -> None:
    with ResultLog(log_dir) as log:
        log.open_writer()
        result = mote("repair", log_dir)
    assert result.exit_code == 1
    assert result.stderr == f"Error: {log_dir} is already open for writing; stop the writer first\n"


def test_cat_prints_records_with_their_offsets(log_dir: Path) -> None:
    result = mote("cat", log_dir, "--from", "297")
    assert result.exit_code == 0
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {"offset": offset, "record": record(offset)} for offset in (297, 298, 299)
    ]
    assert mote("cat", log_dir).stdout.count("\n") == 300


def test_cat_stops_at_damage_with_the_error(log_dir: Path) -> None:
    CASES["C"].damage(log_dir)
    result = mote("cat", log_dir, "--from", "100")
    assert result.exit_code == 1
    assert [json.loads(line)["offset"] for line in result.stdout.splitlines()] == list(
        range(100, 120)
    )
    assert result.stderr.startswith(f"Error: damaged result log: {log_dir}/{SEG[90]}, byte 1810")


def test_cat_passes_over_declared_lost_offsets(log_dir: Path) -> None:
    CASES["G"].damage(log_dir)
    mote("repair", log_dir)
    offsets = [json.loads(line)["offset"] for line in mote("cat", log_dir).stdout.splitlines()]
    assert offsets == [*range(90), *range(178, 300)]


def test_cat_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    with ResultLog(tmp_path) as log:  # more than a pipe holds: cat meets the closed end
        log.append_batch([{"kind": "reading", "seq": i, "pad": "x" * 200} for i in range(3000)])
    mote_main = "from motebase.gateway.cli.main import main; main()"
    cat = subprocess.Popen(
        [sys.executable, "-c", mote_main, "log", "cat", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert cat.stdout is not None and cat.stderr is not None
    first = json.loads(cat.stdout.readline())
    cat.stdout.close()  # what `| head -1` does
    assert cat.wait(timeout=60) == 0
    assert cat.stderr.read() == b""
    assert first["offset"] == 0
