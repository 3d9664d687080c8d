"""`mote flash` and the image handling under it (gateway/flash/).

Without a toolchain (every env): the ELF and Intel HEX layouts round-trip handmade bytes
(cross-checked against binutils where it is installed), a handmade image is patched and
refused exactly, and `mote flash` gives its exact dry-run output and its errors (exit 2).

With the AVR toolchain (`@pytest.mark.avr`, tox env `avr`): the strong oracle. A C file
compiled twice by avr-gcc, with TOS_LOCAL_ADDRESS = 1 / TOS_AM_GROUP = 0x7d and with
5 / 0x22: patching the first gives byte for byte the flash image of the second, as
avr-objcopy writes it; the checksum `mote flash` prints is the SHA-256 of avr-objcopy's
binary of the patched hex.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from flash_images import (
    CODE,
    avr_tool,
    compile_mote,
    handmade_elf,
    objcopy_hex,
)
from mib510_pty import Mib510

from motebase.gateway.flash import FlashError
from motebase.gateway.flash.avrdude import avrdude_argv
from motebase.gateway.flash.elf import (
    ElfHeader,
    ElfIdent,
    ProgramHeader,
    SectionHeader,
    Symbol,
    parse_elf,
)
from motebase.gateway.flash.ihex import (
    build_record,
    format_ihex,
    parse_ihex,
    parse_record,
    read_ihex,
)
from motebase.gateway.flash.image import FlashImage
from motebase.gateway.flash.patch import load_image

MOTE = str(Path(sys.executable).with_name("mote"))  # the installed console script


def mote(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MOTE, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False, env=env
    )


def write_handmade(directory: Path, name: str = "mica2.elf", **kwargs: object) -> Path:
    path = directory / name
    path.write_bytes(handmade_elf(**kwargs).elf)  # type: ignore[arg-type]
    return path


def patched_by_hand(node_id: int, group: int) -> bytes:
    """The handmade image's flash with the two initialisers rewritten, computed without
    motebase.gateway.flash: .data's flash copy starts right after .text."""
    image = handmade_elf()
    flash = bytearray(image.flash)
    flash[image.data_lma : image.data_lma + 3] = node_id.to_bytes(2, "little") + bytes([group])
    return bytes(flash)


# --- ELF layouts ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("struct", "value"),
    [
        (ElfIdent, dict(elf_class=1, data=1, version=1)),
        (
            SectionHeader,
            dict(name=7, type=1, flags=3, addr=0x800100, offset=0x18A, size=6, link=0, info=0,
                 addralign=1, entsize=0),
        ),
        (
            ProgramHeader,
            dict(type=1, offset=0x18A, vaddr=0x800100, paddr=0xF6, filesz=6, memsz=6, flags=6,
                 align=1),
        ),
        (Symbol, dict(name=1, value=0x800100, size=2, info=0x11, other=0, shndx=2)),
    ],
)  # fmt: skip
def test_elf_structs_round_trip(struct: object, value: dict[str, int]) -> None:
    raw = struct.build(value)  # type: ignore[attr-defined]
    assert len(raw) == struct.sizeof()  # type: ignore[attr-defined]
    parsed = struct.parse(raw)  # type: ignore[attr-defined]
    assert {k: parsed[k] for k in value} == value
    assert struct.build(parsed) == raw  # type: ignore[attr-defined]


def test_elf_header_sizes_are_the_specifications() -> None:
    sizes = [s.sizeof() for s in (ElfHeader, SectionHeader, ProgramHeader, Symbol)]
    assert sizes == [52, 40, 32, 16]


def test_handmade_elf_sections_lmas_and_symbols() -> None:
    elf = parse_elf(handmade_elf().elf)
    by_name = {s.name: s for s in elf.sections}
    assert (by_name[".text"].addr, by_name[".text"].lma) == (0, 0)
    assert (by_name[".data"].addr, by_name[".data"].lma) == (0x800100, 52)
    assert by_name[".bss"].lma == 0x800106
    assert [s.name for s in elf.flash_sections()] == [".text", ".data"]
    sym = {
        n: (s.value, s.size, s.section.name if s.section else None) for n, s in elf.symbols.items()
    }
    assert sym == {
        "TOS_LOCAL_ADDRESS": (0x800100, 2, ".data"),
        "TOS_AM_GROUP": (0x800102, 1, ".data"),
        "MOTE_PLATFORM_NAME": (46, 6, ".text"),
    }


