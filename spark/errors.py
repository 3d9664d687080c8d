"""What `mote spark` and `mote run` say when Spark cannot run, instead of a traceback.

Two kinds of failure are a matter of the machine, not of motebase, and get one paragraph
naming the likely cause: the ``spark`` extra is not installed (PySpark is imported only
inside the commands, so the ImportError arrives at their boundary), and Spark cannot
start Java or its Python workers. Any other error keeps its traceback: it is a bug.

Nothing here imports PySpark, so the boundary works without it.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator

import click

INSTALL_SPARK = 'pip install "motebase[spark]"'
#: Top-level modules of the spark extra (and py4j, which pyspark brings).
SPARK_EXTRA_MODULES = frozenset({"pyspark", "py4j", "pyarrow", "pandas"})

_WORKER_TIMEOUT = re.compile(
    r"Python worker failed to connect back"
    r"|Timed out while waiting for the Python worker to connect back"
)
_CANNOT_RUN = re.compile(r'Cannot run program "([^"]*)"')
_WORKER_CRASHED = re.compile(
    r"Python worker exited unexpectedly"
    r"|Python daemon failed to launch worker"
    r"|Python failed to launch worker"
    r"|Failed to open socket to Python daemon"
)
_NO_JAVA = re.compile(r"JAVA_GATEWAY_EXITED|Java gateway process exited")


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


def spark_failure_hint(text: str) -> str | None:
    """One paragraph on the likely cause of a Spark failure whose message (with its JVM
    stack trace, if any) is ``text``; None when it is not one this module knows."""
    python = os.environ.get("PYSPARK_PYTHON", "(unset)")
    resume = "Rerunning with the same --out resumes from the checkpoints."
    if _WORKER_TIMEOUT.search(text):
        return (
            'Spark failed: its Python worker did not connect back in time ("Python worker '
            'failed to connect back"). Spark starts Python workers for its tasks and gives '
            "each 10 seconds to connect back to the JVM on localhost. Likely causes: the "
            "machine is overloaded (run with fewer cores, e.g. --master local[2], or when "
            "it is less busy); PYSPARK_PYTHON names another or a slow-starting interpreter "
            f"(it is {python}; motebase runs in {sys.executable}); or a firewall or "
            f"security tool blocks connections to 127.0.0.1. {resume}"
        )
    cannot_run = _CANNOT_RUN.search(text)
    if cannot_run:
        return (
            f"Spark failed: it cannot run {cannot_run.group(1)!r} to start its Python "
            f"workers. PYSPARK_PYTHON (it is {python}) must name an interpreter that "
            f"exists and can import motebase and pyspark, such as {sys.executable}; unset "
            f"it to let motebase choose that one. {resume}"
        )
    if _WORKER_CRASHED.search(text):
        return (
            "Spark failed: one of its Python workers crashed or could not start. Likely "
            f"causes: PYSPARK_PYTHON (it is {python}) is an interpreter without motebase "
            f"or with another pyspark version than the driver's ({sys.executable}), or "
            f"the machine ran out of memory. {resume}"
        )
    if _NO_JAVA.search(text):
        java_home = os.environ.get("JAVA_HOME", "(unset)")
        return (
            "Spark failed to start: its Java process exited at once. Spark needs Java 17: "
            f"install it and make sure JAVA_HOME (it is {java_home}) points at it, or, with "
            "JAVA_HOME unset, that `java` on PATH is it."
        )
    return None


@contextlib.contextmanager
def spark_boundary(command: str) -> Iterator[None]:
    """Around a command's body (also a decorator): the failures above as one paragraph
    and exit 1."""
    try:
        yield
    except ImportError as exc:
        message = missing_extra(exc, command)
        if message is None:
            raise
        raise click.ClickException(message) from None
    except Exception as exc:
        hint = spark_failure_hint(_text_of(exc)) if _from_spark(exc) else None
        if hint is None:
            raise
        raise click.ClickException(hint) from None


def _from_spark(error: BaseException) -> bool:
    """Whether ``error`` (or what it was raised from) is PySpark's or py4j's."""
    return any(type(e).__module__.partition(".")[0] in ("pyspark", "py4j") for e in _chain(error))


def _text_of(error: BaseException) -> str:
    texts = []
    for e in _chain(error):
        # str() of a captured JVM exception asks the JVM, which may already be gone.
        with contextlib.suppress(Exception):
            texts.append(str(e))
    return "\n".join(texts)


def _chain(error: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain
