"""Serial endpoints over real ptys, pyserial's loop:// and a real SerialForwarder."""

from __future__ import annotations

import os
import select
import threading
import time
import tty
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import serial

from motebase.gateway.protocol.framing import (
    Deframer,
    Frame,
    Protocol,
    frame_ack,
    frame_packet,
    frame_packet_ack,
)
from motebase.gateway.protocol.sf import SerialForwarderServer
from motebase.gateway.transport import ReconnectingEndpoint, SerialEndpoint, open_endpoint


class Peer:
    """The mote side of a pty: records the frames it reads, optionally acks 65 frames."""

    def __init__(self, *, ack: bool = True) -> None:
        self.master, slave = os.openpty()
        tty.setraw(slave)  # no echo before the endpoint opens the slave
        self.path = os.ttyname(slave)
        self._slave = slave
        self.ack = ack
        self.frames: list[Frame] = []
        self._deframer = Deframer()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        # select() with a timeout: a read blocked in another thread would keep the master
        # open after close(), and the endpoint would never see the hangup.
        while not self._stop.is_set():
            if not select.select([self.master], [], [], 0.05)[0]:
                continue
            try:
                data = os.read(self.master, 1024)
            except OSError:
                return
            for frame in self._deframer.feed(data):
                self.frames.append(frame)
                if self.ack and frame.protocol == Protocol.PACKET_ACK:
                    assert frame.token is not None
                    os.write(self.master, frame_ack(frame.token))

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        os.close(self.master)
        os.close(self._slave)


def _eventually(predicate: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


def _read_until(endpoint: object, count: int, timeout: float = 10.0) -> list[bytes]:
    got: list[bytes] = []
    deadline = time.monotonic() + timeout
    while len(got) < count:
        assert time.monotonic() < deadline, f"only {got!r} arrived"
        got += endpoint.read_packets(0.2)  # type: ignore[attr-defined]
    return got


@pytest.fixture
def peer() -> Iterator[Peer]:
    p = Peer()
    yield p
    p.close()


def test_write_waits_for_the_ack_with_java_tokens(peer: Peer) -> None:
    with SerialEndpoint(serial.Serial(peer.path, 57600)) as endpoint:
        assert endpoint.write_packet(b"\xff\xff\x65\x7d\x00")
        assert endpoint.write_packet(b"\x7e\x7d")
        assert endpoint.write_packet(b"noack", ack=False)
        _eventually(lambda: len(peer.frames) == 3)
    assert [(f.protocol, f.token, f.payload) for f in peer.frames] == [
        (Protocol.PACKET_ACK, 14, b"\xff\xff\x65\x7d\x00"),
        (Protocol.PACKET_ACK, 15, b"\x7e\x7d"),
        (Protocol.PACKET_NO_ACK, None, b"noack"),
    ]


def test_unacked_write_retries_then_fails() -> None:
    silent = Peer(ack=False)
    try:
        endpoint = SerialEndpoint(serial.Serial(silent.path, 57600), ack_timeout=0.2, retries=1)
        assert endpoint.write_packet(b"hello") is False
        assert endpoint.stats.ack_timeouts == 2
        endpoint.close()
        _eventually(lambda: len(silent.frames) == 2)
        assert [f.token for f in silent.frames] == [14, 15]
    finally:
        silent.close()


def test_incoming_frames_are_acked_and_delivered(peer: Peer) -> None:
    with open_endpoint(peer.path, platform="mica") as endpoint:
        corrupt = bytearray(frame_packet(b"broken"))
        corrupt[3] ^= 0xFF
        peer.send(
            b"noise" + frame_packet_ack(b"first", 99) + bytes(corrupt) + frame_packet(b"second")
        )
        assert _read_until(endpoint, 2) == [b"first", b"second"]
        _eventually(lambda: any(f.protocol == Protocol.ACK for f in peer.frames))
        assert [(f.protocol, f.token) for f in peer.frames] == [(Protocol.ACK, 99)]
        assert endpoint.stats.framing.bad_crc == 1
        assert endpoint.stats.acks_sent == 1 and endpoint.stats.packets_in == 2


def test_loop_url_acks_its_own_frames() -> None:
    with open_endpoint("loop://") as endpoint:
        assert endpoint.write_packet(b"looped")  # the 65 comes back, is acked, the 64 comes back
        assert _read_until(endpoint, 1) == [b"looped"]


def test_open_errors() -> None:
    with pytest.raises(ValueError, match="unknown platform"):
        open_endpoint("loop://", platform="telosb")
    with pytest.raises(OSError):
        open_endpoint("/nonexistent/tty")
    with pytest.raises(ValueError, match="host:port"):
        open_endpoint("sf://nohost")


def test_pty_reconnect_keeps_decoded_packets(tmp_path: Path) -> None:
    link = tmp_path / "mote-tty"
    first = Peer()
    link.symlink_to(first.path)
    drops: list[BaseException] = []
    endpoint = open_endpoint(str(link), reconnect=True, on_drop=drops.append)
    assert isinstance(endpoint, ReconnectingEndpoint)
    first.send(frame_packet(b"before"))
    _eventually(lambda: endpoint.stats.packets_in == 1)  # decoded, not yet read
    second = Peer()
    try:
        link.unlink()
        link.symlink_to(second.path)  # the device comes back behind the same path...
        first.close()  # ...once the old one is gone
        got = []
        deadline = time.monotonic() + 15
        while b"after" not in got:
            assert time.monotonic() < deadline, f"got {got!r}"
            got += endpoint.read_packets(0.2)
            if endpoint.connected and drops:
                second.send(frame_packet(b"after"))
        assert got[0] == b"before"
        assert len(drops) == 1 and endpoint.stats.reconnects == 1
        assert endpoint.write_packet(b"ack me")
    finally:
        endpoint.close()
        second.close()


def test_serial_forwarder_restart() -> None:
    from_gateway: list[bytes] = []
    server = SerialForwarderServer("127.0.0.1", 0, from_gateway.append).start()
    port = server.port
    drops: list[BaseException] = []
    endpoint = open_endpoint(f"sf://127.0.0.1:{port}", reconnect=True, on_drop=drops.append)
    try:
        _eventually(lambda: server.client_count == 1)
        server.broadcast(b"before")
        assert _read_until(endpoint, 1) == [b"before"]
        assert endpoint.write_packet(b"up")
        _eventually(lambda: from_gateway == [b"up"])
        server.close()
        while not drops:
            assert endpoint.read_packets(0.2) == []
        server = SerialForwarderServer("127.0.0.1", port, from_gateway.append).start()
        deadline = time.monotonic() + 15
        while server.client_count == 0:
            assert time.monotonic() < deadline
            endpoint.read_packets(0.2)
        server.broadcast(b"after")
        assert _read_until(endpoint, 1) == [b"after"]
        assert endpoint.stats.reconnects == 1
    finally:
        endpoint.close()
        server.close()
