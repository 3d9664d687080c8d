"""The root's UART as a gateway endpoint in virtual time, without a pty or a thread.

A pty or SerialForwarder bridge lets any program talk to the emulated root, but it runs
the network on its own schedule: unpaced it races thousands of epochs ahead of a gateway
that reads it. :class:`VirtualEndpoint` instead gives the gateway's session the root's
serial line directly and lets the session's waiting drive the clock: ``read_packets(t)``
runs the network for ``t`` seconds of virtual time, ``write_packet`` costs the bytes'
time on the line. With ``clock`` as the session's clock, timestamps, deadlines and
epochs all live in virtual time, and a run is as deterministic as the network's seed.

The frames are the ones a MIB510 carries (wire format §2): protocol 65 with a token to
the mote, its 64 acknowledgement, protocol 66 results from it.
"""

from __future__ import annotations

import math

from motebase.emu.network import Network
from motebase.gateway.protocol.framing import Deframer, Protocol, frame_packet, frame_packet_ack
from motebase.gateway.transport.base import LinkStats

#: Bits per byte on the serial line (8N1) and the MIB510's rate for a Mica2.
_BITS_PER_BYTE = 10
SERIAL_BAUD = 57_600
#: How long a writer waits for the mote's acknowledgement (the mote acks at once).
ACK_WAIT_S = 0.05


class VirtualEndpoint:
    """A gateway ``Endpoint`` on ``net``'s root UART that advances ``net`` as it waits."""

    def __init__(self, net: Network, *, baud: int = SERIAL_BAUD) -> None:
        self.net = net
        self._byte_s = _BITS_PER_BYTE / baud
        self._deframer = Deframer()
        self._stats = LinkStats(framing=self._deframer.stats)
        self._packets: list[bytes] = []
        self._acked: set[int] = set()
        self._token = 13

    @property
    def stats(self) -> LinkStats:
        return self._stats

    def clock(self) -> float:
        """Seconds of virtual time: the session's clock for a virtual-time run."""
        return self.net.now_ms / 1000.0

    def read_packets(self, timeout: float) -> list[bytes]:
        """Run the network ``timeout`` seconds and return what the root sent meanwhile."""
        self._advance(timeout)
        packets, self._packets = self._packets, []
        self._stats.packets_in += len(packets)
        return packets

    def write_packet(self, packet: bytes, *, ack: bool = True) -> bool:
        if not ack:
            self._write(frame_packet(packet))
            self._stats.packets_out += 1
            return True
        self._token = (self._token + 1) & 0xFF
        self._acked.discard(self._token)
        self._write(frame_packet_ack(packet, self._token))
        waited = 0.0
        while self._token not in self._acked and waited < ACK_WAIT_S:
            self._advance(self._byte_s * 8)
            waited += self._byte_s * 8
        if self._token not in self._acked:
            self._stats.ack_timeouts += 1
            return False
        self._acked.discard(self._token)
        self._stats.packets_out += 1
        return True

    def close(self) -> None:
        """Nothing to release: the network belongs to the caller."""

    def _write(self, frame: bytes) -> None:
        self.net.uart_write(frame)
        self._advance(len(frame) * self._byte_s)

    def _advance(self, seconds: float) -> None:
        if seconds > 0:
            # Whole microseconds, at least one: a wait of a fraction of one must still move
            # the clock, or a caller waiting for a deadline would wait for ever.
            self.net.run_until((self.net.now_us + max(1, math.ceil(seconds * 1e6))) / 1000.0)
        for frame in self._deframer.feed(self.net.uart_read()):
            if frame.protocol == Protocol.ACK and frame.token is not None:
                self._acked.add(frame.token)
            elif frame.protocol in (Protocol.PACKET_ACK, Protocol.PACKET_NO_ACK):
                # The root never asks the PC for acks (it sends protocol 66); a 65 would
                # need one written back, which a MIB510 host does: count it as a packet.
                self._packets.append(frame.payload)
