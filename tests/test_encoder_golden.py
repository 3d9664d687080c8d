"""QueryMessage bytes, written by hand from the spec tables (tinydb-java-encoder.md and
wire-format §5), compared with what the encoder produces for the Java tools' order.

Each message is spelled field by field:
qid | fwdNode | msgType | numFields | numExprs | fromBuffer | flags | epochDuration | type |
idx | timeSyncData[5] | clockCount | u[21]
"""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from motebase.gateway.cli.sql_cmds import COMMANDS
from motebase.gateway.encoder import encode_query, encode_rate_change, encode_stop
from motebase.gateway.plan import compile_query
from motebase.gateway.protocol import parse_query_message


def hexmsg(*parts: str) -> bytes:
    data = bytes.fromhex("".join(parts))
    assert len(data) == 40, f"golden message has {len(data)} bytes"
    return data


NO_TIME = "0000000000 0000"  # timeSyncData, clockCount
LIGHT = "6c69676874000000"  # 'light' NUL-padded to 8
TEMP = "74656d7000000000"
NODEID = "6e6f646569640000"

GOLDEN = {
    "select light": [
        hexmsg("01 7e00 00 01 00 ff 00 6600 00 00", NO_TIME, LIGHT, "00 04", "00" * 11),
    ],
    # WHERE predicates go out in reverse order: temp < 100 first.
    "select light,temp where light > 200 and temp < 100": [
        hexmsg("01 7e00 00 02 02 ff 00 6600 00 00", NO_TIME, LIGHT, "00 04", "00" * 11),
        hexmsg("01 7e00 00 02 02 ff 00 6600 00 01", NO_TIME, TEMP, "00 04", "00" * 11),
        hexmsg(
            "01 7e00 00 02 02 ff 00 6600 01 00",
            NO_TIME,
            "00 00",
            "0100 04 6400",
            "00" * 8,
            "0000 0000 0000",
        ),
        hexmsg(
            "01 7e00 00 02 02 ff 00 6600 01 01",
            NO_TIME,
            "00 00",
            "0000 02 c800",
            "00" * 8,
            "0000 0000 0000",
        ),
    ],
    # Temporal aggregate: opType 2, op 7, args 08 04 00 00; epoch 256 ms -> 25 units.
    "select winavg(8, 4, light) epoch duration 256": [
        hexmsg("01 7e00 00 01 01 ff 00 1900 00 00", NO_TIME, LIGHT, "00 04", "00" * 11),
        hexmsg(
            "01 7e00 00 01 01 ff 00 1900 01 00",
            NO_TIME,
            "02 00",
            "0000 ffff 0000 0000 07 08040000",
            "0000 0000 0000",
        ),
    ],
    # OUTPUT ACTION: bufferType 3 (flags 0x18) everywhere, BUFFER part with hasParam 0.
    "select light where light < 400 output action SetSnd(512)": [
        hexmsg("01 7e00 00 01 01 ff 18 6600 00 00", NO_TIME, LIGHT, "00 04", "00" * 11),
        hexmsg(
            "01 7e00 00 01 01 ff 18 6600 01 00",
            NO_TIME,
            "00 00",
            "0000 04 9001",
            "00" * 8,
            "0000 0000 0000",
        ),
        hexmsg(
            "01 7e00 00 01 01 ff 18 6600 02 00",
            NO_TIME,
            "536574536e640000 00 0002",
            "00" * 10,
        ),
    ],
    # Arithmetic inside an aggregate: fieldOp 3 (+), fieldConst 10; grouped by field 1.
    "select avg(light + 10) group by nodeid": [
        hexmsg("01 7e00 00 02 01 ff 00 6600 00 00", NO_TIME, LIGHT, "00 04", "00" * 11),
        hexmsg("01 7e00 00 02 01 ff 00 6600 00 01", NO_TIME, NODEID, "00 04", "00" * 11),
        hexmsg(
            "01 7e00 00 02 01 ff 00 6600 01 00",
            NO_TIME,
            "01 00",
            "0000 0100 0000 0000 05",
            "00" * 4,
            "0300 0a00 0000",
        ),
    ],
    # Arithmetic inside a predicate: fieldOp 2 (/), fieldConst 10, GT 50.
    "select light where (light / 10) > 50": [
        hexmsg("01 7e00 00 01 01 ff 00 6600 00 00", NO_TIME, LIGHT, "00 04", "00" * 11),
        hexmsg(
            "01 7e00 00 01 01 ff 00 6600 01 00",
            NO_TIME,
            "00 00",
            "0000 02 3200",
            "00" * 8,
            "0200 0a00 0000",
        ),
    ],
    # FOR 5: hasForClause (flags 0x04) and an N_EPOCHS part; 2048 ms -> 204 units.
    "select max(light) where nodeid > 3 epoch duration 2048 for 5": [
        hexmsg("01 7e00 00 02 02 ff 04 cc00 00 00", NO_TIME, LIGHT, "00 04", "00" * 11),
        hexmsg("01 7e00 00 02 02 ff 04 cc00 00 01", NO_TIME, NODEID, "00 04", "00" * 11),
        hexmsg(
            "01 7e00 00 02 02 ff 04 cc00 01 00",
            NO_TIME,
            "00 00",
            "0100 02 0300",
            "00" * 8,
            "0000 0000 0000",
        ),
        hexmsg(
            "01 7e00 00 02 02 ff 04 cc00 01 01",
            NO_TIME,
            "01 00",
            "0000 ffff 0000 0000 03",
            "00" * 4,
            "0000 0000 0000",
        ),
        hexmsg("01 7e00 00 02 02 ff 04 cc00 04 00", NO_TIME, "0500", "00" * 19),
    ],
    # 18124 ms truncates to 1812 units (0x0714).
    "select light epoch duration 18124": [
        hexmsg("01 7e00 00 01 00 ff 00 1407 00 00", NO_TIME, LIGHT, "00 04", "00" * 11),
    ],
}


