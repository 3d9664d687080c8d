"""What `mote spark` and `mote run` say when the ``spark`` extra is missing, instead of a
traceback: PySpark is imported only inside the commands, so the ImportError arrives at
their boundary, and the message says what to install. Any other error keeps its
traceback.

Nothing here imports PySpark, so the boundary works without it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click

INSTALL_SPARK = 'pip install "motebase[spark]"'
#: Top-level modules of the spark extra (and py4j, which pyspark brings).
SPARK_EXTRA_MODULES = frozenset({"pyspark", "py4j", "pyarrow", "pandas"})


def missing_extra(error: ImportError, command: str) -> str | None:
    """The message for ``command`` when ``error`` is a module of the spark extra missing;
    None for any other ImportError."""
    name = (error.name or "").partition(".")[0]
    if name not in SPARK_EXTRA_MODULES:
        return None
    return (
        f"mote {command} needs the spark extra (PySpark, PyArrow, pandas; and Java 17), "
        f"which is not installed here: {name} cannot be imported. Install it with\n"
        f"  {INSTALL_SPARK}"
    )


@contextlib.contextmanager
def spark_boundary(command: str) -> Iterator[None]:
    """Around a command's body (also a decorator): a missing extra as a message, exit 1."""
    try:
        yield
    except ImportError as exc:
        message = missing_extra(exc, command)
        if message is None:
            raise
        raise click.ClickException(message) from None
