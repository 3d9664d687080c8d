"""Fuzz the gateway's serial deframer and message decoders.

    python tests/fuzz/gateway_fuzz.py --seconds 60        # atheris if installed, else hypothesis
    python tests/fuzz/gateway_fuzz.py --engine hypothesis --cases 5000

An input is a chunk size byte and then segments ``tag, length, bytes``: tag & 3 = 0 puts
the bytes on the line as they are (noise, torn or hand-made frames), 1 frames them as a
protocol-66 packet, 2 as a protocol-65 packet with token ``tag >> 2``. So arbitrary
payloads reach the decoders without the fuzzer having to find CRCs, and arbitrary bytes
reach the deframer. The stream is fed to one :class:`Deframer` in chunks and then a known
good frame follows. The properties:

* the deframer never raises; every frame's payload goes through :func:`decode_packet`
  (plain, with result schemas of every aggregate, wide and narrow) and the motebase
  trailer/extension parsers, which raise nothing but :class:`DecodeError`;
* every segment the harness framed itself comes out, in order, whatever noise came
  before it (noise may add frames of its own, never lose one);
* the good frame after everything is decoded as itself.

The seed corpus (tests/fuzz/corpus/gateway) is written by make_corpus.py.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from motebase.gateway.protocol import (  # noqa: E402
    AggOp,
    AggregateSchema,
    AmType,
    DecodeError,
    Deframer,
    Frame,
    Protocol,
    ResultSchema,
    build_mhop,
    build_query_result,
    build_tos_packet,
    decode_packet,
    frame_packet,
    frame_packet_ack,
)
from motebase.gateway.protocol.framing import DEFAULT_MTU  # noqa: E402
from motebase.gateway.protocol.motebase import parse_status_extension, parse_trailer  # noqa: E402
from motebase.gateway.protocol.tos import TOS_HEADER_LEN  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "corpus" / "gateway"

#: A result frame the gateway must still read after whatever came before it.
GOOD_PACKET = build_tos_packet(
    0x7E,
    AmType.QUERY_RESULT,
    0x7D,
    build_mhop(
        1,
        1,
        5,
        1,
        build_query_result(
            {"qid": 2, "result_idx": 0, "epoch": 5, "qrType": 2, "d": {"values": [1, 2]}}, [5, 5]
        ),
    ),
)
GOOD_FRAME = frame_packet(GOOD_PACKET)

# Aggregate ids the firmware knows; window arguments as TinySQL would give them.
_AGG_ARGS = {op: ((8, 4) if op >= 6 else ()) for op in (int(a) for a in AggOp)}
_SCHEMAS = [
    {
        qid: ResultSchema(
            field_types=(5, 1, 3, 7, 5, 5),
            aggregates={i: AggregateSchema(op, args) for i in range(4)},
            ring_entry=ring,
            wide=wide,
        )
        for qid in range(256)
    }
    for op, args in _AGG_ARGS.items()
    for ring, wide in (("int16", False), ("int32", True))
]


_FIELD_TYPES = [(), (1, 2, 3, 4, 5, 6, 7), (7, 6, 5, 4, 3, 2, 1, 0)]


class Counters:
    inputs = 0
    frames = 0  # good frames out of the deframer
    decoded = 0  # of those, decoded without a DecodeError


def _segments(data: bytes) -> tuple[int, list[tuple[int, bytes]]]:
    if not data:
        return 1, []
    chunk = 1 + data[0] % 64
    segs: list[tuple[int, bytes]] = []
    pos = 1
    while pos < len(data):
        tag = data[pos]
        n = data[pos + 1] if pos + 1 < len(data) else 0
        segs.append((tag, data[pos + 2 : pos + 2 + n]))
        pos += 2 + n
    return chunk, segs


def _decode(frame: Frame) -> None:
    if frame.protocol not in (Protocol.PACKET_ACK, Protocol.PACKET_NO_ACK):
        return
    payload = frame.payload
    # One schema per frame, in turn: every aggregate layout gets its share of frames at
    # a fraction of the cost of trying them all on each.
    schema = _SCHEMAS[Counters.frames % len(_SCHEMAS)]
    field_types = _FIELD_TYPES[Counters.frames % len(_FIELD_TYPES)]
    try:
        decode_packet(payload, schemas=schema)
        Counters.decoded += 1
    except DecodeError:
        pass
    with contextlib.suppress(DecodeError):
        decode_packet(payload, field_types=field_types)
    body = payload[TOS_HEADER_LEN:]
    if len(payload) >= 3 and payload[2] == AmType.QUERY:
        parse_trailer(body)
    if len(payload) >= 3 and payload[2] == AmType.STATUS:
        parse_status_extension(body)


def check(data: bytes) -> None:
    """One input; raises AssertionError (or the unexpected exception) on a finding."""
    chunk, segs = _segments(data)
    stream = bytearray()
    expected: list[Frame] = []
    for tag, body in segs:
        kind = tag & 3
        # A 66 frame with an empty packet is below MIN_FRAME: dropped by design (Java's).
        if kind == 1 and body and len(body) + 3 <= DEFAULT_MTU:
            stream += frame_packet(body)
            expected.append(Frame(Protocol.PACKET_NO_ACK, None, body))
        elif kind == 2 and len(body) + 4 <= DEFAULT_MTU:
            stream += frame_packet_ack(body, tag >> 2)
            expected.append(Frame(Protocol.PACKET_ACK, tag >> 2, body))
        else:
            stream += body
    stream += GOOD_FRAME
    deframer = Deframer()
    frames: list[Frame] = []
    for i in range(0, len(stream), chunk):
        frames += deframer.feed(bytes(stream[i : i + chunk]))
    Counters.inputs += 1
    for frame in frames:
        _decode(frame)
        Counters.frames += 1
    assert frames and frames[-1] == Frame(Protocol.PACKET_NO_ACK, None, GOOD_PACKET), (
        "the good frame after the input was lost"
    )
    it = iter(frames)
    for want in expected:
        assert any(f == want for f in it), f"framed segment lost: {want}"
    good = decode_packet(GOOD_PACKET)
    assert good.am == AmType.QUERY_RESULT and good.body["qid"] == 2


def _progress(start: float) -> str:
    return (
        f"gateway-fuzz: {Counters.inputs} inputs, {Counters.frames} frames "
        f"({Counters.decoded} decoded) in {time.monotonic() - start:.0f}s"
    )


def run_atheris(seconds: int, extra: list[str], coverage: bool) -> None:
    import atheris  # type: ignore[import-not-found]

    start = time.monotonic()
    report_every = 10_000

    def one(data: bytes) -> None:
        check(data)
        if Counters.inputs % report_every == 0:
            print(_progress(start), file=sys.stderr, flush=True)

    dirs = [a for a in extra if not a.startswith("-")]
    opts = [a for a in extra if a.startswith("-")]
    # libFuzzer writes new inputs into the first directory: never the checked-in seeds.
    if not dirs or Path(dirs[0]).resolve() == CORPUS:
        dirs.insert(0, tempfile.mkdtemp(prefix="gateway-fuzz-"))
    if CORPUS not in (Path(d).resolve() for d in dirs):
        dirs.append(str(CORPUS))
    argv = [sys.argv[0], f"-max_total_time={seconds}", "-max_len=1024", *opts, *dirs]
    if coverage:
        atheris.instrument_all()  # everything imported: motebase.gateway.protocol and construct
    atheris.Setup(argv, one)
    atheris.Fuzz()


def run_hypothesis(seconds: int, cases: int) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    start = time.monotonic()
    seeds = [p.read_bytes() for p in sorted(CORPUS.iterdir())]
    for s in seeds:
        check(s)

    # Seeds mutated by splicing random bytes in: hypothesis alone rarely builds frames.
    @st.composite
    def inputs(draw: st.DrawFn) -> bytes:
        base = bytearray(draw(st.sampled_from(seeds)) if seeds else b"")
        for _ in range(draw(st.integers(0, 4))):
            at = draw(st.integers(0, len(base)))
            cut = draw(st.integers(0, 8))
            base[at : at + cut] = draw(st.binary(max_size=16))
        return bytes(base)

    @settings(
        max_examples=min(cases, 2000),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.one_of(inputs(), st.binary(max_size=512)))
    def prop(data: bytes) -> None:
        check(data)

    # Batches, so a time budget ends the run between examples (hypothesis has none).
    while Counters.inputs < cases and time.monotonic() - start < seconds:
        prop()
    print(_progress(start), file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--cases", type=int, default=10**9, help="hypothesis: stop after this many")
    ap.add_argument("--engine", choices=("auto", "atheris", "hypothesis"), default="auto")
    ap.add_argument(
        "--no-coverage",
        action="store_true",
        help="atheris: mutate without Python coverage feedback, ~5x the inputs per second",
    )
    args, extra = ap.parse_known_args()
    engine = args.engine
    if engine == "auto":
        try:
            import atheris  # type: ignore[import-not-found]  # noqa: F401

            engine = "atheris"
        except ImportError:
            print("gateway-fuzz: atheris not installed, using hypothesis", file=sys.stderr)
            engine = "hypothesis"
    if engine == "atheris":
        run_atheris(args.seconds, extra, not args.no_coverage)  # exits the process when done
    run_hypothesis(args.seconds, args.cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
