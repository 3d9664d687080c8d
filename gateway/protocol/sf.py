"""SerialForwarder TCP protocol (Java ``SFProtocol``), wire format §2.4, both sides.

Handshake, both directions: ``'T'`` and a version byte, ``' '`` (original) or ``'!'``
(adds a platform exchange); the lower version wins. With ``'!'`` each side then sends a
4-byte little-endian platform id. After that every packet is one length byte followed by
that many bytes of serial packet (TOS_Msg header + data, no framing, no CRC).

:class:`SerialForwarderServer` serves clients from threads: packets from a client go to
``on_client_packet``, :meth:`~SerialForwarderServer.broadcast` sends a packet to every client.
The protocol has no authentication: any client that connects may send packets to the motes,
so the server can accept only some addresses (``allow``) and only so many clients at once
(``max_clients``); a refused connection is closed at once and counted.
:class:`SFClient` is the blocking client.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import construct as cs

from motebase.gateway.protocol.codec import build
from motebase.gateway.protocol.errors import EncodeError, ProtocolError

log = logging.getLogger(__name__)

VERSION_ORIGINAL = ord(" ")
VERSION_PLATFORM = ord("!")
#: Platform ids of ``Platform.java``: 1 is the avrmote (mica/mica2/mica2dot) family.
PLATFORM_UNKNOWN = 0
PLATFORM_AVRMOTE = 1

Hello = cs.Struct("magic" / cs.Const(b"T"), "version" / cs.Int8ul)
PlatformId = cs.Int32ul
SfPacket = cs.Prefixed(cs.Int8ul, cs.GreedyBytes)

HANDSHAKE_TIMEOUT = 5.0

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
#: Loopback addresses: the only clients of a server that listens on loopback.
LOOPBACK: tuple[IPNetwork, ...] = (
    ipaddress.ip_network("127.0.0.0/8"),
    ipaddress.ip_network("::1/128"),
)


@dataclass
class RefusedClients:
    """Connections a :class:`SerialForwarderServer` closed at once."""

    not_allowed: int = 0  # address outside ``allow``
    over_limit: int = 0  # ``max_clients`` already connected


def address_allowed(address: str, allow: Sequence[IPNetwork] | None) -> bool:
    """Whether a client at ``address`` may connect; ``allow`` None accepts any."""
    if allow is None:
        return True
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in network for network in allow if network.version == ip.version)


class SFProtocolError(ProtocolError):
    """The peer does not speak the SerialForwarder protocol."""


class _Stream:
    """A socket with a receive buffer, so a read that times out loses nothing."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buf = bytearray()
        self._send_lock = threading.Lock()

    def _fill(self, n: int, deadline: float | None) -> bool:
        """Buffer at least ``n`` bytes; False if ``deadline`` passes first, ConnectionError
        on EOF."""
        while len(self._buf) < n:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(4096)
            except TimeoutError:
                return False
            if not chunk:
                raise ConnectionError("SerialForwarder peer closed the connection")
            self._buf += chunk
        return True

    def _take(self, start: int, end: int) -> bytes:
        data = bytes(self._buf[start:end])
        del self._buf[:end]
        return data

    def read_exact(self, n: int, timeout: float | None) -> bytes | None:
        """``n`` bytes, or None when ``timeout`` passes first (nothing is consumed)."""
        if not self._fill(n, _deadline(timeout)):
            return None
        return self._take(0, n)

    def read_packet(self, timeout: float | None) -> bytes | None:
        deadline = _deadline(timeout)
        if not self._fill(1, deadline) or not self._fill(1 + self._buf[0], deadline):
            return None
        return self._take(1, 1 + self._buf[0])

    def send(self, data: bytes) -> None:
        with self._send_lock:
            self.sock.sendall(data)


def _deadline(timeout: float | None) -> float | None:
    return None if timeout is None else time.monotonic() + timeout


def encode_sf_packet(packet: bytes) -> bytes:
    if len(packet) > 255:
        raise EncodeError("SerialForwarder packet", f"{len(packet)} bytes exceed 255")
    return build("SerialForwarder packet", SfPacket, packet)


def handshake(
    stream: _Stream, version: int = VERSION_PLATFORM, platform: int = PLATFORM_AVRMOTE
) -> tuple[int, int | None]:
    """Run the handshake; returns the negotiated version and the partner's platform id
    (None with the original version)."""
    stream.send(build("SerialForwarder hello", Hello, {"version": version}))
    hello = stream.read_exact(2, HANDSHAKE_TIMEOUT)
    if hello is None or hello[0:1] != b"T" or hello[1] < VERSION_ORIGINAL:
        raise SFProtocolError(f"bad SerialForwarder handshake {hello!r}")
    negotiated = min(version, hello[1])
    if negotiated < VERSION_PLATFORM:
        return negotiated, None
    stream.send(PlatformId.build(platform))
    partner = stream.read_exact(4, HANDSHAKE_TIMEOUT)
    if partner is None:
        raise SFProtocolError("SerialForwarder peer sent no platform id")
    return negotiated, int(PlatformId.parse(partner))


