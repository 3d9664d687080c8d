"""Who may reach a SerialForwarder: the protocol has no authentication, so `mote sf` serves
loopback by default, --allow restricts the client addresses, --max-clients the number of
clients; a refused client is closed at once and counted. SIGTERM ends `mote sf` and
`mote emulate` as Ctrl-C does, with exit status 0."""

from __future__ import annotations

import ipaddress
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from scripted_mote import ScriptedMote, TinyDBRoot
from test_query_sigterm import StderrLines

from motebase.gateway.protocol.sf import LOOPBACK, SerialForwarderServer, SFClient, address_allowed

MOTE = "from motebase.gateway.cli.main import main; main()"


def _refused(port: int) -> bool:
    """Whether the server closes a new client at once (no handshake reply)."""
    try:
        client = SFClient("127.0.0.1", port, connect_timeout=10.0)
    except (ConnectionError, OSError):
        return True
    client.close()
    return False


def _wait_for(condition: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_addresses_outside_allow_are_refused() -> None:
    assert address_allowed("127.0.0.1", LOOPBACK)
    assert address_allowed("::1", LOOPBACK)
    assert address_allowed("::ffff:127.0.0.1", LOOPBACK)
    assert not address_allowed("192.168.1.5", LOOPBACK)
    assert address_allowed("192.168.1.5", None)
    lan = (ipaddress.ip_network("10.1.0.0/16"),)
    assert address_allowed("10.1.2.3", lan)
    assert not address_allowed("10.2.0.1", lan)

    with SerialForwarderServer("127.0.0.1", 0, lambda _: None, allow=lan) as server:
        assert _refused(server.port)
        assert (server.refused.not_allowed, server.refused.over_limit) == (1, 0)
        assert server.client_count == 0


def test_clients_past_the_limit_are_refused_until_one_leaves() -> None:
    with SerialForwarderServer("127.0.0.1", 0, lambda _: None, max_clients=2) as server:
        first = SFClient("127.0.0.1", server.port)
        second = SFClient("127.0.0.1", server.port)
        _wait_for(lambda: server.client_count == 2)
        assert _refused(server.port)
        assert (server.refused.not_allowed, server.refused.over_limit) == (0, 1)
        first.close()
        _wait_for(lambda: server.client_count == 1)
        third = SFClient("127.0.0.1", server.port)
        _wait_for(lambda: server.client_count == 2)
        second.close()
        third.close()
        assert server.refused.over_limit == 1


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening_address(port: int) -> str:
    """The local address of the TCP socket listening on ``port`` (/proc/net/tcp)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, port_hex = local.split(":")
        if state == "0A" and int(port_hex, 16) == port:  # 0A: LISTEN
            return str(ipaddress.IPv4Address(bytes(reversed(bytes.fromhex(address)))))
    raise AssertionError(f"nothing listens on {port}")


@pytest.fixture
def mote(tmp_path: Path) -> Iterator[ScriptedMote]:
    scripted = ScriptedMote(tmp_path, TinyDBRoot())
    yield scripted
    scripted.close()


def _serve(
    mote: ScriptedMote, port: int, *options: str
) -> tuple[subprocess.Popen[str], StderrLines]:
    command = [sys.executable, "-c", MOTE, "sf", "--port", str(mote.path), "--listen", str(port)]
    proc = subprocess.Popen(
        [*command, *options], stderr=subprocess.PIPE, text=True, cwd=mote.path.parent
    )
    stderr = StderrLines(proc)
    try:
        # not the warning's "serving on": that comes before the port is bound
        _wait_for(lambda: any(s.startswith("serving ") for s in stderr.text().splitlines()), 120)
    except AssertionError:
        proc.kill()
        raise AssertionError(stderr.text()) from None
    return proc, stderr


def _terminate(proc: subprocess.Popen[str], stderr: StderrLines) -> str:
    proc.send_signal(signal.SIGTERM)
    try:
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr.join()
    assert "Traceback" not in stderr.text()
    return stderr.text()


def test_mote_sf_serves_loopback_by_default_and_ends_on_sigterm(mote: ScriptedMote) -> None:
    port = _free_port()
    proc, stderr = _serve(mote, port, "--max-clients", "1")
    try:
        assert _listening_address(port) == "127.0.0.1"
        client = SFClient("127.0.0.1", port)
        assert _refused(port)  # the second client, past --max-clients 1
        client.close()
    finally:
        text = _terminate(proc, stderr)
    assert "warning" not in text
    assert "refused 0 clients not allowed, 1 over --max-clients" in text


def test_mote_sf_on_another_host_warns_and_allow_restricts(mote: ScriptedMote) -> None:
    port = _free_port()
    proc, stderr = _serve(mote, port, "--host", "0.0.0.0")
    try:
        assert _listening_address(port) == "0.0.0.0"
        SFClient("127.0.0.1", port).close()  # any client
    finally:
        text = _terminate(proc, stderr)
    assert "the SerialForwarder protocol has no authentication" in text
    assert "refused 0 clients not allowed, 0 over --max-clients" in text

    proc, stderr = _serve(mote, port, "--host", "0.0.0.0", "--allow", "10.0.0.0/8")
    try:
        assert _refused(port)  # loopback is not in 10/8
    finally:
        text = _terminate(proc, stderr)
    assert "no authentication" not in text
    assert "refused 1 clients not allowed, 0 over --max-clients" in text


def test_mote_emulate_ends_on_sigterm_with_its_summary(tmp_path: Path) -> None:
    # Not from the checkout: `-c` puts the working directory first on sys.path, and the
    # source tree's emu/ has no built extension when the package is installed as a wheel.
    proc = subprocess.Popen(
        [sys.executable, "-c", MOTE, "emulate", "--nodes", "4", "--pty", "--realtime"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
    )
    proc.stderr = proc.stdout  # StderrLines reads the merged output as it comes
    out = StderrLines(proc)
    try:
        _wait_for(lambda: "pty:" in out.text(), 120)  # a loaded CI machine starts slowly
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out.join()
    assert "Traceback" not in out.text()
    assert "4 nodes after" in out.text()  # the summary table's title
    assert "events:" in out.text()
