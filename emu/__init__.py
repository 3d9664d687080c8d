"""Network emulator: the firmware core compiled through cffi, many motes in virtual time.

The event loop, the emulation HAL, the radio medium, the energy meter and the sensor
sources are C (``emu/csrc``); Python configures and observes. Public API::

    from motebase.emu import Network, NetworkConfig, serve
    from motebase.emu.sources import Constant, RandomWalk, Sine, Square, Burst, Trace

    net = Network(NetworkConfig(nodes=25, topology="grid", platform="mica2", seed=1,
                                lossless=False, sensors={"light": Sine(period_s=60)}))
    net.uart_write(frame_bytes)      # framed bytes into the root's UART (protocol 65/66)
    net.run_for(10_000)              # advance 10 s of virtual time (or run_until(t_ms))
    data = net.uart_read()           # framed bytes the root sent since the last read
    net.now_ms                       # virtual clock
    net.energy()                     # {"sleep"|"cpu"|"listen"|"transmit"|"sensing"|"total":
                                     #  float64[n] joules}
    net.phase_times_us()             # same keys (no total), uint64[n] microseconds
    net.counters()                   # {"sent", "received", "collided", "lost", "dropped",
                                     #  "acked", "backoffs", "samples", "uart_bytes": uint32[n]}
    net.alive                        # bool[n]
    net.routing()                    # (parent uint16[n], depth uint8[n]) snapshot; 0xFFFF /
                                     #  0xFF: no route, the root's parent is 0x7E (UART)
    net.mote_id(i), net.node_index(id)  # node i is mote i, but no mote is 126 (TOS_UART_ADDR):
                                     #  nodes 126.. are motes 127.. (results carry mote ids)
    net.kill(node, at_ms=None)       # at a virtual time (None: now); revive() reboots
    net.set_link(src, dst, prob)     # change a link while running (sinr model: its power)
    net.set_sensor("temp", RandomWalk(), nodes=range(1, 10))

    bridge = serve(net, pty=True, sf_port=0, realtime=True)   # background driver thread
    bridge.pty_path, bridge.sf_port                           # endpoints for `mote listen`
    bridge.write(b"..."); bridge.read()                       # in-process channel (capture=True)
    bridge.stop()

Arrays from energy()/phase_times_us()/counters() are zero-copy views of C memory, valid
while the network lives; counters change as it runs, energy arrays at each energy() or
phase_times_us() call (copy them for a snapshot while a bridge is driving it).

Node 0 is the root; node ids are TOS addresses. Virtual time is kept in microseconds; the
firmware sees milliseconds. A run is fully determined by its configuration and seed. See
``emu/README.md`` for the medium, energy and platform models and the figures used.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Network", "NetworkConfig", "SerialBridge", "serve"]


def __getattr__(name: str) -> Any:
    # Lazy: importing emu (e.g. for the CLI) must not load the C extension.
    if name in ("Network", "NetworkConfig"):
        from motebase.emu import network

        return getattr(network, name)
    if name in ("SerialBridge", "serve"):
        from motebase.emu import bridge

        return getattr(bridge, name)
    raise AttributeError(name)
