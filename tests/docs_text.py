"""Reading the docs the way a test needs them: fenced code blocks, the `mote` command lines
in them, headings as GitHub anchors them, and relative links."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_HEADING = re.compile(r"^#{1,6} +(.+?) *$", re.MULTILINE)
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def code_blocks(path: Path, language: str) -> list[str]:
    """The bodies of the ```language fenced blocks of ``path``, in order."""
    return [body for lang, body in _FENCE.findall(path.read_text()) if lang == language]


def mote_commands(path: Path) -> list[list[str]]:
    """Every `mote ...` command line of the ```sh blocks, as argv without 'mote'; a
    `# comment` ends a line, and `a | mote b` counts its `mote b`."""
    commands = []
    for block in code_blocks(path, "sh"):
        for line in block.splitlines():
            for part in line.split("|"):
                words = shlex.split(part, comments=True)
                if words and words[0] == "mote":
                    commands.append(words[1:])
    return commands


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = _FENCE.sub("", path.read_text())  # a '#' line in a code block is no heading
    return {anchor(h) for h in _HEADING.findall(text)}


def relative_links(path: Path) -> list[str]:
    """Links of ``path`` that are neither absolute URLs nor inside code blocks."""
    text = _FENCE.sub("", path.read_text())
    return [t for t in _LINK.findall(text) if not re.match(r"^[a-z]+:", t)]
