"""Write the fuzzers' seed corpora from the gateway's real encoders.

    python tests/fuzz/make_corpus.py      # rewrites tests/fuzz/corpus/{firmware,gateway}

Every seed is a small valid exchange: queries compiled from TinySQL and encoded as the
gateway sends them, commands, status requests, query requests, results and route beacons
built with motebase.gateway.protocol. The firmware seeds are in firmware_fuzz.c's operation format,
the gateway seeds in gateway_fuzz.py's segment format. Deterministic: rerunning it gives
the same files, so the checked-in corpus can be regenerated and diffed.
"""

from __future__ import annotations

import hashlib
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from motebase.gateway.encoder import encode_query, encode_rate_change, encode_stop  # noqa: E402
from motebase.gateway.plan import compile_query  # noqa: E402
from motebase.gateway.protocol import (  # noqa: E402
    AmType,
    build_command,
    build_mhop,
    build_query_request,
    build_query_result,
    build_route_packet,
    build_status,
    build_tos_packet,
    frame_packet,
    frame_packet_ack,
)
from motebase.gateway.protocol.motebase import add_trailer  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "corpus"
GROUP = 0x7D
BCAST = 0xFFFF
UART = 0x007E

# firmware_fuzz.c operations
OP_RADIO, OP_UART, OP_UARTPKT, OP_RUN, OP_LOSS, OP_SENSOR, OP_STEP, OP_LONGRUN = range(8)

QUERIES = (
    "select light epoch duration 256",
    "select nodeid, light, temp where light > 200 epoch duration 512",
    "select max(light) epoch duration 256",
    "select avg(temp), count(light) group by nodeid epoch duration 1024",
    "select winavg(8, 4, light) epoch duration 256",
    "select light once",
)


def op(kind: int, node: int = 0, flag: int = 0) -> int:
    return kind | (node << 3) | (flag << 7)


def radio(node: int, packet: bytes) -> bytes:
    return bytes((op(OP_RADIO, node), len(packet))) + packet


def uart_packet(packet: bytes, *, ack: bool = False, node: int = 0) -> bytes:
    return bytes((op(OP_UARTPKT, node, int(ack)), len(packet))) + packet


def uart_raw(data: bytes, node: int = 0) -> bytes:
    return bytes((op(OP_UART, node), len(data))) + data


def run(ms: int) -> bytes:
    return bytes((op(OP_RUN),)) + struct.pack("<H", ms)


def long_run(seconds: int) -> bytes:
    return bytes((op(OP_LONGRUN), seconds))


def config(
    nodes: int = 3, *, star: bool = False, plain_acks: bool = False, wrap: bool = False
) -> bytes:
    return bytes(((nodes - 2) | star << 2 | plain_acks << 3 | wrap << 4,))


def query_packets(sql: str, qid: int, *, trailer: bool = False) -> list[bytes]:
    parts = encode_query(compile_query(sql), qid)
    if trailer:
        parts = [add_trailer(p, wide=True) for p in parts]
    return [build_tos_packet(BCAST, AmType.QUERY, GROUP, p) for p in parts]


def result_packet(qid: int, epoch: int, origin: int, *, agg: bool = False) -> bytes:
    if agg:
        result = {
            "qid": qid,
            "epoch": epoch,
            "qrType": 3,
            "d": {"groupNo": 0, "exprIdx": 0, "state": bytes(8)},
        }
        body = build_query_result(result)
    else:
        result = {
            "qid": qid,
            "result_idx": 0,
            "epoch": epoch,
            "qrType": 2,
            "d": {"values": [origin, 321]},
        }
        body = build_query_result(result, [5, 5])
    return build_tos_packet(
        0, AmType.QUERY_RESULT, GROUP, build_mhop(origin, origin, epoch, 1, body)
    )


def beacon(src: int, parent: int, cost: int) -> bytes:
    route = build_route_packet(
        {
            "parent": parent,
            "cost": cost,
            "entries": [{"id": parent, "receiveEst": 200}],
            "motebase": {"magic": b"mb", "deepest": 2},
        }
    )
    return build_tos_packet(BCAST, AmType.MULTIHOP_ROUTE, GROUP, build_mhop(src, src, 1, 0, route))


def command(name: str, params: dict[str, object], seq: int = 1) -> bytes:
    body = build_command({"nodeid": -1, "seqNo": seq, "name": name, "params": params})
    return build_tos_packet(BCAST, AmType.COMMAND, GROUP, body)


def status_request() -> bytes:
    body = build_status({"fromBase": 1, "numQueries": 0, "queries": [0xFF] * 8})
    return build_tos_packet(BCAST, AmType.STATUS, GROUP, body)


def query_request(qid: int, to: int, frm: int) -> bytes:
    body = build_query_request({"qid": qid, "qmsgMask": 0, "reqNode": frm, "fromNode": frm})
    return build_tos_packet(to, AmType.QUERY_REQUEST, GROUP, body)


def dummy_result(qid: int) -> bytes:
    result = {"qid": qid, "result_idx": 0, "epoch": 1, "qrType": 2, "d": {"values": [0]}}
    body = build_mhop(0, 0, 1, 0, build_query_result(result, [5]))
    return build_tos_packet(BCAST, AmType.DIRECTED_DATA, GROUP, body)


