"""Tuple values decode through one compiled construct per set of field types
(gateway/protocol/result.py): the same values, field for field, as parsing each field
with its own FIELD_VALUE construct, and the same refusals."""

from __future__ import annotations

import construct as cs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from motebase.gateway.protocol.errors import DecodeError
from motebase.gateway.protocol.result import (
    FIELD_VALUE,
    TUPLE_DATA_LEN,
    WireType,
    decode_tuple_values,
)


def one_field_at_a_time(not_null: int, num_fields: int, data: bytes, types: list[int]) -> list:
    values: list = []
    offset = 0
    for i in range(num_fields):
        if not (not_null >> i) & 1:
            values.append(None)
            continue
        con = FIELD_VALUE[types[i]]
        values.append(cs.Struct("v" / con).parse(data[offset : offset + con.sizeof()])["v"])
        offset += con.sizeof()
    return values


def fits(not_null: int, types: list[int]) -> bool:
    size = sum(FIELD_VALUE[t].sizeof() for i, t in enumerate(types) if (not_null >> i) & 1)
    return size <= TUPLE_DATA_LEN


@settings(max_examples=400, deadline=None)
@given(
    types=st.lists(st.sampled_from(list(WireType)), max_size=8),
    not_null=st.integers(0, 0xFF),
    data=st.binary(min_size=TUPLE_DATA_LEN, max_size=TUPLE_DATA_LEN),
)
def test_values_match_a_parse_field_by_field(types: list[int], not_null: int, data: bytes) -> None:
    if not fits(not_null, types):
        with pytest.raises(DecodeError, match="needs"):
            decode_tuple_values(not_null, len(types), data, types)
        return
    assert decode_tuple_values(not_null, len(types), data, types) == one_field_at_a_time(
        not_null, len(types), data, types
    )


def test_a_known_tuple() -> None:
    data = bytes([0x2C, 0x01, 0xFF, 0x9C, 0xFF, 0xFF, 0xFF]) + bytes(15)
    types = [WireType.UINTTWO, WireType.INTONE, WireType.INTTWO, WireType.UINTTWO]
    # field 2 is NULL: field 3 takes the bytes after field 1
    assert decode_tuple_values(0b1011, 4, data, types) == [300, -1, None, 0xFF9C]


def test_refusals_name_the_field() -> None:
    with pytest.raises(DecodeError, match="no wire type for field 1"):
        decode_tuple_values(0b11, 2, bytes(22), [WireType.UINTTWO])
    with pytest.raises(DecodeError, match="unknown wire type 42"):
        decode_tuple_values(0b1, 1, bytes(22), [42])
