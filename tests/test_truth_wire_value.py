"""The truth reads a sampled value back as its tuple field would carry it: the value's low
bytes parsed by the field's construct (emu/truth.py wire_value, a struct per number type)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from motebase.emu.truth import wire_value
from motebase.gateway.protocol.result import FIELD_VALUE, WireType


@given(wire_type=st.sampled_from(list(WireType)), value=st.integers(-(1 << 70), 1 << 70))
def test_wire_value_is_the_fields_construct_reading_the_low_bytes(
    wire_type: WireType, value: int
) -> None:
    field = FIELD_VALUE[wire_type]
    size = field.sizeof()
    expected = field.parse((value & ((1 << (8 * size)) - 1)).to_bytes(size, "little"))
    assert wire_value(wire_type, value) == expected


def test_wire_value_wraps_and_signs_as_the_mote_does() -> None:
    assert wire_value(WireType.INTTWO, 0x18000) == -0x8000
    assert wire_value(WireType.UINTTWO, -1) == 0xFFFF
    assert wire_value(WireType.INTONE, 200) == -56
    assert wire_value(WireType.UINTFOUR, -1) == 0xFFFFFFFF