def firmware_seeds() -> dict[str, bytes]:
    seeds: dict[str, bytes] = {}
    # Queries in over the root's UART, then time for the tree to form and results to flow.
    for i, sql in enumerate(QUERIES):
        ops = b"".join(uart_packet(p) for p in query_packets(sql, 1 + i, trailer=i % 2 == 1))
        seeds[f"query_{i}"] = config(3, star=i % 3 == 2) + long_run(12) + ops + long_run(20)
    # The same over protocol-65 frames (the root acks with the token), raw serial bytes.
    pkts = query_packets(QUERIES[2], 7)
    seeds["query_ack_frames"] = (
        config(2) + b"".join(uart_packet(p, ack=True) for p in pkts) + long_run(15)
    )
    seeds["query_raw_serial"] = (
        config(2) + b"".join(uart_raw(frame_packet(p)) for p in pkts) + long_run(15)
    )
    seeds["query_raw_serial_ack"] = config(2) + uart_raw(frame_packet_ack(pkts[0], 9)) + long_run(5)
    # A query, then stopped and re-rated.
    pkts = query_packets(QUERIES[0], 3)
    stop = build_tos_packet(BCAST, AmType.QUERY, GROUP, encode_stop(3))
    rate = build_tos_packet(BCAST, AmType.QUERY, GROUP, encode_rate_change(3, 100))
    seeds["query_rate_stop"] = (
        config(3)
        + b"".join(uart_packet(p) for p in pkts)
        + long_run(10)
        + uart_packet(rate)
        + long_run(5)
        + uart_packet(stop)
        + long_run(10)
    )
    # A query heard over the radio by a non-root node (as forwarded by its parent).
    seeds["query_radio"] = (
        config(3) + b"".join(radio(1, p) for p in query_packets(QUERIES[1], 4)) + long_run(10)
    )
    # Commands and status requests, over the UART and the radio.
    cmds = {
        "qpolicy": {"policy": "winavg"},
        "qlen": {"length": 4},
        "nointerleave": {"enabled": 1},
        "reset": {},
        "setrate": {"qid": 1, "epochDuration": 64},
    }
    for name, params in cmds.items():
        pkt = command(name, params)
        seeds[f"command_{name}"] = (
            config(2) + uart_packet(pkt) + run(500) + radio(1, pkt) + run(500)
        )
    seeds["status"] = (
        config(2) + uart_packet(status_request()) + radio(1, status_request()) + run(300)
    )
    # Traffic a root hears from children: beacons, results, query requests, heartbeats.
    seeds["beacon"] = (
        config(3) + radio(0, beacon(1, 0, 1)) + radio(2, beacon(1, 0, 1)) + long_run(5)
    )
    for agg in (False, True):
        name = "result_agg" if agg else "result_tuple"
        pkts = query_packets(QUERIES[2] if agg else QUERIES[0], 1)
        seeds[name] = (
            config(3)
            + b"".join(uart_packet(p) for p in pkts)
            + long_run(8)
            + radio(0, result_packet(1, 1, 2, agg=agg))
            + radio(1, result_packet(1, 1, 2, agg=agg))
            + long_run(5)
        )
    pkts = query_packets(QUERIES[0], 5)
    seeds["query_request"] = (
        config(3)
        + b"".join(uart_packet(p) for p in pkts)
        + long_run(5)
        + radio(0, query_request(5, 0, 1))
        + radio(1, query_request(5, 1, 2))
        + long_run(5)
    )
    seeds["dummy_result"] = config(2) + radio(1, dummy_result(1)) + run(300)
    # The network's own life with lossy links, sensors and a clock about to wrap.
    seeds["idle_wrap"] = config(4, wrap=True) + long_run(30)
    seeds["lossy"] = (
        config(5, plain_acks=True)
        + bytes((op(OP_LOSS), 0x25))
        + bytes((op(OP_SENSOR, 1), 0, 0x10, 0x02))
        + b"".join(uart_packet(p) for p in query_packets(QUERIES[3], 2))
        + long_run(30)
        + bytes((op(OP_STEP),)) * 8
    )
    return seeds


# gateway_fuzz.py segments: tag, length, bytes; tag & 3 = 0 raw, 1 framed 66, 2 framed 65.
def segment(tag: int, data: bytes) -> bytes:
    return bytes((tag, len(data))) + data


def gateway_seeds() -> dict[str, bytes]:
    packets: dict[str, bytes] = {
        "query": query_packets(QUERIES[1], 1)[0],
        "query_trailer": query_packets(QUERIES[4], 2, trailer=True)[1],
        "command": command("setrate", {"qid": 1, "epochDuration": 64}),
        "status": status_request(),
        "query_request": query_request(1, 0, 1),
        "result_tuple": result_packet(1, 3, 2),
        "result_agg": result_packet(2, 3, 2, agg=True),
        "dummy_result": dummy_result(1),
        "beacon": beacon(1, 0, 1),
    }
    seeds: dict[str, bytes] = {}
    for name, pkt in packets.items():
        seeds[name] = bytes((7,)) + segment(1, pkt)
        seeds[f"{name}_ack_noise"] = bytes((1,)) + segment(0, b"\x01\x7e\x42\x7d") + segment(2, pkt)
    seeds["raw_stream"] = (
        bytes((0,))
        + segment(0, frame_packet(packets["result_tuple"])[:-3])
        + segment(0, frame_packet(packets["beacon"]))
    )
    return seeds


def write(dirname: str, seeds: dict[str, bytes]) -> None:
    out = CORPUS / dirname
    out.mkdir(parents=True, exist_ok=True)
    for old in out.iterdir():
        old.unlink()
    for name, data in sorted(seeds.items()):
        # libFuzzer names its own finds by content hash; a readable name keeps seeds apart.
        digest = hashlib.sha1(data).hexdigest()[:8]
        (out / f"{name}-{digest}").write_bytes(data)


def main() -> None:
    write("firmware", firmware_seeds())
    write("gateway", gateway_seeds())


if __name__ == "__main__":
    main()
