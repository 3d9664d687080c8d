"""The root's UART as a real serial endpoint: a pty, a SerialForwarder server, or both.

A driver thread advances the network in small slices of virtual time and, between
slices, pumps bytes: whatever the root wrote goes to the pty as is (it is already
framed, as on a MIB510) and, deframed, to every SerialForwarder client; bytes a
program writes to the pty go to the root as is, and packets from SF clients are
framed as protocol 66 first (SF carries bare packets). Paced to the wall clock
with ``realtime``, otherwise as fast as the emulator runs.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import tty
from dataclasses import dataclass

from motebase.emu.network import Network
from motebase.gateway.protocol.framing import Deframer, Protocol, frame_packet
from motebase.gateway.protocol.sf import SerialForwarderServer

_PTY_READ = 4096
_PACKET_PROTOCOLS = (Protocol.PACKET_NO_ACK, Protocol.PACKET_ACK)


@dataclass
class BridgeStats:
    uart_bytes_out: int = 0
    uart_bytes_in: int = 0
    sf_packets_out: int = 0
    sf_packets_in: int = 0
    pty_bytes_dropped: int = 0  # nobody reading the pty and its buffer full


class SerialBridge:
    """Serves ``net``'s root UART; see :func:`serve`. ``capture`` keeps a copy of every
    byte the root sent, for :meth:`read` (the in-process channel)."""

    def __init__(
        self,
        net: Network,
        *,
        pty: bool = False,
        sf_port: int | None = None,
        sf_host: str = "127.0.0.1",
        realtime: bool = False,
        slice_ms: float = 10.0,
        until_ms: float | None = None,
        capture: bool = False,
    ) -> None:
        self.net = net
        self.realtime = realtime
        self.slice_ms = slice_ms
        self.until_ms = until_ms
        self.stats = BridgeStats()
        self.pty_path: str | None = None
        self._master: int | None = None
        self._slave: int | None = None
        self._sf: SerialForwarderServer | None = None
        self._deframer = Deframer()
        self._capture: bytearray | None = bytearray() if capture else None
        self._capture_lock = threading.Lock()
        self._stop = threading.Event()
        self.finished = threading.Event()
        self._thread = threading.Thread(target=self._drive, name="emu-bridge", daemon=True)
        if pty:
            self._open_pty()
        if sf_port is not None:
            self._sf = SerialForwarderServer(sf_host, sf_port, self._from_sf_client).start()

    @property
    def sf_port(self) -> int | None:
        return self._sf.port if self._sf is not None else None

    def start(self) -> SerialBridge:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
        if self._sf is not None:
            self._sf.close()
        for fd in (self._master, self._slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = None

    def __enter__(self) -> SerialBridge:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the in-process channel -------------------------------------------------------
    def write(self, data: bytes) -> None:
        """Bytes into the root's UART, as if a program had written them to the pty."""
        self.stats.uart_bytes_in += len(data)
        self.net.uart_write(data)

    def read(self) -> bytes:
        """Bytes the root sent since the last read (needs ``capture=True``)."""
        if self._capture is None:
            raise RuntimeError("bridge was created without capture=True")
        with self._capture_lock:
            out = bytes(self._capture)
            self._capture.clear()
        return out

    # -- driver -------------------------------------------------------------------------
    def _open_pty(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)  # no echo, no line editing: a serial line carries bytes
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self.pty_path = os.ttyname(slave)

    def _drive(self) -> None:
        wall0, virt0 = time.monotonic(), self.net.now_ms
        try:
            while not self._stop.is_set():
                target = self.net.now_ms + self.slice_ms
                if self.until_ms is not None:
                    target = min(target, self.until_ms)
                self.net.run_until(target)
                self._pump_out(self.net.uart_read())
                self._pump_pty_in()
                if self.until_ms is not None and self.net.now_ms >= self.until_ms:
                    break
                if self.realtime:
                    ahead = (self.net.now_ms - virt0) / 1000.0 - (time.monotonic() - wall0)
                    if ahead > 0:
                        self._stop.wait(ahead)
        finally:
            self.finished.set()

    def _pump_out(self, data: bytes) -> None:
        if not data:
            return
        self.stats.uart_bytes_out += len(data)
        if self._capture is not None:
            with self._capture_lock:
                self._capture += data
        if self._master is not None:
            try:
                written = os.write(self._master, data)
            except BlockingIOError:
                written = 0
            self.stats.pty_bytes_dropped += len(data) - written
        if self._sf is not None:
            for frame in self._deframer.feed(data):
                if frame.protocol in _PACKET_PROTOCOLS:
                    self._sf.broadcast(frame.payload)
                    self.stats.sf_packets_out += 1

    def _pump_pty_in(self) -> None:
        if self._master is None:
            return
        while True:
            try:
                data = os.read(self._master, _PTY_READ)
            except (BlockingIOError, OSError):
                return
            if not data:
                return
            self.write(data)

    def _from_sf_client(self, packet: bytes) -> None:
        self.stats.sf_packets_in += 1
        self.write(frame_packet(packet))


def serve(
    net: Network,
    *,
    pty: bool = False,
    sf_port: int | None = None,
    realtime: bool = True,
    slice_ms: float = 10.0,
    until_ms: float | None = None,
    capture: bool = False,
) -> SerialBridge:
    """Start a :class:`SerialBridge` driving ``net`` in a background thread."""
    return SerialBridge(
        net,
        pty=pty,
        sf_port=sf_port,
        realtime=realtime,
        slice_ms=slice_ms,
        until_ms=until_ms,
        capture=capture,
    ).start()