class SFClient:
    """Blocking SerialForwarder client."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        version: int = VERSION_PLATFORM,
        platform: int = PLATFORM_AVRMOTE,
        connect_timeout: float = HANDSHAKE_TIMEOUT,
    ) -> None:
        sock = socket.create_connection((host, port), timeout=connect_timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._stream = _Stream(sock)
        try:
            self.version, self.partner_platform = handshake(self._stream, version, platform)
        except BaseException:
            sock.close()
            raise

    def read_packet(self, timeout: float | None = None) -> bytes | None:
        """The next packet, None after ``timeout`` seconds; ConnectionError on EOF."""
        return self._stream.read_packet(timeout)

    def write_packet(self, packet: bytes) -> None:
        self._stream.send(encode_sf_packet(packet))

    def close(self) -> None:
        self._stream.sock.close()


class SerialForwarderServer:
    """Thread-based SerialForwarder server. ``port`` 0 picks a free port (see :attr:`port`)."""

    def __init__(
        self,
        host: str,
        port: int,
        on_client_packet: Callable[[bytes], None],
        *,
        version: int = VERSION_PLATFORM,
        platform: int = PLATFORM_AVRMOTE,
        allow: Sequence[IPNetwork] | None = None,
        max_clients: int | None = None,
    ) -> None:
        """``allow``: the client networks accepted (None: any); ``max_clients``: how many
        connections are served at once (None: no limit)."""
        self.host = host
        self._allow = None if allow is None else tuple(allow)
        self._max_clients = max_clients
        self._connections = 0  # accepted and not yet closed, handshaking ones too
        self.refused = RefusedClients()
        self._requested_port = port
        self._on_client_packet = on_client_packet
        self._version = version
        self._platform = platform
        self._listener: socket.socket | None = None
        self._clients: list[_Stream] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._threads: list[threading.Thread] = []

    @property
    def port(self) -> int:
        if self._listener is None:
            raise RuntimeError("SerialForwarderServer not started")
        return int(self._listener.getsockname()[1])

    @property
    def client_count(self) -> int:
        with self._lock:
            return len(self._clients)

    def start(self) -> SerialForwarderServer:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.host, self._requested_port))
        listener.listen(8)
        listener.settimeout(0.2)  # lets the accept loop notice close()
        self._listener = listener
        self._spawn(self._accept_loop, "sf-accept")
        return self

    def broadcast(self, packet: bytes) -> None:
        data = encode_sf_packet(packet)
        with self._lock:
            clients = list(self._clients)
        for client in clients:
            try:
                client.send(data)
            except OSError as exc:
                log.info("SerialForwarder client dropped: %s", exc)
                self._drop(client)

    def close(self) -> None:
        self._closed.set()
        if self._listener is not None:
            self._listener.close()
        with self._lock:
            clients, self._clients = self._clients, []
        for client in clients:
            _shutdown(client.sock)
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout=2.0)

    def __enter__(self) -> SerialForwarderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _spawn(self, target: Callable[..., None], name: str, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._closed.is_set():
            try:
                sock, addr = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if not self._admit(addr[0]):
                _shutdown(sock)
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._spawn(self._serve_client, f"sf-client-{addr[1]}", _Stream(sock))

    def _admit(self, address: str) -> bool:
        """Count a new connection in, or count it refused (and log why)."""
        if not address_allowed(address, self._allow):
            self.refused.not_allowed += 1
            log.warning("SerialForwarder refused %s: address not allowed", address)
            return False
        with self._lock:
            full = self._max_clients is not None and self._connections >= self._max_clients
            if not full:
                self._connections += 1
        if full:
            self.refused.over_limit += 1
            log.warning(
                "SerialForwarder refused %s: %d clients already connected",
                address,
                self._max_clients,
            )
            return False
        return True

    def _serve_client(self, client: _Stream) -> None:
        try:
            self._serve_admitted(client)
        finally:
            with self._lock:
                self._connections -= 1

    def _serve_admitted(self, client: _Stream) -> None:
        try:
            handshake(client, self._version, self._platform)
        except (OSError, ProtocolError) as exc:
            log.info("SerialForwarder handshake failed: %s", exc)
            client.sock.close()
            return
        with self._lock:
            if self._closed.is_set():
                client.sock.close()
                return
            self._clients.append(client)
        try:
            while not self._closed.is_set():
                packet = client.read_packet(0.5)
                if packet is not None:
                    self._deliver(packet)
        except OSError:
            pass
        finally:
            self._drop(client)

    def _deliver(self, packet: bytes) -> None:
        try:
            self._on_client_packet(packet)
        except Exception:  # a consumer bug must not kill the connection
            log.exception("on_client_packet failed")

    def _drop(self, client: _Stream) -> None:
        with self._lock:
            if client in self._clients:
                self._clients.remove(client)
        _shutdown(client.sock)


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
