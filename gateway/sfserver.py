"""A SerialForwarder for a real serial port: several clients share one basestation mote.

Like TinyOS's Java SerialForwarder, every packet the mote sends goes to every connected
client, and every packet a client sends is written to the mote as an acknowledged
(protocol 65) frame. The link is an endpoint from motebase.gateway.transport, normally a
``ReconnectingEndpoint``, so an unplugged mote is reopened while the TCP clients stay
connected.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from motebase.gateway.protocol.sf import IPNetwork, RefusedClients, SerialForwarderServer
from motebase.gateway.session import Endpoint

log = logging.getLogger(__name__)


class SerialForwarder:
    """Bridges ``link`` to SerialForwarder clients on ``host:port`` (port 0: any free)."""

    def __init__(
        self,
        link: Endpoint,
        *,
        host: str = "127.0.0.1",
        port: int = 9002,
        allow: Sequence[IPNetwork] | None = None,
        max_clients: int | None = None,
    ) -> None:
        """``allow`` and ``max_clients``: which clients are served (SerialForwarderServer)."""
        self._link = link
        self._server = SerialForwarderServer(
            host, port, self._to_mote, allow=allow, max_clients=max_clients
        )
        self._closed = threading.Event()
        self._pump = threading.Thread(target=self._to_clients, name="sf-pump", daemon=True)
        self.packets_to_mote = 0
        self.packets_to_clients = 0
        self.unacknowledged = 0

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def client_count(self) -> int:
        return self._server.client_count

    @property
    def refused(self) -> RefusedClients:
        return self._server.refused

    def start(self) -> SerialForwarder:
        self._server.start()
        self._pump.start()
        return self

    def serve_forever(self) -> None:
        """Block until :meth:`close` or :meth:`stop` (from another thread or a signal
        handler) or KeyboardInterrupt."""
        while not self._closed.wait(0.5):
            pass

    def stop(self) -> None:
        """Make :meth:`serve_forever` return; safe in a signal handler (only sets a flag,
        the caller's :meth:`close` does the joining)."""
        self._closed.set()

    def close(self) -> None:
        self._closed.set()
        if self._pump.is_alive():
            self._pump.join(timeout=2.0)
        self._server.close()
        self._link.close()

    def __enter__(self) -> SerialForwarder:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _to_mote(self, packet: bytes) -> None:
        if self._link.write_packet(packet, ack=True):
            self.packets_to_mote += 1
        else:
            self.unacknowledged += 1
            log.warning("mote did not acknowledge a client packet of %d bytes", len(packet))

    def _to_clients(self) -> None:
        while not self._closed.is_set():
            try:
                packets = self._link.read_packets(0.2)
            except ConnectionError as exc:
                log.error("serial link failed: %s", exc)
                self._closed.set()
                return
            for packet in packets:
                self.packets_to_clients += 1
                self._server.broadcast(packet)
