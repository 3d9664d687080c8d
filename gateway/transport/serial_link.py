"""A basestation on a serial line (device, pty or any pyserial URL), framed per wire
format §2 and acknowledged like Java's ``Packetizer``.

Outgoing packets that ask for an ack go as protocol 65 with an 8-bit token (first token
14: initial 13, incremented before use) and the writer waits up to ``ack_timeout`` for the
64 frame echoing it, retrying ``retries`` times with fresh tokens. Incoming 65 frames are
acked at once; 66 frames are packets; a 255 reply (the other side did not know our
protocol byte) is logged.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol as TypingProtocol

from motebase.gateway.protocol.framing import (
    Deframer,
    Frame,
    Protocol,
    frame_ack,
    frame_packet,
    frame_packet_ack,
)
from motebase.gateway.transport.base import POLL_INTERVAL, ThreadedEndpoint

log = logging.getLogger(__name__)

INITIAL_TOKEN = 13
ACK_TIMEOUT = 1.0
DEFAULT_RETRIES = 2


class SerialPort(TypingProtocol):
    """What the endpoint needs of a pyserial port. ``serial_for_url`` is typed as
    returning ``SerialBase``, which lacks ``in_waiting``; every concrete port has it."""

    port: str | None
    timeout: float | None

    @property
    def in_waiting(self) -> int: ...

    def read(self, size: int = 1) -> bytes: ...

    def write(self, data: bytes, /) -> int | None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


class SerialEndpoint(ThreadedEndpoint):
    def __init__(
        self,
        port: SerialPort,
        *,
        name: str | None = None,
        ack_timeout: float = ACK_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        tap: Callable[[bytes], None] | None = None,
    ) -> None:
        """``tap`` gets every chunk of bytes read from the port, as read, before
        deframing (a capture: gateway/capture.py); it runs on the reader thread."""
        super().__init__(name or str(port.port))
        self._tap = tap
        self._port = port
        self._port.timeout = POLL_INTERVAL
        self._deframer = Deframer()
        self._stats.framing = self._deframer.stats
        self._ack_timeout = ack_timeout
        self._retries = retries
        self._token = INITIAL_TOKEN
        self._acked: set[int] = set()
        self._write_lock = threading.Lock()
        self._start()

    def _receive(self) -> list[bytes]:
        chunk = self._port.read(max(1, self._port.in_waiting))
        if chunk and self._tap is not None:
            self._tap(chunk)
        packets: list[bytes] = []
        for frame in self._deframer.feed(chunk):
            packet = self._dispatch(frame)
            if packet is not None:
                packets.append(packet)
        return packets

    def _dispatch(self, frame: Frame) -> bytes | None:
        if frame.protocol == Protocol.PACKET_ACK:
            assert frame.token is not None
            self._send(frame_ack(frame.token))
            self._stats.acks_sent += 1
            return frame.payload
        if frame.protocol == Protocol.PACKET_NO_ACK:
            return frame.payload
        if frame.protocol == Protocol.ACK:
            with self._cond:
                assert frame.token is not None
                self._acked.add(frame.token)
                self._cond.notify_all()
        else:
            log.warning("%s: peer does not know protocol %d", self.name, frame.payload[0])
        return None

    def _send(self, data: bytes) -> None:
        with self._write_lock:
            self._port.write(data)
            self._port.flush()

    def _next_token(self) -> int:
        with self._cond:
            self._token = (self._token + 1) & 0xFF
            self._acked.discard(self._token)
            return self._token

    def write_packet(self, packet: bytes, *, ack: bool = True) -> bool:
        self._check_link()
        if not ack:
            self._send(frame_packet(packet))
            self._stats.packets_out += 1
            return True
        for _attempt in range(1 + self._retries):
            token = self._next_token()
            self._send(frame_packet_ack(packet, token))
            with self._cond:
                acked = self._cond.wait_for(
                    lambda t=token: t in self._acked or self._error is not None,  # type: ignore[misc]
                    self._ack_timeout,
                )
                if acked and token in self._acked:
                    self._acked.discard(token)
                    self._stats.packets_out += 1
                    return True
            self._check_link()
            self._stats.ack_timeouts += 1
        return False

    def _close_link(self) -> None:
        self._port.close()
