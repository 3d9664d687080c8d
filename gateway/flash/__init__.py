"""Mote images for the ATmega128 motes: read (ELF, Intel HEX), patch (node id, AM group),
check (platform), write (Intel HEX) and program them (avrdude on a MIB510).

- :mod:`motebase.gateway.flash.elf` ELF32 sections, segments and symbols (construct layouts);
- :mod:`motebase.gateway.flash.ihex` Intel HEX records (construct layout) to and from images;
- :mod:`motebase.gateway.flash.image` the flash bytes by address and their checksum;
- :mod:`motebase.gateway.flash.patch` node id, group and platform of an image;
- :mod:`motebase.gateway.flash.avrdude` the programmer's command line and run.
"""

from motebase.gateway.flash.errors import FlashError

__all__ = ["FlashError"]
