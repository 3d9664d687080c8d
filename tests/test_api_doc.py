"""docs/api.md runs as written: its ```python examples execute in order in one namespace,
as one session of a reader would, and each prints exactly the ```text block right after it.
They run the emulator in virtual time, and once on a pty paced to the wall clock."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest
from docs_text import DOCS

from motebase.gateway.resultlog import ResultLog

PAGE = DOCS / "api.md"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)


def examples(text: str) -> list[tuple[str, str | None]]:
    """(code, the output shown right after it, or None) for every python block."""
    blocks = list(_FENCE.finditer(text))
    pairs = []
    for block, after in zip(blocks, [*blocks[1:], None], strict=True):
        if block.group(1) != "python":
            continue
        right_after = after is not None and not text[block.end() : after.start()].strip()
        shown = after.group(2) if right_after and after.group(1) == "text" else None
        pairs.append((block.group(2), shown))
    return pairs


def test_every_example_shows_its_output() -> None:
    pairs = examples(PAGE.read_text())
    assert len(pairs) == 7
    assert [shown is not None for _, shown in pairs] == [True] * 7


def test_the_examples_run_and_print_what_the_page_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the examples write rows.jsonl and log/
    namespace: dict[str, object] = {"__name__": "api_md"}
    printed = []
    for code, _ in examples(PAGE.read_text()):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(PAGE), "exec"), namespace)
        printed.append(out.getvalue())
    assert printed == [shown for _, shown in examples(PAGE.read_text())]
    # The pty example's sinks: its rows as JSON lines and in a result log (a real-time run,
    # so how many epochs arrive before the stop takes effect varies).
    lines = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert {(line["node_id"], line["values"]["temp"]) for line in lines} == {
        (node, 20) for node in range(9)
    }
    logged = [record for _, record in ResultLog(tmp_path / "log").read()]
    assert logged[0]["sql"] == "SELECT nodeid, temp FROM sensors SAMPLE PERIOD 1s"
    assert logged[1:] == lines
