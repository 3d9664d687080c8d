"""One picture file: the format from its suffix, matplotlib loaded on demand, output that
does not change between runs of the same data.

Figures are ``matplotlib.figure.Figure`` objects on an Agg canvas, never pyplot's: no
display is ever opened and no global figure registry is touched. Style settings apply
inside :func:`picture` only (``rc_context``), so a program that imports motebase keeps its
own matplotlib settings.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

INSTALL_PLOT = 'pip install "motebase[plot]"'
PICTURE_SUFFIXES = {".png": "png", ".svg": "svg"}

#: Settings every picture is drawn with. The fixed hash salt gives SVG elements the same
#: ids on every run, and text stays text (searchable, a tenth of the size of glyph paths),
#: so a regenerated picture of the same data is the same file and git sees no change.
STYLE: dict[str, Any] = {
    "svg.hashsalt": "motebase",
    "svg.fonttype": "none",
    "font.size": 9,
    "axes.titlesize": 10,
    "savefig.dpi": 150,
}
#: No creation date or tool version in the file: both would differ from run to run.
METADATA: dict[str, dict[str, str | None]] = {
    "svg": {"Date": None, "Creator": None},
    "png": {"Software": None},
}


class PlotExtraMissing(ImportError):
    """matplotlib cannot be imported: the ``plot`` extra is not installed."""

    def __init__(self, cause: ImportError) -> None:
        self.module = (cause.name or "matplotlib").partition(".")[0]
        super().__init__(
            f"the plot extra (matplotlib) is not installed here: {self.module} cannot be "
            f"imported. Install it with\n  {INSTALL_PLOT}",
            name=self.module,
        )


def require_matplotlib() -> Any:
    """The matplotlib module; PlotExtraMissing if it cannot be imported."""
    try:
        return importlib.import_module("matplotlib")
    except ImportError as exc:
        raise PlotExtraMissing(exc) from exc


def picture_format(path: str | Path) -> str:
    """``png`` or ``svg`` from the file's suffix (any case); ValueError for another."""
    suffix = Path(path).suffix.lower()
    if suffix not in PICTURE_SUFFIXES:
        raise ValueError(f"{path}: a picture file ends in .svg or .png, not {suffix or 'nothing'}")
    return PICTURE_SUFFIXES[suffix]


@contextmanager
def picture(path: str | Path, size: tuple[float, float]) -> Iterator[Any]:
    """A new figure of ``size`` inches to draw on; written to ``path`` when the block ends
    without an error (a failed drawing leaves no file)."""
    fmt = picture_format(path)
    matplotlib = require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=size, layout="constrained")
        FigureCanvasAgg(figure)
        yield figure
        figure.savefig(path, format=fmt, metadata=METADATA[fmt])


def epoch_axis(ax: Any) -> None:
    """Label the x axis of ``ax`` as epochs: whole numbers only."""
    from matplotlib.ticker import MaxNLocator

    ax.set_xlabel("epoch")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