@pytest.mark.parametrize("sql", sorted(GOLDEN))
def test_golden_bytes_in_the_tools_order(sql: str) -> None:
    assert encode_query(compile_query(sql, optimize=False), 1) == GOLDEN[sql]


def test_qid_is_byte_zero_of_every_message() -> None:
    messages = encode_query(compile_query("select light,temp where light > 200 and temp < 100"), 42)
    assert [m[0] for m in messages] == [42] * 4
    assert [m[1:] for m in messages] == [
        g[1:] for g in GOLDEN["select light,temp where light > 200 and temp < 100"]
    ]


def test_once_is_0x7fff() -> None:
    (message,) = encode_query(compile_query("select light once"), 1)
    assert message[8:10] == bytes.fromhex("ff7f")


def test_optimised_order_moves_the_cheap_sensor_first() -> None:
    sql = "select accel_x, mag_x where accel_x > 500 and mag_x > 500"
    tools = encode_query(compile_query(sql, optimize=False), 1)
    optimised = encode_query(compile_query(sql, optimize=True), 1)
    # Tools: mag_x (field 1) first; optimised: accel_x (field 0) first. Fields unchanged.
    assert tools[:2] == optimised[:2]
    assert tools[2][21:26] == bytes.fromhex("0100 02 f401")
    assert optimised[2][21:26] == bytes.fromhex("0000 02 f401")
    assert tools[2][11] == optimised[2][11] == 0


def test_stop_and_rate_messages_decode_as_del_and_rate() -> None:
    stop = parse_query_message(encode_stop(3))
    assert (stop["qid"], stop["msgType"], stop["u"]["ttl"]) == (3, 1, 3)
    rate = parse_query_message(encode_rate_change(3, 204))
    assert (rate["qid"], rate["msgType"], rate["epochDuration"]) == (3, 3, 204)


def _cli() -> click.Group:
    return click.Group("mote", commands={c.name: c for c in COMMANDS if c.name})


def test_encode_query_command_prints_one_hex_line_per_message() -> None:
    sql = "select light where light < 400 output action SetSnd(512)"
    result = CliRunner().invoke(
        _cli(), ["encode-query", sql, "--qid", "1", "--no-optimize", "--message-only"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [m.hex() for m in GOLDEN[sql]]


def test_encode_query_command_reports_the_error_position() -> None:
    result = CliRunner().invoke(
        _cli(), ["encode-query", "select light where light > 1 or temp < 5"]
    )
    assert result.exit_code == 1
    assert "line 1, column 30: OR is not supported" in result.output
    assert "\n" + " " * 31 + "^" in result.output


def test_encode_query_command_prints_the_packets_the_gateway_sends() -> None:
    # Without --message-only: each message behind the TOS header the gateway gives it
    # (broadcast, AM 101, the group, length 40), so that `mote decode` reads it.
    sql = "select light where light < 400 output action SetSnd(512)"
    for args, group in (([], 0x7D), (["--group", "0x22"], 0x22), (["--group", "9"], 9)):
        result = CliRunner().invoke(_cli(), ["encode-query", sql, "--no-optimize", *args])
        assert result.exit_code == 0, result.output
        expected = [(b"\xff\xff\x65" + bytes([group, 40]) + m).hex() for m in GOLDEN[sql]]
        assert result.output.splitlines() == expected
