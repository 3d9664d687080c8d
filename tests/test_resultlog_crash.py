"""A writer SIGKILLed at 200 random points, each time restarted on the same log.

After every kill: every record a reader saw committed before it is still there,
unchanged; the records run contiguously from 0; and the next writer starts after every
offset ever committed, so no offset is given out twice.

A SIGKILL does not tear a line here (the kernel finishes a write before the process
dies; kills land in the fsync), so after half of the kills that leave bytes after the
committed offset, the test cuts those at a random byte, as a power loss could.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from motebase.gateway.resultlog import ResultLog

KILLS = 200
SEED = 20251124

# Prints the first offset it will write once the log is open, then appends batches of
# 1..9 records (the size follows from the offset, so every run writes the same log) into
# 1 KiB segments: many batches span a roll, so a kill can land between two writes.
_WRITER = textwrap.dedent(
    """
    import sys
    from motebase.gateway.resultlog import ResultLog

    def record(offset):
        return {"kind": "reading", "seq": offset, "pad": "x" * (offset % 40)}

    log = ResultLog(sys.argv[1], segment_bytes=1024)
    offset = log.open_writer() + 1
    print(offset, flush=True)
    while True:
        batch = [record(offset + i) for i in range(1 + offset * 7919 % 9)]
        offset = log.append_batch(batch) + 1
    """
)


def record(offset: int) -> dict[str, Any]:
    return {"kind": "reading", "seq": offset, "pad": "x" * (offset % 40)}


def kill_a_writer(
    directory: Path, rng: random.Random, seen: dict[int, dict[str, Any]]
) -> tuple[int | None, bool]:
    """Start a writer and SIGKILL it: mostly a few milliseconds into its appends, one time
    in four anywhere from its start (opening the log, repairing a torn tail). Meanwhile
    read what it committed into ``seen``. The first offset the writer was going to write
    (None if it died before it said), and whether the kill waited for it to say."""
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(directory)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    said = None
    if rng.random() < 0.25:
        time.sleep(rng.uniform(0.0, 0.1))
    else:
        said = int(writer.stdout.readline())
        time.sleep(rng.uniform(0.0, 0.015))
    seen.update(ResultLog(directory).read(max(seen, default=-1) + 1))
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    rest = writer.stdout.read().split()
    writer.stdout.close()
    return (int(rest[0]) if said is None and rest else said), said is not None


def cut_the_uncommitted_tail(directory: Path, rng: random.Random) -> bool:
    """Cut the last segment at a random byte after the committed records, if it has any."""
    committed = ResultLog(directory).latest_offset()
    last = max(directory.glob("*.seg"))
    data = last.read_bytes()
    committed_end = 0
    for line in data.splitlines(keepends=True):
        if int(line.split(b" ", 1)[0]) > committed:
            break
        committed_end += len(line)
    if committed_end == len(data):
        return False
    with last.open("r+b") as f:
        f.truncate(rng.randrange(committed_end, len(data)))
    return True


@pytest.mark.slow  # 200 crash-and-recover runs: py311 only (tox.ini)
def test_sigkill_at_200_random_points_loses_no_committed_record_and_reuses_no_offset(
    tmp_path: Path,
) -> None:
    rng = random.Random(SEED)
    seen: dict[int, dict[str, Any]] = {}  # every record a reader saw committed
    opened = cut = waited = 0
    for _ in range(KILLS):
        committed_before = max(seen, default=-1)
        first, said = kill_a_writer(tmp_path, rng, seen)
        waited += said
        if rng.random() < 0.5:
            cut += cut_the_uncommitted_tail(tmp_path, rng)
        if first is not None:
            opened += 1
            assert first > committed_before  # nothing committed is written over
        records = dict(ResultLog(tmp_path).read())
        assert list(records) == list(range(len(records)))
        assert all(records[offset] == got for offset, got in seen.items())
        assert all(got == record(offset) for offset, got in records.items())
        seen.update(records)

    # A writer killed without waiting may have died before it said, as fast as the
    # machine is; one killed after it said has opened the log.
    assert opened >= waited >= KILLS // 2
    assert cut >= 20  # torn tails the next writer had to truncate
    assert len(seen) > 2000
    with ResultLog(tmp_path, segment_bytes=1024) as log:
        last = log.open_writer()
        assert last >= max(seen)
        assert log.append_batch([record(last + 1), record(last + 2)]) == last + 2
    assert dict(ResultLog(tmp_path).read()) == {o: record(o) for o in range(last + 3)}
