"""An emulated network behind its serial bridge, as the gateway-level tests reach it.

Every node reads a constant light level of ``LIGHT_BASE + node id``, so a test can tell
from a row's value which node it came from.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from motebase.emu.bridge import SerialBridge, serve
from motebase.emu.network import Network, NetworkConfig
from motebase.emu.sources import Trace

LIGHT_BASE = 300


def light_by_node(nodes: int) -> Trace:
    return Trace(values=np.array([[LIGHT_BASE + n] for n in range(nodes)], np.int16))


@contextlib.contextmanager
def emulated_bridge(
    nodes: int = 9, *, seed: int = 5, tree_ms: float = 0.0, sf: bool = False
) -> Iterator[SerialBridge]:
    """A lossless grid served on a pty (and a SerialForwarder port with ``sf``), paced to
    the wall clock; ``tree_ms`` of virtual time first lets the routing tree form."""
    sensors = {"light": light_by_node(nodes)}
    net = Network(NetworkConfig(nodes=nodes, lossless=True, seed=seed, sensors=sensors))
    net.run_for(tree_ms)
    served = serve(net, pty=True, sf_port=0 if sf else None, realtime=True)
    try:
        yield served
    finally:
        served.stop()
        net.close()


#: The installed console script, as a user runs it.
MOTE = str(Path(sys.executable).with_name("mote"))


def mote_emulate_pty(argv: list[str], cwd: Path) -> Iterator[str]:
    """Run ``mote emulate`` with ``argv`` (its arguments after the command name) in the
    background, yield the pty it printed, and stop it afterwards: a generator, so a
    fixture can ``yield from`` it and a test drive it with ``next``."""
    proc = subprocess.Popen(
        [MOTE, "emulate", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=cwd,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("pty: "):
                # its later progress must not fill the pipe and block it
                os.set_blocking(proc.stdout.fileno(), False)
                yield line.split()[1]
                return
        pytest.fail("mote emulate printed no pty")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