@pytest.mark.avr
def test_binutils_reads_the_handmade_elf_the_same_way(tmp_path: Path) -> None:
    """The handmade ELF is no private dialect: avr-objcopy makes the same flash bytes of
    it as the reader does."""
    elf = write_handmade(tmp_path)
    assert read_ihex(objcopy_hex(elf)) == load_image(elf).flash


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"MZ" + bytes(60), "not an ELF file"),
        (b"\x7fELF" + bytes(10), "runs past the end"),
        (b"\x7fELF\x02\x01\x01" + bytes(60), "not a 32-bit little-endian ELF"),
        (b"\x7fELF\x01\x01\x01" + bytes(11) + (40).to_bytes(2, "little") + bytes(40), "not AVR"),
    ],
)
def test_not_an_avr_elf_is_refused(data: bytes, reason: str) -> None:
    with pytest.raises(FlashError, match=reason):
        parse_elf(data)


# --- Intel HEX ------------------------------------------------------------------------------


def test_hex_record_of_the_specification() -> None:
    # The worked example of Intel's HEX specification: 3 bytes at 0x0030, checksum 0x1E.
    record = parse_record(":0300300002337A1E")
    assert (record.length, record.address, record.type, record.data) == (
        3,
        0x30,
        0,
        b"\x02\x33\x7a",
    )
    assert build_record(0, 0x30, b"\x02\x33\x7a") == ":0300300002337A1E"
    assert build_record(1, 0) == ":00000001FF"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (":0300300002337A1F", "checksum mismatch"),
        (":0300300002337A", "checksum mismatch|byte count"),
        (":04003000023371E", "not hex digits"),
        ("0300300002337A1E", "no leading ':'"),
        (":0400300002337A1E", "byte count"),
    ],
)
def test_bad_hex_records_are_refused(line: str, reason: str) -> None:
    with pytest.raises(FlashError, match=reason):
        parse_record(line)


def test_hex_round_trip_across_64k_pages() -> None:
    image = FlashImage.from_chunks(
        [(0, bytes(range(40))), (0xFFF8, bytes(range(100, 120))), (0x1F000, b"\xaa" * 3)]
    )
    text = format_ihex(image)
    assert parse_ihex(text) == image
    lines = text.splitlines()
    # A record never crosses 0x10000: 8 bytes end page 0, an extended-linear record opens
    # page 1 before the next 12.
    assert lines[3:6] == [
        ":08FFF8006465666768696A6BC5",
        ":020000040001F9",
        ":0C0000006C6D6E6F7071727374757677A2",
    ]
    assert lines[-1] == ":00000001FF"


def test_hex_extended_segment_addresses_as_avr_objcopy_writes_them() -> None:
    text = "\n".join(
        [
            build_record(0, 0xFFFE, b"\x01\x02"),
            build_record(2, 0, (0x1000).to_bytes(2, "big")),  # base 0x10000
            build_record(0, 0x0000, b"\x03"),
            build_record(1, 0),
        ]
    )
    assert parse_ihex(text) == FlashImage.from_chunks([(0xFFFE, b"\x01\x02\x03")])


def test_hex_without_end_record_is_refused() -> None:
    with pytest.raises(FlashError, match="no end-of-file record"):
        parse_ihex(build_record(0, 0, b"\x01"))


# --- flash images ---------------------------------------------------------------------------


def test_image_merges_touching_chunks_and_refuses_overlaps() -> None:
    image = FlashImage.from_chunks([(4, b"cd"), (0, b"ab"), (2, b"xy")])
    assert image.chunks == ((0, b"abxycd"),)
    with pytest.raises(FlashError, match="overlapping data at 0x00001"):
        FlashImage.from_chunks([(0, b"ab"), (1, b"c")])


def test_image_flat_fills_holes_erased_and_checksums_that() -> None:
    image = FlashImage.from_chunks([(2, b"\x01"), (5, b"\x02\x03")])
    assert image.flat() == b"\xff\xff\x01\xff\xff\x02\x03"
    assert image.sha256() == hashlib.sha256(b"\xff\xff\x01\xff\xff\x02\x03").hexdigest()
    assert image.first_difference(FlashImage.from_chunks([(2, b"\x01"), (5, b"\x02")])) == 6


def test_patch_only_over_bytes_the_image_holds() -> None:
    image = FlashImage.from_chunks([(0, b"abcd")])
    assert image.patched(1, b"XY").chunks == ((0, b"aXYd"),)
    with pytest.raises(FlashError, match="no 2 byte"):
        image.patched(3, b"XY")


# --- patching the handmade image ------------------------------------------------------------


