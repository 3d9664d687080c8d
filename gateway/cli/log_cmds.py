"""`mote log verify|repair|cat`: check, repair and read a gateway result log directory."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from motebase.gateway.logfiles import LogCorruptError, LogLockedError
from motebase.gateway.logrepair import repair_log
from motebase.gateway.logscan import LogReport, scan_log
from motebase.gateway.resultlog import ResultLog

_LOG_DIR = click.Path(exists=True, file_okay=False, path_type=Path)


@click.group("log")
def log_group() -> None:
    """Check, repair and read a result log (the directory `--log` writes)."""


@log_group.command("verify")
@click.argument("directory", type=_LOG_DIR)
@click.pass_context
def verify_cmd(ctx: click.Context, directory: Path) -> None:
    """Walk every record of DIRECTORY. Healthy: one summary line, exit status 0. Damaged:
    each damage (file, byte in it, record offsets affected), exit status 1."""
    report = scan_log(directory)
    if report.healthy:
        click.echo(_summary(report))
        return
    for damage in report.damages:
        click.echo(str(damage))
    click.echo(
        f"{directory}: damaged in {len(report.damages)} place(s); `mote log repair {directory}` "
        "quarantines the damage and keeps every intact record",
        err=True,
    )
    ctx.exit(1)


def _summary(report: LogReport) -> str:
    records = _count(report.records - report.uncommitted, "record")
    parts = [
        f"{report.directory}: ok, {records} in {_count(len(report.segments), 'segment')}",
        "no committed offset"
        if report.committed in (None, -1)
        else f"committed offset {report.committed}",
    ]
    if report.lost.ranges:
        parts.append(f"{_count(report.lost.count(), 'offset')} declared lost ({_ranges(report)})")
    if report.uncommitted:
        after = _count(report.uncommitted, "complete record")
        parts.append(f"{after} after it (the next writer keeps them)")
    if report.tail is not None:
        parts.append(
            f"a torn tail of {report.tail.size} bytes in {report.tail.segment.path.name} "
            "(the next writer truncates it)"
        )
    return ", ".join(parts)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _ranges(report: LogReport, shown: int = 4) -> str:
    """The lost ranges, the first few of them: a summary stays one line."""
    ranges = report.lost.ranges
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges[:shown])
    return text if len(ranges) <= shown else f"{text} and {len(ranges) - shown} more"


@log_group.command("repair")
@click.argument("directory", type=_LOG_DIR)
def repair_cmd(directory: Path) -> None:
    """Move every damaged segment of DIRECTORY to DIRECTORY/quarantine/, rewrite its intact
    records at their own offsets, declare the offsets no intact record holds lost (in
    DIRECTORY/lost, which readers honour) and rebuild a missing commit marker. No offset is
    ever given out twice. Needs the writer (`mote query --log`, ...) stopped."""
    try:
        repair = repair_log(directory)
    except LogLockedError as exc:
        raise click.ClickException(f"{exc}; stop the writer first") from None
    for line in repair.lines():
        click.echo(line)
    if repair.remaining:
        raise click.ClickException("the log is still damaged (see above)")


@log_group.command("cat")
@click.argument("directory", type=_LOG_DIR)
@click.option(
    "--from",
    "start",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="First offset to print.",
)
def cat_cmd(directory: Path, start: int) -> None:
    """Print the committed records of DIRECTORY as JSON lines, {"offset": N, "record": {...}}.
    Stops with an error (exit status 1) at damage, after the records before it."""
    out = sys.stdout
    try:
        for offset, record in ResultLog(directory).read(start):
            out.write(json.dumps({"offset": offset, "record": record}) + "\n")
        out.flush()
    except BrokenPipeError:
        _discard_stdout()  # the reader has seen enough (`| head`): not an error
    except LogCorruptError as exc:
        out.flush()
        raise click.ClickException(str(exc)) from None


def _discard_stdout() -> None:
    # Python flushes stdout again at exit; into the closed pipe that would print a second
    # BrokenPipeError, so what is still buffered goes nowhere instead.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


COMMANDS: list[click.Command] = [log_group]
