"""`mote decode` and `mote listen` (the click commands, run in-process)."""

from __future__ import annotations

import json
import os
import select
import threading
import tty
from pathlib import Path

from click.testing import CliRunner

from motebase.gateway.cli.protocol_cmds import COMMANDS, decode_cmd, listen_cmd
from motebase.gateway.protocol.framing import frame_packet

QUERY_PACKET = "ffff657d28017e00000100ff0066000000000000000000006c696768740000000004" + "00" * 11
RESULT_PACKET = (
    "7e00f07d310300030001000101000500020000000000000000000103050000002c010700" + "00" * 18
)


def _lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_commands_are_registered() -> None:
    assert {c.name for c in COMMANDS} == {"decode", "listen"}


def test_decode_hex_packets_and_frames(tmp_path: Path) -> None:
    framed = frame_packet(bytes.fromhex(RESULT_PACKET)).hex()
    corrupt = framed[:10] + ("00" if framed[10:12] != "00" else "11") + framed[12:]
    source = tmp_path / "capture.hex"
    source.write_text(f"# a capture\n{QUERY_PACKET}\n{framed}\n{corrupt}\nnot hex\n7e00f07d31\n")
    result = CliRunner().invoke(decode_cmd, [str(source), "--types", "uinttwo,4,4", "--stats"])
    assert result.exit_code == 0, result.output
    out = _lines(result.stdout)
    query, tuple_, stats = out
    assert (query["am"], query["am_name"], query["addr"], query["group"], query["length"]) == (
        101,
        "QUERY",
        0xFFFF,
        0x7D,
        40,
    )
    assert query["body"]["u"] == {"name": "light", "op": 0, "type": 4}  # type: ignore[index]
    assert (
        tuple_["am_name"] == "QUERY_RESULT"
        and tuple_["sourceaddr"] == 3
        and tuple_["hopcount"] == 1
    )
    assert tuple_["body"]["qid"] == 1 and tuple_["body"]["epoch"] == 5  # type: ignore[index]
    assert tuple_["body"]["d"]["values"] == [300, None, 7]  # type: ignore[index]
    assert stats["stats"]["frames"]["good"] == 1 and stats["stats"]["frames"]["bad_crc"] == 1  # type: ignore[index]
    assert stats["stats"]["bad_lines"] == 1 and stats["stats"]["undecodable"] == 1  # type: ignore[index]
    errors = _lines(result.stderr)
    assert errors[-1]["kind"] == "TOS_Msg" and errors[-1]["field"] == "data"


def test_decode_raw_stream_from_stdin() -> None:
    stream = (
        b"\x00\x13garbage"
        + frame_packet(bytes.fromhex(QUERY_PACKET))
        + b"\x7e\x42\x7e"
        + frame_packet(bytes.fromhex(RESULT_PACKET))
    )
    result = CliRunner().invoke(decode_cmd, ["--raw", "--stats"], input=stream)
    assert result.exit_code == 0, result.output
    query, tuple_, stats = _lines(result.stdout)
    assert query["am"] == 101 and tuple_["am"] == 240
    assert tuple_["body"]["d"]["values"] == [300, None, 7]  # type: ignore[index]
    assert (
        stats["stats"]["frames"]["too_short"] == 1 and stats["stats"]["frames"]["noise_bytes"] == 9
    )  # type: ignore[index]


def test_decode_rejects_unknown_wire_type() -> None:
    result = CliRunner().invoke(decode_cmd, ["--types", "float"], input="")
    assert result.exit_code != 0 and "unknown wire type" in result.output


def test_listen_on_a_pty() -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    stop = threading.Event()

    def mote() -> None:
        # Keep sending until listen has what it wants: the port may open after the first ones.
        while not stop.wait(0.05):
            os.write(master, frame_packet(bytes.fromhex(RESULT_PACKET)))
            while select.select([master], [], [], 0)[0]:
                os.read(master, 1024)

    thread = threading.Thread(target=mote, daemon=True)
    thread.start()
    try:
        result = CliRunner().invoke(
            listen_cmd, ["--port", os.ttyname(slave), "--count", "2", "--timeout", "30"]
        )
        hexed = CliRunner().invoke(
            listen_cmd, ["--port", os.ttyname(slave), "--count", "1", "--hex", "--timeout", "30"]
        )
    finally:
        stop.set()
        thread.join()
        os.close(master)
        os.close(slave)
    assert result.exit_code == 0, result.output
    packets = _lines(result.stdout)
    assert len(packets) == 2
    assert all(
        p["am_name"] == "QUERY_RESULT" and p["body"]["d"]["values"] == [300, None, 7]
        for p in packets
    )  # type: ignore[index]
    assert hexed.stdout.split() == [
        RESULT_PACKET[i : i + 2] for i in range(0, len(RESULT_PACKET), 2)
    ]


def test_listen_reports_a_missing_port() -> None:
    result = CliRunner().invoke(listen_cmd, ["--port", "/nonexistent/tty", "--timeout", "1"])
    assert result.exit_code != 0 and "cannot open" in result.output