def test_handmade_image_patched_is_the_image_built_with_those_values(tmp_path: Path) -> None:
    image = load_image(write_handmade(tmp_path))
    assert image.platform == "mica2"
    patched = image.patched(0x1234, 0x22)
    assert patched == FlashImage.from_chunks([(0, patched_by_hand(0x1234, 0x22))])
    assert patched == FlashImage.from_chunks([(0, handmade_elf(node_id=0x1234, group=0x22).flash)])


def test_hex_with_its_elf_beside_is_patched_like_the_elf(tmp_path: Path) -> None:
    elf = write_handmade(tmp_path)
    hex_path = tmp_path / "mica2.hex"
    hex_path.write_text(format_ihex(load_image(elf).flash))
    assert load_image(hex_path).patched(7, 0x10) == load_image(elf).patched(7, 0x10)


def test_hex_without_its_elf_cannot_be_patched(tmp_path: Path) -> None:
    hex_path = tmp_path / "lonely.hex"
    hex_path.write_text(format_ihex(FlashImage.from_chunks([(0, handmade_elf().flash)])))
    with pytest.raises(FlashError, match=r"a \.hex holds no symbols.*lonely\.elf"):
        load_image(hex_path)


def test_hex_of_another_build_than_its_elf_is_refused(tmp_path: Path) -> None:
    write_handmade(tmp_path)
    other = FlashImage.from_chunks([(0, handmade_elf(group=0x42).flash)])
    (tmp_path / "mica2.hex").write_text(format_ihex(other))
    with pytest.raises(FlashError, match=r"not the flash image of mica2\.elf .*differ at 0x00036"):
        load_image(tmp_path / "mica2.hex")


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        (dict(symbols=("TOS_AM_GROUP", "MOTE_PLATFORM_NAME")), "has no symbol TOS_LOCAL_ADDRESS"),
        (dict(node_id_in_bss=True), r"TOS_LOCAL_ADDRESS is in \.bss, not an initialised"),
    ],
)
def test_images_without_patchable_symbols_are_refused(
    tmp_path: Path, kwargs: dict[str, object], reason: str
) -> None:
    with pytest.raises(FlashError, match=reason):
        load_image(write_handmade(tmp_path, **kwargs)).patched(5, 0x7D)


def test_image_without_platform_name_is_refused(tmp_path: Path) -> None:
    image = load_image(write_handmade(tmp_path, symbols=("TOS_LOCAL_ADDRESS", "TOS_AM_GROUP")))
    with pytest.raises(FlashError, match="no symbol MOTE_PLATFORM_NAME"):
        image.check_platform("mica2")


# --- the avrdude line -----------------------------------------------------------------------


def test_avrdude_argv_is_the_mib510_line() -> None:
    assert avrdude_argv("/dev/ttyUSB0", Path("/tmp/m.hex")) == [
        "avrdude", "-c", "mib510", "-P", "/dev/ttyUSB0", "-p", "m128",
        "-U", "flash:w:/tmp/m.hex:i",
    ]  # fmt: skip


# --- `mote flash` ---------------------------------------------------------------------------


def test_dry_run_prints_the_exact_command_and_checksum(tmp_path: Path) -> None:
    write_handmade(tmp_path)
    port = "/dev/serial/by-id/usb-FTDI MIB510-if00"  # a space: the line must quote it
    result = mote(tmp_path, "flash", "--port", port, "--platform", "mica2", "--node-id", "5",
                  "--group", "0x22", "--image", "mica2.elf", "--dry-run")  # fmt: skip
    flash = patched_by_hand(5, 0x22)
    out = tmp_path / "mica2-node5-group22.hex"
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.splitlines() == [
        f"mica2 image mica2.elf, node id 5, group 0x22: {len(flash)} bytes of flash, "
        f"sha256 {hashlib.sha256(flash).hexdigest()[:16]}",
        "patched image: mica2-node5-group22.hex",
        f"avrdude -c mib510 -P '{port}' -p m128 -U flash:w:{out}:i",
    ]
    assert shlex.split(result.stdout.splitlines()[-1])[4] == port
    assert read_ihex(out) == FlashImage.from_chunks([(0, flash)])


