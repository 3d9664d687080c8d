"""Pictures of a network, a result log and an accuracy report (matplotlib: the ``plot`` extra).

The modules here turn plain data into one picture file, PNG or SVG by the file's suffix:

- :mod:`motebase.gateway.plot.topology`: positions, links coloured by quality, the routing tree,
  depths (`mote emulate --plot`, `mote plot topology`);
- :mod:`motebase.gateway.plot.log`: a node x epoch delivery heatmap, an attribute per node over the
  epochs, aggregates over the epochs (`mote plot log`);
- :mod:`motebase.gateway.plot.accuracy`: yield by depth, errors per epoch (`mote accuracy --plot`).

matplotlib is imported only when a picture is drawn, so everything else (the `mote` CLI
included) works without the extra; :class:`PlotExtraMissing` says what to install.
"""

from motebase.gateway.plot.figure import (
    INSTALL_PLOT,
    PICTURE_SUFFIXES,
    PlotExtraMissing,
    picture_format,
    require_matplotlib,
)

__all__ = [
    "INSTALL_PLOT",
    "PICTURE_SUFFIXES",
    "PlotExtraMissing",
    "picture_format",
    "require_matplotlib",
]
