"""Where Spark's file sink wrote a table: the paths in ``<table>/_spark_metadata``.

The Parquet sink records every file it commits by its absolute path, in a log of one file
per batch (``v1`` and then a JSON object a line). Spark reads a table through that log,
so a table whose directory was moved is one Spark can no longer read whole: a rerun
appends new paths beside the old ones, and ``spark.read.parquet`` refuses the mix of two
roots (CONFLICTING_DIRECTORY_STRUCTURES), after the whole run. ``check_tables_in_place``
finds a moved table before anything runs, so the command can say what to do instead.

No PySpark here: the check runs before Spark starts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlparse

METADATA_DIR = "_spark_metadata"


class MovedTableError(Exception):
    """A Parquet table under an output directory was written at another path."""


def sink_batches(table_dir: Path) -> list[Path]:
    """The batch files of the sink log of ``table_dir``, in batch order. Every tenth is
    ``N.compact``: the files of the batches before it, and its own."""
    log = table_dir / METADATA_DIR
    if not log.is_dir():
        return []
    batches = [p for p in log.iterdir() if p.name.removesuffix(".compact").isdigit()]
    return sorted(batches, key=lambda p: int(p.name.removesuffix(".compact")))


def batch_paths(batch: Path) -> Iterator[Path]:
    """The local paths of the files one batch file lists (other filesystems' paths are
    left out: nothing here can compare them)."""
    for line in batch.read_text(encoding="utf-8", errors="replace").splitlines()[1:]:
        try:
            url = urlparse(json.loads(line)["path"])
        except (ValueError, KeyError, TypeError):
            continue  # not an entry: Spark's own read of the table will name it
        if url.scheme in ("", "file"):
            yield Path(unquote(url.path))


def recorded_paths(table_dir: Path) -> Iterator[Path]:
    """The local paths of the files the sink log of ``table_dir`` lists, batch by batch."""
    for batch in sink_batches(table_dir):
        yield from batch_paths(batch)


def _table_root(file: Path, table: str) -> Path:
    """The directory named ``table`` that ``file`` lies under (its partitions stripped)."""
    return next((p for p in file.parents if p.name == table), file.parent)


def check_tables_in_place(out_dir: Path, rebuild: str) -> None:
    """Raise MovedTableError if a table under ``out_dir`` was written somewhere else.

    ``rebuild`` completes the message: how to rebuild the tables where they are now.
    """
    if not out_dir.is_dir():
        return
    for table_dir in sorted(p for p in out_dir.iterdir() if (p / METADATA_DIR).is_dir()):
        here = Path(os.path.realpath(table_dir))
        for path in recorded_paths(table_dir):
            if not Path(os.path.realpath(path)).is_relative_to(here):
                written_at = _table_root(path, table_dir.name)
                raise MovedTableError(
                    f"{table_dir} was written at {written_at}: Spark's Parquet sink keeps "
                    f"the absolute path of every file it wrote (in "
                    f"{table_dir.name}/{METADATA_DIR}), so a moved table can neither be "
                    f"appended to nor read whole. Move it back to {written_at.parent}, or "
                    f"rebuild it here from the result log: {rebuild}"
                )