def test_default_group_is_0x7d(tmp_path: Path) -> None:
    write_handmade(tmp_path)
    result = mote(tmp_path, "flash", "--port", "/dev/ttyUSB0", "--platform", "mica2",
                  "--node-id", "0", "--image", "mica2.elf", "--dry-run")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "node id 0, group 0x7d" in result.stdout
    patched = read_ihex(tmp_path / "mica2-node0-group7d.hex")
    assert patched == FlashImage.from_chunks([(0, patched_by_hand(0, 0x7D))])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--platform", "mica2dot"], "mica2.elf is a mica2 image, not mica2dot"),
        (["--node-id", "126"], "node id 126 (0x007E) is reserved in TinyOS 1.x (TOS_UART_ADDR"),
        (["--node-id", "0xffff"], "node id 65535 (0xFFFF) is reserved in TinyOS 1.x (TOS_BCAST"),
        (["--node-id", "65536"], "node id 65536 is out of range 0..65534"),
        (["--node-id", "-1"], "node id -1 is out of range 0..65534"),
        (["--group", "256"], "group 256 is out of range 0..255"),
        (["--group", "0x100"], "group 256 is out of range 0..255"),
        (["--image", "nothere.elf"], "nothere.elf: no such image file"),
    ],
)
def test_refusals_exit_2_with_the_reason_and_write_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    write_handmade(tmp_path)
    base = {"--platform": "mica2", "--node-id": "5", "--image": "mica2.elf"}
    for key, value in zip(args[::2], args[1::2], strict=True):
        base[key] = value
    argv = [x for kv in base.items() for x in kv]
    result = mote(tmp_path, "flash", "--port", "/dev/ttyUSB0", *argv, "--dry-run")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(f"Error: {message}")
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mica2.elf"]


def test_group_that_is_not_a_number_is_a_usage_error(tmp_path: Path) -> None:
    result = mote(tmp_path, "flash", "--port", "p", "--platform", "mica2", "--node-id", "1",
                  "--group", "seven", "--dry-run")  # fmt: skip
    assert result.returncode == 2
    assert "'seven' is not a number (decimal, or hex as 0x7d)" in result.stderr


def test_missing_avrdude_is_refused(tmp_path: Path) -> None:
    write_handmade(tmp_path)
    env = {**os.environ, "PATH": str(tmp_path)}  # nothing to run there
    result = mote(tmp_path, "flash", "--port", "/dev/ttyUSB0", "--platform", "mica2",
                  "--node-id", "5", "--image", "mica2.elf", env=env)  # fmt: skip
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("Error: avrdude is not installed (not on PATH)")


def fake_checkout(root: Path, avr_recipe: str | None) -> None:
    """A directory `mote flash` takes for a motebase checkout, its Makefile's `avr` target
    given by ``avr_recipe`` (none: no such target)."""
    (root / "firmware" / "hal").mkdir(parents=True)
    (root / "firmware" / "hal" / "hal.h").write_text("/* marker */\n")
    rules = f"avr:\n\t{avr_recipe}\n" if avr_recipe is not None else "other:\n\ttrue\n"
    (root / "Makefile").write_text(rules)


def test_without_image_it_builds_with_make_avr(tmp_path: Path) -> None:
    write_handmade(tmp_path, "prebuilt.elf")
    fake_checkout(tmp_path, "mkdir -p build/avr && cp prebuilt.elf build/avr/mica2.elf")
    (tmp_path / "firmware" / "sub").mkdir()
    result = mote(tmp_path / "firmware" / "sub", "flash", "--port", "/dev/ttyUSB0",
                  "--platform", "mica2", "--node-id", "9", "--dry-run")  # fmt: skip
    assert result.returncode == 0, result.stderr
    elf = tmp_path / "build" / "avr" / "mica2.elf"
    assert f"{elf} is missing: running `make avr` in {tmp_path}" in result.stderr
    assert result.stdout.startswith(f"mica2 image {elf}, node id 9, group 0x7d")
    assert (tmp_path / "build" / "avr" / "mica2-node9-group7d.hex").is_file()


def test_without_image_and_no_make_avr_target_it_says_how_to_build(tmp_path: Path) -> None:
    fake_checkout(tmp_path, None)
    result = mote(tmp_path, "flash", "--port", "/dev/ttyUSB0", "--platform", "mica2dot",
                  "--node-id", "3", "--dry-run")  # fmt: skip
    assert (result.returncode, result.stdout) == (2, "")
    elf = tmp_path / "build" / "avr" / "mica2dot.elf"
    assert (
        f"Error: {elf} is missing and `make avr` in {tmp_path} did not build it (exit status 2):"
        " build the AVR images with `make avr` (needs gcc-avr and avr-libc), or pass --image FILE"
    ) in result.stderr


# --- with the AVR toolchain ----------------------------------------------------------------


