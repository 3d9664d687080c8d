"""motebase: TinyDB-style queries over Mica/Mica2 mote networks, real or emulated, into Spark.

One importable name for three layers, each its own subpackage:

- :mod:`motebase.gateway`: the Python basestation (protocol, TinySQL, sessions, result log);
- :mod:`motebase.emu`: the network emulator, the firmware core compiled through cffi;
- :mod:`motebase.spark`: PySpark streaming ingestion of the result log.

In a source checkout the three are symlinks to the folders at the repo root (gateway/, emu/,
spark/), so ``PYTHONPATH=CHECKOUT`` imports that checkout's code and static tools (mypy, an
editor) see the installed module names; an install copies the folders in (pyproject.toml's
package-dir). docs/api.md is the Python API.
"""
