"""`mote flash`: patch a mote image with its node id and group and program it on a MIB510."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click

from motebase import gateway
from motebase.gateway.flash import FlashError
from motebase.gateway.flash.avrdude import avrdude_argv, check_port, command_line, find_avrdude, run
from motebase.gateway.flash.ihex import write_ihex
from motebase.gateway.flash.image import FlashImage
from motebase.gateway.flash.patch import PLATFORMS, check_group, check_node_id, load_image
from motebase.gateway.protocol.tos import DEFAULT_GROUP

#: What marks a motebase source checkout: the root Makefile and the HAL every image needs.
_CHECKOUT_MARKERS = ("Makefile", "firmware/hal/hal.h")


class FlashRefused(click.ClickException):
    """A request `mote flash` will not carry out; exit status 2, like a usage error,
    before anything is written to the mote."""

    exit_code = 2


class _Number(click.ParamType):
    """An integer written in decimal or with a 0x prefix (groups are usually hex)."""

    name = "integer"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> int:
        if isinstance(value, int):
            return value
        try:
            return int(str(value), 0)
        except ValueError as exc:
            raise click.BadParameter(
                f"{value!r} is not a number (decimal, or hex as 0x7d)", ctx=ctx, param=param
            ) from exc


@click.command("flash")
@click.option("--port", required=True, help="The MIB510's serial port, e.g. /dev/ttyUSB0.")
@click.option(
    "--platform",
    type=click.Choice(PLATFORMS),
    required=True,
    help="The mote's platform; an image built for the other one is refused.",
)
@click.option(
    "--node-id",
    type=_Number(),
    required=True,
    help="TOS_LOCAL_ADDRESS: 0 for the basestation on the MIB510, else 1..65534 (not 126).",
)
@click.option(
    "--group",
    type=_Number(),
    default=DEFAULT_GROUP,
    show_default="0x7d",
    help="TOS_AM_GROUP, 0..255: motes hear only packets of their own group.",
)
@click.option(
    "--image",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="An .elf, or a .hex with its .elf beside it. "
    "Default: build/avr/PLATFORM.elf of the source checkout, built by `make avr` if missing.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Write the patched image and print the avrdude command and the checksum; "
    "program nothing (the port need not exist).",
)
def flash_cmd(
    port: str, platform: str, node_id: int, group: int, image: Path | None, dry_run: bool
) -> None:
    """Program a mote on a Crossbow MIB510: take the image for PLATFORM, set its node id and
    AM group in the flash copy of .data (as TinyOS 1.x's set-mote-id did), write the
    patched image as Intel HEX beside it and run `avrdude -c mib510 -p m128`.

    The checksum printed is the first 16 hex digits of the SHA-256 of the flash bytes from
    address 0 to the image's end, holes as erased 0xFF: the digest of `avr-objcopy -I ihex
    -O binary --gap-fill 0xff PATCHED.hex out.bin`."""
    try:
        check_node_id(node_id)
        check_group(group)
        avrdude = "avrdude" if dry_run else find_avrdude()
        if not dry_run:
            check_port(port)
        source = image if image is not None else _built_image(platform)
        mote_image = load_image(source)
        mote_image.check_platform(platform)
        patched = mote_image.patched(node_id, group)
        out = _patched_path(source, node_id, group)
        _write(patched, out)
    except FlashError as exc:
        raise FlashRefused(str(exc)) from None
    argv = avrdude_argv(port, out.resolve(), avrdude)
    click.echo(
        f"{platform} image {source}, node id {node_id}, group 0x{group:02x}: "
        f"{patched.size} bytes of flash, sha256 {patched.sha256()[:16]}"
    )
    click.echo(f"patched image: {out}")
    click.echo(command_line(argv))
    if dry_run:
        return
    status = run(argv)
    if status != 0:
        raise click.ClickException(f"avrdude failed (exit status {status}); its output is above")
    click.echo(f"node {node_id} programmed")


def _patched_path(source: Path, node_id: int, group: int) -> Path:
    return source.with_name(f"{source.stem}-node{node_id}-group{group:02x}.hex")


def _write(patched: FlashImage, out: Path) -> None:
    try:
        write_ihex(patched, out)
    except OSError as exc:
        raise FlashError(f"cannot write the patched image {out}: {exc.strerror}") from None


def _built_image(platform: str) -> Path:
    """build/avr/PLATFORM.elf of the source checkout, made with `make avr` when missing."""
    root = _checkout()
    elf = root / "build" / "avr" / f"{platform}.elf"
    if elf.is_file():
        return elf
    click.echo(f"{elf} is missing: running `make avr` in {root}", err=True)
    try:
        # The build talks on stderr: stdout stays the three lines a script may read.
        status = subprocess.run(["make", "avr"], cwd=root, stdout=_stderr_fd(), check=False)
    except OSError as exc:
        raise FlashError(f"cannot run make ({exc.strerror}): pass --image FILE") from None
    if status.returncode != 0 or not elf.is_file():
        raise FlashError(
            f"{elf} is missing and `make avr` in {root} did not build it "
            f"(exit status {status.returncode}): "
            "build the AVR images with `make avr` (needs gcc-avr and avr-libc), "
            "or pass --image FILE"
        )
    return elf


def _stderr_fd() -> int | None:
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None  # not a file (a test runner's capture): the child inherits ours


def _checkout() -> Path:
    """The motebase checkout holding the working directory, else the one this package
    runs from (an editable install)."""
    here = Path.cwd().resolve()
    package = Path(gateway.__file__).resolve().parent
    for start in (here, package):
        for candidate in (start, *start.parents):
            if all((candidate / marker).is_file() for marker in _CHECKOUT_MARKERS):
                return candidate
    raise FlashError(
        "no --image given and no motebase source checkout here to build one "
        f"(looked in {here} and its parents): run from the checkout, or pass --image FILE"
    )


COMMANDS: list[click.Command] = [flash_cmd]
