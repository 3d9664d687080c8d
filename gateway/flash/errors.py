"""The one error of the flash layer: an image that cannot be read, patched or programmed as
asked. Its message is what the user reads, so it names the file and the reason."""

from __future__ import annotations


class FlashError(Exception):
    """An image or a request `mote flash` refuses, with the reason in plain words."""