@pytest.mark.avr
@pytest.mark.parametrize("filler", [0, 70_000])
def test_patching_is_byte_for_byte_the_compilers_image(tmp_path: Path, filler: int) -> None:
    first = compile_mote(tmp_path, "first", node_id=1, group=0x7D, platform="mica2", filler=filler)
    second = compile_mote(
        tmp_path, "second", node_id=5, group=0x22, platform="mica2", filler=filler
    )
    expected = read_ihex(objcopy_hex(second))
    assert expected.size > len(CODE) + filler  # a real image: vectors, crt, main, .data
    data_lma = next(s.lma for s in load_image(first).elf.sections if s.name == ".data")
    assert (data_lma > 0x10000) == (filler > 0x10000)  # the patch lands past 64 KiB too
    from_elf = load_image(first)
    assert from_elf.platform == "mica2"
    assert from_elf.flash == read_ihex(objcopy_hex(first))  # reader == avr-objcopy
    assert from_elf.flash != expected  # the two builds differ only in the initialisers...
    assert from_elf.patched(5, 0x22) == expected  # ...which the patch makes equal
    assert load_image(first.with_suffix(".hex")).patched(5, 0x22) == expected


@pytest.mark.avr
def test_cli_checksum_is_that_of_avr_objcopys_binary(tmp_path: Path) -> None:
    compile_mote(tmp_path, "mica2dot", node_id=1, group=0x7D, platform="mica2dot")
    result = mote(tmp_path, "flash", "--port", "/dev/ttyUSB0", "--platform", "mica2dot",
                  "--node-id", "42", "--group", "0x22", "--image", "mica2dot.elf",
                  "--dry-run")  # fmt: skip
    assert result.returncode == 0, result.stderr
    binary = tmp_path / "out.bin"
    subprocess.run(
        [avr_tool("avr-objcopy"), "-I", "ihex", "-O", "binary", "--gap-fill", "0xff",
         str(tmp_path / "mica2dot-node42-group22.hex"), str(binary)],
        check=True,
    )  # fmt: skip
    digest = hashlib.sha256(binary.read_bytes()).hexdigest()[:16]
    assert result.stdout.splitlines()[0].endswith(f"sha256 {digest}")
    other = compile_mote(tmp_path, "other", node_id=42, group=0x22, platform="mica2dot")
    assert read_ihex(tmp_path / "mica2dot-node42-group22.hex") == load_image(other).flash


@pytest.mark.avr
def test_compiled_image_for_the_other_platform_is_refused(tmp_path: Path) -> None:
    compile_mote(tmp_path, "img", node_id=1, group=0x7D, platform="mica2dot")
    result = mote(tmp_path, "flash", "--port", "/dev/ttyUSB0", "--platform", "mica2",
                  "--node-id", "5", "--image", "img.elf", "--dry-run")  # fmt: skip
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("Error: img.elf is a mica2dot image, not mica2")


@pytest.mark.avr
def test_missing_port_is_refused_when_avrdude_is_there(tmp_path: Path) -> None:
    avr_tool("avrdude")
    compile_mote(tmp_path, "img", node_id=1, group=0x7D, platform="mica2")
    result = mote(tmp_path, "flash", "--port", str(tmp_path / "ttyUSB9"), "--platform",
                  "mica2", "--node-id", "5", "--image", "img.elf")  # fmt: skip
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(f"Error: port {tmp_path / 'ttyUSB9'} does not exist")


@pytest.mark.avr
def test_avrdude_programs_the_patched_image_on_a_mib510(tmp_path: Path) -> None:
    """`mote flash` without --dry-run: the real avrdude erases, writes and verifies the
    flash of a MIB510 model on a pty, and the flash then holds the patched image, the
    rest erased. The image spans 64 KiB boundaries and many 256-byte blocks."""
    avr_tool("avrdude")
    compile_mote(tmp_path, "mica2", node_id=1, group=0x7D, platform="mica2", filler=70_000)
    board = Mib510()
    try:
        result = mote(tmp_path, "flash", "--port", board.port, "--platform", "mica2",
                      "--node-id", "12", "--group", "0x33", "--image", "mica2.elf")  # fmt: skip
    finally:
        board.close()
    assert result.returncode == 0, result.stderr
    patched = load_image(tmp_path / "mica2.elf").patched(12, 0x33)
    assert bytes(board.flash[: patched.end]) == patched.flat()
    assert set(board.flash[patched.end :]) == {0xFF}
    assert (board.errors, board.isp_sessions) == ([], [1, 0])  # took the line, gave it back
    lines = result.stdout.splitlines()
    hex_path = tmp_path / "mica2-node12-group33.hex"
    assert (
        lines[2]
        == f"{avr_tool('avrdude')} -c mib510 -P {board.port} -p m128 -U flash:w:{hex_path}:i"
    )
    assert lines[3] == "node 12 programmed"
    # avrdude's own report streams through (it writes to stderr).
    assert f"avrdude: {patched.end} bytes of flash verified" in result.stderr
