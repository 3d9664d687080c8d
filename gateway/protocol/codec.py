"""Shared construct building blocks and the error-wrapping parse/build entry points.

Every layout module defines its structs with these helpers and decodes through
:func:`parse` / encodes through :func:`build`, so no construct exception leaves the
protocol package and every decoded message is a plain ``dict`` (no construct
``Container`` bookkeeping) that JSON-serialises once bytes are hex-encoded.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import construct as cs

from motebase.gateway.protocol.errors import DecodeError, EncodeError


class _FixedCString(cs.Adapter):  # type: ignore[misc]
    """A char[n] field: text up to the first NUL, NUL-padded on build.

    TinyDB fills such fields with ``strcpy`` into stale buffers, so bytes after the first
    NUL are garbage and are ignored (unlike construct's PaddedString, which keeps them).
    """

    def __init__(self, size: int) -> None:
        super().__init__(cs.Bytes(size))
        self.size = size

    def _decode(self, obj: bytes, context: Any, path: str) -> str:
        return obj.split(b"\0", 1)[0].decode("latin-1")

    def _encode(self, obj: str, context: Any, path: str) -> bytes:
        raw = obj.encode("latin-1")
        if len(raw) > self.size or b"\0" in raw:
            raise cs.ExplicitError(f"string {obj!r} does not fit char[{self.size}]")
        return raw.ljust(self.size, b"\0")


def fixed_cstring(size: int) -> cs.Construct:
    """``char[size]`` holding a NUL-terminated (or exactly ``size``-char) latin-1 string."""
    return _FixedCString(size)


class _Latin1(cs.Adapter):  # type: ignore[misc]
    def _decode(self, obj: bytes, context: Any, path: str) -> str:
        return obj.decode("latin-1")

    def _encode(self, obj: str, context: Any, path: str) -> bytes:
        raw = obj.encode("latin-1")
        if b"\0" in raw:
            raise cs.ExplicitError(f"string {obj!r} contains NUL")
        return raw


def cstring() -> cs.Construct:
    """A NUL-terminated latin-1 string of any length (construct's CString only knows
    the Unicode codecs)."""
    return _Latin1(cs.NullTerminated(cs.GreedyBytes))


def padded_union(size: int, selector: Any, variants: Mapping[Any, cs.Construct]) -> cs.Construct:
    """A C union of ``size`` bytes whose active member is chosen by ``selector(ctx)``.

    Unknown selector values expose the raw bytes as ``{"raw": b"..."}``.
    """
    # FixedSized rather than Padded: the same bytes either way, but construct can compile
    # it (Padded needs the Switch's size, known only from the parsed selector).
    return cs.FixedSized(
        size, cs.Switch(selector, dict(variants), default=cs.Struct("raw" / cs.Bytes(size)))
    )


def to_plain(obj: Any) -> Any:
    """Turn construct containers into plain dicts/lists (dropping ``_io`` and friends)."""
    if isinstance(obj, dict):
        return {k: to_plain(v) for k, v in obj.items() if not str(k).startswith("_")}
    if isinstance(obj, list):
        return [to_plain(v) for v in obj]
    if isinstance(obj, cs.EnumIntegerString):
        return int(obj)
    return obj


def _path_names(path: str | None) -> list[str]:
    if not path:
        return []
    parts = [p.strip() for p in path.split("->")]
    return [p for p in parts if p and not p.startswith("(")]


def field_offset(con: cs.Construct, names: list[str]) -> int | None:
    """Byte offset of the field at ``names`` inside ``con``, when statically known."""
    offset = 0
    current = con
    for name in names:
        while isinstance(current, (cs.Renamed, cs.Padded, cs.FixedSized, cs.Aligned)) or (
            isinstance(current, cs.Adapter) and not isinstance(current, cs.Struct)
        ):
            current = current.subcon
        if not isinstance(current, cs.Struct):
            return None
        for sub in current.subcons:
            if sub.name == name:
                current = sub
                break
            try:
                offset += sub.sizeof()
            except cs.SizeofError:
                return None
        else:
            return None
    return offset


@functools.lru_cache(maxsize=512)
def _compiled(con: cs.Construct) -> cs.Construct | None:
    """``con`` compiled by construct into Python source, or None where it cannot be."""
    try:
        return con.compile()
    except Exception:  # construct raises several kinds for what it cannot compile
        return None


def parse(kind: str, con: cs.Construct, data: bytes, **context: Any) -> dict[str, Any]:
    """Parse ``data`` with ``con``; any failure becomes a :class:`DecodeError`.

    The compiled form of ``con`` parses first, several times faster (issue 14). Input it
    refuses is parsed again by ``con`` itself, whose errors name the field and offset."""
    fast = _compiled(con)
    if fast is not None:
        try:
            plain = to_plain(fast.parse(data, **context))
        except Exception:  # reported below, by the interpreted parse
            pass
        else:
            if isinstance(plain, dict):
                return plain
    try:
        value = con.parse(data, **context)
    except cs.ConstructError as exc:
        names = _path_names(getattr(exc, "path", None))
        reason = str(exc).split("\n", 1)[-1]
        if isinstance(exc, cs.StreamError):
            reason = f"truncated input ({len(data)} bytes): {reason}"
        raise DecodeError(
            kind, reason, field=".".join(names), offset=field_offset(con, names)
        ) from exc
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise DecodeError(kind, f"{type(exc).__name__}: {exc}") from exc
    result = to_plain(value)
    assert isinstance(result, dict)
    return result


def build(kind: str, con: cs.Construct, obj: Any, **context: Any) -> bytes:
    """Build ``obj`` with ``con``; any failure becomes an :class:`EncodeError`."""
    try:
        data = con.build(obj, **context)
    except cs.ConstructError as exc:
        names = _path_names(getattr(exc, "path", None))
        raise EncodeError(kind, str(exc).split("\n", 1)[-1], field=".".join(names)) from exc
    except KeyError as exc:
        raise EncodeError(kind, f"missing field {exc.args[0]!r}", field=str(exc.args[0])) from exc
    except (ValueError, TypeError, AttributeError, IndexError) as exc:
        raise EncodeError(kind, f"{type(exc).__name__}: {exc}") from exc
    assert isinstance(data, bytes)
    return data


def require_length(kind: str, data: bytes, size: int, *, field: str = "") -> None:
    """Raise a descriptive :class:`DecodeError` when ``data`` is shorter than ``size``."""
    if len(data) < size:
        raise DecodeError(
            kind,
            f"truncated input: needs {size} bytes, got {len(data)}",
            field=field,
            offset=len(data),
        )


#: struct format codes as numpy's little-endian types: numpy's own ``L`` and ``l`` are C
#: longs (8 bytes here), struct's standard ones 4.
_NUMPY_CODES = {
    "B": "u1",
    "b": "i1",
    "H": "u2",
    "h": "i2",
    "I": "u4",
    "i": "i4",
    "L": "u4",
    "l": "i4",
    "Q": "u8",
    "q": "i8",
    "f": "f4",
    "d": "f8",
}


def numpy_code(fmt: str) -> str:
    """The little-endian numpy type of a construct ``FormatField``'s format (``<H``)."""
    return "<" + _NUMPY_CODES[fmt.lstrip("<>=!")]
