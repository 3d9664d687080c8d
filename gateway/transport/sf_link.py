"""A basestation behind a SerialForwarder (``sf://host:port``).

The SerialForwarder owns the serial line and its acknowledgements, so a write here is
done once the packet is on the TCP stream.
"""

from __future__ import annotations

from motebase.gateway.protocol.sf import SFClient
from motebase.gateway.transport.base import POLL_INTERVAL, ThreadedEndpoint


class SFEndpoint(ThreadedEndpoint):
    def __init__(self, host: str, port: int) -> None:
        super().__init__(f"sf://{host}:{port}")
        self._client = SFClient(host, port)
        self._start()

    def _receive(self) -> list[bytes]:
        packet = self._client.read_packet(POLL_INTERVAL)
        return [] if packet is None else [packet]

    def write_packet(self, packet: bytes, *, ack: bool = True) -> bool:
        self._check_link()
        self._client.write_packet(packet)
        self._stats.packets_out += 1
        return True

    def _close_link(self) -> None:
        self._client.close()
