"""SerialForwarder protocol over real TCP on 127.0.0.1."""

from __future__ import annotations

import queue
import socket
import threading
import time

import pytest

from motebase.gateway.protocol.sf import (
    VERSION_ORIGINAL,
    SerialForwarderServer,
    SFClient,
    SFProtocolError,
)


def _wait_for(predicate: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


def test_packets_both_ways_with_platform_handshake() -> None:
    received: queue.Queue[bytes] = queue.Queue()
    with SerialForwarderServer("127.0.0.1", 0, received.put) as server:
        client = SFClient("127.0.0.1", server.port)
        assert (client.version, client.partner_platform) == (ord("!"), 1)
        client.write_packet(b"\x7e\x00\xf0\x7d\x00")
        client.write_packet(b"")
        assert received.get(timeout=5) == b"\x7e\x00\xf0\x7d\x00"
        assert received.get(timeout=5) == b""
        _wait_for(lambda: server.client_count == 1)
        server.broadcast(b"abc")
        server.broadcast(bytes(range(255)))
        assert client.read_packet(5) == b"abc"
        assert client.read_packet(5) == bytes(range(255))
        assert client.read_packet(0.05) is None
        client.close()


def test_broadcast_reaches_every_client_and_version_negotiates_down() -> None:
    with SerialForwarderServer("127.0.0.1", 0, lambda _: None) as server:
        old = SFClient("127.0.0.1", server.port, version=VERSION_ORIGINAL)
        new = SFClient("127.0.0.1", server.port)
        assert old.version == VERSION_ORIGINAL and old.partner_platform is None
        _wait_for(lambda: server.client_count == 2)
        server.broadcast(b"x")
        assert old.read_packet(5) == b"x" and new.read_packet(5) == b"x"
        old.close()
        new.close()


def test_handshake_bytes_on_the_wire() -> None:
    """A raw socket speaking the original protocol by hand: 'T ' then length-prefixed."""
    received: queue.Queue[bytes] = queue.Queue()
    with SerialForwarderServer("127.0.0.1", 0, received.put) as server:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        sock.sendall(b"T ")
        assert sock.recv(2) == b"T!"
        sock.sendall(b"\x03abc")
        assert received.get(timeout=5) == b"abc"
        _wait_for(lambda: server.client_count == 1)
        server.broadcast(b"\x01\x02")
        assert sock.recv(3) == b"\x02\x01\x02"
        sock.close()


def test_client_sees_eof_when_server_closes() -> None:
    server = SerialForwarderServer("127.0.0.1", 0, lambda _: None).start()
    client = SFClient("127.0.0.1", server.port)
    _wait_for(lambda: server.client_count == 1)
    server.close()
    with pytest.raises(ConnectionError):
        client.read_packet(5)
    client.close()


def test_client_rejects_a_peer_that_is_not_a_serial_forwarder() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]

    def bogus() -> None:
        conn, _ = listener.accept()
        conn.sendall(b"HTTP/1.0 400\r\n")
        time.sleep(0.5)
        conn.close()

    threading.Thread(target=bogus, daemon=True).start()
    with pytest.raises(SFProtocolError):
        SFClient("127.0.0.1", port)
    listener.close()
