"""A Crossbow MIB510 with an ATmega128 on it, on a pty, for avrdude to program in tests.

The board is what no CI machine has; avrdude, which users run, is the real one. The
model answers the STK500 version 1 protocol (Atmel AVR061) as avrdude's ``mib510``
programmer speaks it: the board's 9-byte ISP handshake first (0xAA 0x55 0x55 0xAA 0x17
0x51 0x31 0x13, then 1 to take the line from the mote, 0 to give it back), word addresses
for flash, fixed 256-byte blocks, and a page read that ends with INSYNC instead of OK
(the MIB510's quirk, which avrdude expects of it). Every command ends with 0x20; every
answer is INSYNC (0x14), the result, OK (0x10). Flash is 128 KiB, erased to 0xFF by the
chip-erase instruction; the signature is the ATmega128's 1E 97 02.
"""

from __future__ import annotations

import os
import threading
import tty

INSYNC, OK, EOP = 0x14, 0x10, 0x20
SIGNATURE = bytes([0x1E, 0x97, 0x02])
FLASH_SIZE = 128 * 1024
HANDSHAKE = bytes([0xAA, 0x55, 0x55, 0xAA, 0x17, 0x51, 0x31, 0x13])
#: Bytes after the command byte, EOP included, of the fixed-length commands.
_FIXED = {0x30: 1, 0x41: 2, 0x40: 3, 0x42: 21, 0x50: 1, 0x51: 1, 0x55: 3, 0x56: 5, 0x74: 4, 0x75: 1}


class Mib510:
    """The board on a pty: :attr:`port` is the path avrdude opens."""

    def __init__(self) -> None:
        self.master, slave = os.openpty()
        tty.setraw(slave)
        self.port = os.ttyname(slave)
        self._slave = slave  # held open so the pty lives while avrdude reopens it
        self.flash = bytearray([0xFF]) * FLASH_SIZE
        self.isp_sessions: list[int] = []  # the handshake's last byte, in order
        self.errors: list[str] = []
        self._address = 0  # word address
        self._buffer = bytearray()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        os.close(self._slave)
        self._thread.join(timeout=5)
        os.close(self.master)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                return  # the slave side closed: nobody will talk to us again
            self._buffer.extend(chunk)
            while self._step():
                pass

    def _step(self) -> bool:
        """Answer the command at the head of the buffer, if it is complete."""
        buf = self._buffer
        if not buf:
            return False
        if buf[0] == HANDSHAKE[0]:
            if len(buf) < 9:
                return False
            if bytes(buf[:8]) != HANDSHAKE:
                self.errors.append(f"bad handshake {bytes(buf[:9]).hex()}")
            self.isp_sessions.append(buf[8])
            del buf[:9]
            self._reply(bytes([INSYNC, OK]))
            return True
        if buf[0] == 0x64:  # PROG_PAGE: length hi, lo, memtype, data, EOP
            if len(buf) < 4 or len(buf) < 5 + (buf[1] << 8 | buf[2]):
                return False
            length = buf[1] << 8 | buf[2]
            command = bytes(buf[: 5 + length])
            del buf[: 5 + length]
            self._prog_page(command[3], command[4 : 4 + length], command[-1])
            return True
        need = _FIXED.get(buf[0])
        if need is None:
            self.errors.append(f"unknown command 0x{buf[0]:02x}")
            del buf[:1]
            self._reply(bytes([0x15]))  # NOSYNC: avrdude resyncs
            return True
        if len(buf) < 1 + need:
            return False
        command = bytes(buf[: 1 + need])
        del buf[: 1 + need]
        if command[-1] != EOP:
            self.errors.append(f"command {command.hex()} without EOP")
        self._reply(self._answer(command))
        return True

    def _answer(self, command: bytes) -> bytes:
        op = command[0]
        if op == 0x41:  # GET_PARAMETER: software version 1.x, anything else 0
            value = {0x81: 1, 0x82: 7}.get(command[1], 0)
            return bytes([INSYNC, value, OK])
        if op == 0x55:
            self._address = command[1] | command[2] << 8
        elif op == 0x56:
            return bytes([INSYNC, self._universal(command[1:5]), OK])
        elif op == 0x74:
            length = command[1] << 8 | command[2]
            start = self._address * 2
            return bytes([INSYNC]) + bytes(self.flash[start : start + length]) + bytes([INSYNC])
        elif op == 0x75:
            return bytes([INSYNC]) + SIGNATURE + bytes([OK])
        return bytes([INSYNC, OK])

    def _universal(self, instruction: bytes) -> int:
        """The ATmega128's serial-programming instructions avrdude sends through."""
        if instruction[0] == 0x30:  # read signature byte
            return SIGNATURE[instruction[2] & 3]
        if instruction[:2] == b"\xac\x80":  # chip erase
            self.flash[:] = bytes([0xFF]) * FLASH_SIZE
        return 0xFF if instruction[0] in (0x50, 0x58) else 0x00  # fuse and lock reads

    def _prog_page(self, memtype: int, data: bytes, eop: int) -> None:
        if memtype != ord("F") or eop != EOP:
            self.errors.append(f"page write to memory {memtype:#x} (eop {eop:#x})")
        start = self._address * 2
        self.flash[start : start + len(data)] = data
        self._reply(bytes([INSYNC, OK]))

    def _reply(self, data: bytes) -> None:
        os.write(self.master, data)
