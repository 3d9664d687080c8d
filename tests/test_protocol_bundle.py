"""The radio-only bundle (AM 241, firmware/result/bundle.h) as construct reads it: the same
golden bytes as firmware/tests/test_result.c, so both sides hold to one layout."""

from __future__ import annotations

import pytest

from motebase.gateway.protocol.errors import DecodeError
from motebase.gateway.protocol.motebase import parse_bundle
from motebase.gateway.protocol.result import QueryResult

# qid 5, epoch 0x0102, a tuple of nodeid 7 and light 0x400 (test_result.c `tuple`), its
# time stamp left out
TUPLE = bytes(
    [0x05, 0x00, 0x02, 0x01, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    + [0x05, 0x02, 0x03, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x04]
    + [0] * 18
)
ITEM = bytes([0x34, 0x12, 15, 0x05, 0x00, 0x02, 0x01, 0x02]) + TUPLE[14:24]


def test_item_golden() -> None:
    assert parse_bundle(ITEM) == [(0x1234, TUPLE)]
    result = QueryResult.parse(TUPLE)
    assert (result.qid, result.epoch, result.d.numFields, result.d.notNull) == (5, 0x0102, 2, 3)


def test_trailing_zeros_come_back() -> None:
    short = bytes([9, 0, 12]) + ITEM[3:15]  # nodeid's low byte 7 ends it
    ((origin, qr),) = parse_bundle(short)
    assert origin == 9
    assert qr == TUPLE[:21] + bytes(21)


def test_two_items() -> None:
    assert parse_bundle(ITEM + ITEM) == [(0x1234, TUPLE)] * 2


@pytest.mark.parametrize(
    "body",
    [
        ITEM + b"\xee",  # a stray byte
        ITEM[:-1],  # truncated
        ITEM[:2] + bytes([10]) + ITEM[3:13],  # shorter than a tuple header
        ITEM[:7] + b"\x04" + ITEM[8:],  # neither a tuple nor a record
    ],
)
def test_malformed_is_refused(body: bytes) -> None:
    with pytest.raises(DecodeError):
        parse_bundle(body)


# test_result.c `later`: epoch 0x0103, nodeid 9 and light 0x10 after `first` (TUPLE)
LATER = bytes(
    [0x05, 0x00, 0x03, 0x01, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    + [0x05, 0x02, 0x03, 0x00, 0x00, 0x00, 0x09, 0x00, 0x10]
    + [0] * 19
)
SHORT = bytes([0x09, 0x00, 0x80 + 3, 0x01, 0x09, 0x00, 0x10])  # epoch: the first's + 1


def test_short_items_take_the_first_ones_header() -> None:
    assert parse_bundle(ITEM + SHORT + SHORT) == [(0x1234, TUPLE)] + [(9, LATER)] * 2


def test_a_short_items_epoch_steps_back_and_wraps() -> None:
    back = SHORT[:3] + bytes([0x81]) + SHORT[4:]  # the first's - 127
    ((_, _), (_, qr)) = parse_bundle(ITEM + back)
    assert QueryResult.parse(qr).epoch == 0x0102 - 127
    first = ITEM[:5] + bytes([0xFF, 0xFF]) + ITEM[7:]  # epoch 0xFFFF
    ((_, _), (_, qr)) = parse_bundle(first + SHORT[:3] + bytes([3]) + SHORT[4:])
    assert QueryResult.parse(qr).epoch == 2


def test_a_bundle_cannot_open_with_a_short_item() -> None:
    with pytest.raises(DecodeError, match="first item is short"):
        parse_bundle(SHORT + ITEM)


# test_result.c test_bundle_records: qid 7, epoch 300, time 0x01020304; MAX (expr 0, state
# 0x1234) and COUNT (expr 1, 25), each whole with its timeSyncData, trailing zeros left off
TIME = bytes([0, 0x04, 0x03, 0x02, 0x01])
MAX_ITEM = bytes([5, 0, 15, 7, 0, 0x2C, 0x01, 3]) + TIME + bytes([0, 0, 0, 0x34, 0x12])
COUNT_ITEM = bytes([5, 0, 14, 7, 1, 0x2C, 0x01, 3]) + TIME + bytes([0, 0, 1, 25])


def _record(idx: int, expr: int, state: bytes) -> bytes:
    head = bytes([7, idx, 0x2C, 0x01, 3]) + TIME + bytes(4)
    return head + bytes([0, 0, expr]) + state.ljust(25, b"\0")


def test_records_travel_whole_with_their_time() -> None:
    assert parse_bundle(MAX_ITEM + COUNT_ITEM) == [
        (5, _record(0, 0, b"\x34\x12")),
        (5, _record(1, 1, b"\x19")),
    ]
    record = QueryResult.parse(_record(1, 1, b"\x19"))
    assert (record.qrType, record.d.exprIdx, record.d.state[0]) == (3, 1, 25)


def test_no_short_item_after_a_record() -> None:
    with pytest.raises(DecodeError):
        parse_bundle(MAX_ITEM + SHORT)
