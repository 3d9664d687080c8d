"""Runs of tuple results as numpy records: how the session takes results at the serial
line's full rate.

A basestation's packets come mostly in long runs of tuple results of one query and one
shape (protocol/tuple_lane.py): same AM, length, qid, qrType, numFields and notNull. For
each shape the lane already flattened the construct layouts into little-endian leaves;
here they become one numpy record type, so a run decodes in one ``frombuffer`` and the
session assembles its readings as columns (gateway/assembly.py, ``ReadingBatch``). Runs
are told apart with numpy too, by the bytes that pick a packet's lane and shape. Any
packet no lane takes stays bytes, for the full decoder, in its place in the order.

numpy is imported here and not by tuple_lane.py: ``mote decode`` starts without it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from motebase.gateway.protocol.codec import numpy_code
from motebase.gateway.protocol.result import TIME_SYNC_LEN, TimeSyncStamp
from motebase.gateway.protocol.tuple_lane import (
    NOT_NULL_END,
    QR_TYPE_AT,
    RESULT_AT,
    ResultDecoder,
    TupleShape,
)

#: The bytes of a packet that decide its lane and shape: the AM header (type, group,
#: length), the qid that picks the query's lane, and the shape key's qrType, numFields
#: and notNull (TupleLane._shape). Packets of one length equal there go the same way.
_RUN_KEY_AT = np.array(
    [2, 3, 4, RESULT_AT, QR_TYPE_AT, *range(NOT_NULL_END - 5, NOT_NULL_END)], dtype=np.intp
)

#: TimeSyncStamp as a numpy record, from its fields' own formats.
_TIME_SYNC = np.dtype([(sub.name, numpy_code(sub.subcon.fmtstr)) for sub in TimeSyncStamp.subcons])
assert _TIME_SYNC.itemsize == TIME_SYNC_LEN


def record_dtype(shape: TupleShape) -> np.dtype:
    """One packet of ``shape`` as one numpy record, its fields named by their paths
    (``mhop.originaddr``, ``body.d.values.0``), bytes leaves as ``V`` fields."""
    dtype = shape.record_type
    if dtype is None:
        names = [name for name, _, _, _ in shape.leaves]
        offsets = [at for _, at, _, _ in shape.leaves]
        types = [f"V{size}" if size else numpy_code(code) for _, _, size, code in shape.leaves]
        dtype = np.dtype(
            {"names": names, "formats": types, "offsets": offsets, "itemsize": shape.size}
        )
        shape.record_type = dtype
    return dtype


class TupleRun:
    """Tuple results of one query and one shape that arrived one after the other, one
    numpy record per packet."""

    def __init__(self, shape: TupleShape, records: np.ndarray) -> None:
        self.records = records
        self._shape = shape

    def __len__(self) -> int:
        return len(self.records)

    @property
    def am(self) -> int:
        return self._shape.am

    @property
    def qid(self) -> int:
        return int(self.records["body.qid"][0])

    def select(self, keep: np.ndarray) -> None:
        """Keep only the packets where ``keep`` is true."""
        self.records = self.records[keep]

    def column(self, path: str) -> np.ndarray:
        return self.records[path]

    def stamps(self) -> np.ndarray:
        """Each result's time-sync stamp in ms as int64 (``time_sync_ms``), 0 where the
        sender left it 0."""
        stamps = self.records["body.timeSyncData"].view(_TIME_SYNC)
        return (stamps["timeHigh"].astype(np.int64) << 32) | stamps["timeLow"].astype(np.int64)

    def values(self) -> list[np.ndarray | None]:
        """The tuple's values by field index: a column, or None for a field NULL in the
        shape (and so in every packet of the run)."""
        return [
            None if slot is None else self.records[f"body.d.values.{index}"]
            for index, slot in enumerate(self._shape.values)
        ]


def tuple_runs(decoder: ResultDecoder, packets: Sequence[bytes]) -> list[bytes | TupleRun]:
    """``packets`` in order, each run of tuple results of one query and one shape decoded
    at once; a packet no lane takes stays bytes, for ``decoder.decode``."""
    out: list[bytes | TupleRun] = []
    at = 0
    for size, group in itertools.groupby(map(len, packets)):
        count = sum(1 for _ in group)
        same_size = packets[at : at + count]
        at += count
        if count > 1 and size >= NOT_NULL_END:
            _runs_of_a_size(decoder, same_size, size, out)
            continue
        for packet in same_size:
            shape = decoder.shape_of(packet)
            if shape is None:
                out.append(packet)
            else:
                out.append(TupleRun(shape, np.frombuffer(packet, record_dtype(shape))))
    return out


def _runs_of_a_size(
    decoder: ResultDecoder, packets: Sequence[bytes], size: int, out: list[bytes | TupleRun]
) -> None:
    """Packets of one length: a run wherever the bytes that pick the lane and the shape
    stay the same, told apart with numpy, not a Python step per packet."""
    table = np.frombuffer(b"".join(packets), np.uint8).reshape(-1, size)
    keys = table[:, _RUN_KEY_AT]
    changes = np.flatnonzero((keys[1:] != keys[:-1]).any(axis=1)) + 1
    bounds = [0, *changes.tolist(), len(packets)]
    for start, end in itertools.pairwise(bounds):
        shape = decoder.shape_of(packets[start])
        if shape is None:
            out.extend(packets[start:end])
        else:
            records = table[start:end].reshape(-1).view(record_dtype(shape))
            out.append(TupleRun(shape, records))
