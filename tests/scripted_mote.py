"""A scripted basestation mote on the far side of a real pty, for session tests.

A thread owns the master end of ``os.openpty()`` and speaks TinyOS 1.x serial framing
like a TinyDB root: it acknowledges protocol-65 frames with a 64 frame, hands every
packet it receives to a handler, and sends the handler's reply packets (and whatever the
test pushes with ``send``) as protocol-66 frames. The gateway opens ``path``, a symlink
to the pty's slave side; ``unplug`` closes the pty (the gateway sees the device vanish)
and ``replug`` creates a new one behind the same path, like a USB adapter coming back.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
import tty
from collections.abc import Callable
from pathlib import Path
from typing import Any

from motebase.gateway.protocol import (
    UART_ADDR,
    AmType,
    QrType,
    build_mhop,
    build_query_result,
    build_status,
    build_tos_packet,
    parse_query_message,
    parse_status,
    parse_tos_packet,
)
from motebase.gateway.protocol.framing import Deframer, Protocol, frame_ack, frame_packet

Handler = Callable[[bytes], list[bytes]]


class ScriptedMote:
    def __init__(self, link_dir: Path, handler: Handler, *, ack: bool = True) -> None:
        self.path = link_dir / "mote-tty"
        self.handler = handler
        self.ack = ack
        self.received: list[bytes] = []
        self.acked_tokens: list[int] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._master = -1
        self._slave = -1
        self._thread: threading.Thread | None = None
        self.replug()

    # -- link life ------------------------------------------------------------------

    def replug(self) -> None:
        """Create a fresh pty behind ``path`` and start serving it."""
        master, slave = os.openpty()
        tty.setraw(slave)
        tmp = self.path.with_suffix(".new")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        tmp.symlink_to(os.ttyname(slave))
        tmp.replace(self.path)
        self._master, self._slave = master, slave
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, args=(master,), daemon=True)
        self._thread.start()

    def unplug(self) -> None:
        """Close the pty: the gateway's next read or write on it fails.

        The path goes first, as /dev/ttyUSB0 does when an adapter is pulled: left
        dangling at /dev/pts/N it could reach another process's pty once the kernel
        recycles the number, and a reconnecting gateway would open that one.
        """
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        for fd in (self._master, self._slave):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._master = self._slave = -1

    def close(self) -> None:
        self.unplug()

    # -- traffic --------------------------------------------------------------------

    def send(self, packet: bytes) -> None:
        """Send one packet to the gateway as the mote does (protocol 66)."""
        self._write(frame_packet(packet))

    def packets(self, am_type: int) -> list[bytes]:
        with self._lock:
            return [p for p in self.received if p[2] == am_type]

    def wait_for(self, am_type: int, count: int, timeout: float = 10.0) -> list[bytes]:
        """The first ``count`` packets of ``am_type``, waiting for them to arrive."""
        deadline = time.monotonic() + timeout
        while len(packets := self.packets(am_type)) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"got {len(packets)} of {count} AM {am_type} packets")
            time.sleep(0.01)
        return packets[:count]

    def _write(self, data: bytes) -> None:
        with self._lock:
            fd = self._master
        if fd >= 0:
            os.write(fd, data)

    def _serve(self, master: int) -> None:
        deframer = Deframer()
        while not self._stop.is_set():
            ready, _, _ = select.select([master], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(master, 4096)
            except OSError:
                return
            for frame in deframer.feed(chunk):
                if frame.protocol == Protocol.PACKET_ACK and frame.token is not None:
                    if not self.ack:
                        continue
                    with self._lock:
                        self.received.append(frame.payload)
                        self.acked_tokens.append(frame.token)
                    self._write(frame_ack(frame.token))
                elif frame.protocol == Protocol.PACKET_NO_ACK:
                    with self._lock:
                        self.received.append(frame.payload)
                else:
                    continue
                for reply in self.handler(frame.payload):
                    self.send(reply)


class TinyDBRoot:
    """The handler of a TinyDB root as far as a session sees it: answers status requests
    with ``running`` query ids and records the query parts and stops it is sent."""

    def __init__(self, running: list[int] | None = None) -> None:
        self.running = list(running or [])

    def __call__(self, packet: bytes) -> list[bytes]:
        header, data = parse_tos_packet(packet)
        if header["type"] == AmType.STATUS and parse_status(data)["fromBase"]:
            reply = build_status({"fromBase": 0, "queries": self.running})
            return [build_tos_packet(UART_ADDR, AmType.STATUS, header["group"], reply)]
        return []


def query_parts(mote: ScriptedMote) -> list[dict[str, Any]]:
    """The QueryMessages the mote received, decoded."""
    return [parse_query_message(parse_tos_packet(p)[1]) for p in mote.packets(AmType.QUERY)]


def tuple_packet(
    qid: int,
    epoch: int,
    origin: int,
    values: list[Any],
    field_types: list[int],
    *,
    addr: int = UART_ADDR,
) -> bytes:
    """An AM 240 tuple result as the root sends it to the UART."""
    result = build_query_result(
        {"qid": qid, "epoch": epoch, "qrType": QrType.NOT_AGG, "d": {"values": values}},
        field_types,
    )
    return build_tos_packet(addr, AmType.QUERY_RESULT, 0x7D, build_mhop(0, origin, 0, 0, result))


def aggregate_packet(
    qid: int, epoch: int, group: int, expr_idx: int, state: bytes, *, result_idx: int = 0
) -> bytes:
    """An AM 240 aggregate record (qrType 3) from the root."""
    result = build_query_result(
        {
            "qid": qid,
            "epoch": epoch,
            "result_idx": result_idx,
            "qrType": QrType.AGG_SINGLE_FIELD,
            "d": {"groupNo": group, "exprIdx": expr_idx, "state": state},
        }
    )
    return build_tos_packet(UART_ADDR, AmType.QUERY_RESULT, 0x7D, build_mhop(0, 0, 0, 0, result))
