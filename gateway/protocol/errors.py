"""Typed errors of the protocol layer.

Every failure to decode or encode a message surfaces as one of these, never as a bare
construct exception: callers (the CLI, the gateway session) report the message kind, the
field and the byte offset, and carry on with the next packet.
"""

from __future__ import annotations


class ProtocolError(Exception):
    """Base class of every protocol-layer error."""


class DecodeError(ProtocolError):
    """Bytes that do not form a valid message of the expected kind.

    ``field`` is a dotted path into the message (``"u.ex.value"``), ``offset`` the byte
    offset where that field starts (or where the input ran out), relative to the start of
    the bytes handed to the decoder of ``kind``.
    """

    def __init__(self, kind: str, reason: str, *, field: str = "", offset: int | None = None):
        self.kind = kind
        self.reason = reason
        self.field = field
        self.offset = offset
        where = f" field {field!r}" if field else ""
        at = f" at byte {offset}" if offset is not None else ""
        super().__init__(f"cannot decode {kind}:{where}{at}: {reason}")


class EncodeError(ProtocolError, ValueError):
    """A value that cannot be represented in the wire layout (out of range, too long...)."""

    def __init__(self, kind: str, reason: str, *, field: str = ""):
        self.kind = kind
        self.reason = reason
        self.field = field
        where = f" field {field!r}" if field else ""
        super().__init__(f"cannot encode {kind}:{where}: {reason}")
