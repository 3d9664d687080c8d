"""Give a mote image its node id and AM group, the way TinyOS 1.x's set-mote-id did.

The image defines ``uint16_t TOS_LOCAL_ADDRESS`` and ``uint8_t TOS_AM_GROUP`` as
initialised globals: they live in .data, whose initial values the C runtime copies from
flash to RAM at reset. Patching them means rewriting those initial values in the flash
copy, at the .data section's LMA plus the symbol's offset into .data (little-endian, as
the AVR stores a uint16_t). Nothing else in the image changes, so the patched image is
byte for byte the one the compiler would have produced with those initialisers.

The image names its platform in ``MOTE_PLATFORM_NAME`` (a NUL-terminated string in
flash): a mica2 image runs its UART and timers at the wrong rates on a 4 MHz mica2dot,
so an image built for the other platform is refused before anything is written.

A .hex is only bytes: the symbols come from the .elf the build wrote beside it, and the
.hex must hold exactly that ELF's flash bytes, or the addresses would patch the wrong
image.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from motebase.gateway.flash.elf import ElfImage, ElfSymbol, read_elf
from motebase.gateway.flash.errors import FlashError
from motebase.gateway.flash.ihex import read_ihex
from motebase.gateway.flash.image import FlashImage

NODE_ID_SYMBOL = "TOS_LOCAL_ADDRESS"
GROUP_SYMBOL = "TOS_AM_GROUP"
PLATFORM_SYMBOL = "MOTE_PLATFORM_NAME"
PLATFORMS = ("mica2", "mica2dot")
#: TinyOS 1.x reserved addresses: TOS_UART_ADDR and TOS_BCAST_ADDR.
RESERVED_IDS = {0x007E: "TOS_UART_ADDR, the serial port", 0xFFFF: "TOS_BCAST_ADDR, broadcast"}


@dataclass(frozen=True)
class MoteImage:
    """A mote image's flash bytes with the ELF that explains them."""

    elf: ElfImage
    flash: FlashImage
    source: Path

    @property
    def platform(self) -> str:
        symbol = self._symbol(PLATFORM_SYMBOL, "built without ids.c? not a motebase AVR image")
        raw = self.flash.read(self._flash_address(symbol), symbol.size)
        return raw.split(b"\0", 1)[0].decode("latin-1")

    def check_platform(self, platform: str) -> None:
        if self.platform != platform:
            raise FlashError(
                f"{self.source} is a {self.platform} image, not {platform}: "
                f"flash the {platform} image (`make avr` builds build/avr/{platform}.elf)"
            )

    def patched(self, node_id: int, group: int) -> FlashImage:
        check_node_id(node_id)
        check_group(group)
        flash = self.flash
        for name, value, size in ((NODE_ID_SYMBOL, node_id, 2), (GROUP_SYMBOL, group, 1)):
            symbol = self._symbol(name, "the image cannot take a node id and group")
            if symbol.size != size:
                raise FlashError(
                    f"{self.source}: {name} is {symbol.size} byte(s), expected {size} "
                    f"({'uint16_t' if size == 2 else 'uint8_t'})"
                )
            flash = flash.patched(self._data_initialiser(symbol), value.to_bytes(size, "little"))
        return flash

    def _symbol(self, name: str, consequence: str) -> ElfSymbol:
        symbol = self.elf.symbols.get(name)
        if symbol is None:
            raise FlashError(f"{self.elf.path} has no symbol {name}: {consequence}")
        return symbol

    def _flash_address(self, symbol: ElfSymbol) -> int:
        section = symbol.section
        if section is None or not section.loads_into_flash:
            where = section.name if section else "no section"
            raise FlashError(f"{self.elf.path}: {symbol.name} is in {where}, not in flash")
        return section.lma + (symbol.value - section.addr)

    def _data_initialiser(self, symbol: ElfSymbol) -> int:
        """Where in flash the symbol's initial value lies: only an initialised RAM
        variable has one (a zero initialiser puts it in .bss, with nothing to patch)."""
        section = symbol.section
        if section is None or section.lma == section.addr:
            where = section.name if section else "no section"
            raise FlashError(
                f"{self.elf.path}: {symbol.name} is in {where}, not an initialised RAM "
                "variable in .data (give it a non-zero initialiser)"
            )
        return self._flash_address(symbol)


def check_node_id(node_id: int) -> None:
    if not 0 <= node_id <= 0xFFFF:
        raise FlashError(f"node id {node_id} is out of range 0..65534 (0 is the basestation)")
    if node_id in RESERVED_IDS:
        raise FlashError(
            f"node id {node_id} (0x{node_id:04X}) is reserved in TinyOS 1.x "
            f"({RESERVED_IDS[node_id]}); use 0 for the basestation and 1..65534 otherwise"
        )


def check_group(group: int) -> None:
    if not 0 <= group <= 0xFF:
        raise FlashError(f"group {group} is out of range 0..255 (0x00..0xFF)")


def load_image(path: Path) -> MoteImage:
    """An image from FILE.elf, or from FILE.hex with its FILE.elf beside it."""
    if not path.is_file():
        raise FlashError(f"{path}: no such image file")
    if path.suffix.lower() == ".hex":
        return _load_hex(path)
    elf = read_elf(path)
    flash = FlashImage.from_chunks((s.lma, elf.section_bytes(s)) for s in elf.flash_sections())
    return MoteImage(elf, flash, path)


def _load_hex(path: Path) -> MoteImage:
    elf_path = path.with_suffix(".elf")
    if not elf_path.is_file():
        raise FlashError(
            f"{path}: a .hex holds no symbols, so its node id and group cannot be found; "
            f"put the .elf it was built with beside it ({elf_path.name}) or pass the .elf"
        )
    from_elf = load_image(elf_path)
    flash = read_ihex(path)
    diff = flash.first_difference(from_elf.flash)
    if diff is not None:
        raise FlashError(
            f"{path} is not the flash image of {elf_path.name} (they differ at 0x{diff:05x}); "
            "rebuild both, or pass the .elf"
        )
    return MoteImage(from_elf.elf, flash, path)
