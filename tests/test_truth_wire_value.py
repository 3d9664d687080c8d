"""The truth reads a sampled value back as its tuple field would carry it: the value's low
bytes parsed by the field's construct (emu/truth.py wire_value, a struct per number type)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from motebase.emu.network import OBSERVATION_DTYPE
from motebase.emu.truth import (
    OBS_QUERY,
    OBS_SAMPLED,
    Sample,
    SampleColumns,
    sample_columns,
    sampled,
    wire_value,
)
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


def test_sample_columns_read_every_observation_as_the_loop_over_them_did() -> None:
    """The truth's samples are whole columns of the observations (issue 14); they are the
    samples of the former loop over numpy scalars, one observation at a time, for random
    observations of several kinds, queries and times: a field counts as read when its
    bit is set and it is among the fields the observation carries."""
    rng = np.random.default_rng(14)
    n = 2000
    obs = np.zeros(n, OBSERVATION_DTYPE)
    obs["kind"] = rng.choice([OBS_SAMPLED, OBS_SAMPLED, OBS_QUERY], n)
    obs["qid"] = rng.integers(1, 3, n)
    obs["t_us"] = rng.integers(0, 2**40, n)
    obs["node"] = rng.integers(0, 2000, n)
    obs["epoch"] = rng.integers(0, 2**16, n)
    obs["status"] = rng.integers(0, 2, n)
    obs["n_fields"] = rng.integers(0, 17, n)
    obs["have"] = rng.integers(0, 2**16, n)
    obs["values"] = rng.integers(-(2**31), 2**31, (n, 16))
    since = 2**39
    expected = []
    for o in obs:
        if o["kind"] != OBS_SAMPLED or o["qid"] != 1 or o["t_us"] < since:
            continue
        have, count = int(o["have"]), int(o["n_fields"])
        values = {i: int(o["values"][i]) for i in range(count) if have >> i & 1}
        expected.append(
            Sample(int(o["node"]), int(o["epoch"]), int(o["t_us"]), bool(o["status"]), values)
        )
    got = sample_columns(sampled(obs, 1, since))
    want = SampleColumns.of(expected)
    assert len(got) == len(want) > 100
    for name in ("node", "epoch", "t_us", "passed"):
        assert getattr(got, name).tolist() == getattr(want, name).tolist()
    assert (got.have == want.have).all()
    assert (np.where(got.have, got.values, 0) == want.values).all()
    assert len(sample_columns(obs[:0])) == 0
