"""What a CC1000 receiver makes of a signal: packet reception probability from SINR.

The mica2's CC1000 sends non-coherent FSK, Manchester coded: 19.2 kbit/s of data as
38.4 kbaud of chips. A chip is wrong with probability ``0.5 exp(-(SINR / 2)(B_N / R))``
(noise bandwidth ``B_N`` = 30 kHz, data rate ``R`` = 19.2 kbit/s, the Zuniga &
Krishnamachari model), chips fail independently, and a frame survives only if all of its
decoded chips do: ``PRR = (1 - Pe) ** (16 * bytes)``. The decoded bytes are the TOS_Msg
plus the 2-byte sync word before it and the 2-byte CRC after it; the preamble is not
counted (an error there only delays bit synchronisation).

The curve is steep: a full 54-byte TinyDB frame goes from 10 % to 90 % between 8.3 and
10.3 dB of SNR. The C medium computes the same curve (``medium_prr`` in
``emu/csrc/medium.c``; a test keeps the two equal); this module serves the Python side:
the ``prob`` column of a power link table and the conversion of other link tables.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

NOISE_BANDWIDTH_HZ = 30_000.0
DATA_RATE_BPS = 19_200.0
CHIPS_PER_BIT = 2
DECODED_EXTRA_BYTES = 4  # sync word + CRC around each TOS_Msg (medium.h MEDIUM_DECODED_EXTRA)
#: The frame a link's single "reception probability" describes: a full TinyDB TOS_Msg
#: (5-byte header + 49 data bytes, firmware/net/mhop.h TOS_MSG_MAX).
TYPICAL_TOS_MSG_BYTES = 54
_EB_N0_PER_SINR = NOISE_BANDWIDTH_HZ / DATA_RATE_BPS


def chip_error(snr_db: ArrayLike) -> np.ndarray:
    """Probability that one Manchester chip is decoded wrong at ``snr_db``."""
    sinr = np.power(10.0, np.asarray(snr_db, dtype=np.float64) / 10.0)
    return 0.5 * np.exp(-0.5 * sinr * _EB_N0_PER_SINR)


def decoded_chips(tos_len: int) -> int:
    return 8 * CHIPS_PER_BIT * (tos_len + DECODED_EXTRA_BYTES)


def prr(snr_db: ArrayLike, tos_len: int = TYPICAL_TOS_MSG_BYTES) -> np.ndarray:
    """Probability that a TOS_Msg of ``tos_len`` bytes arrives intact at ``snr_db``
    (signal over noise plus interference, in dB)."""
    return np.exp(decoded_chips(tos_len) * np.log1p(-chip_error(snr_db)))


def snr_for_prr(prob: ArrayLike, tos_len: int = TYPICAL_TOS_MSG_BYTES) -> np.ndarray:
    """The SNR (dB) at which :func:`prr` is ``prob``; -inf for 0 and +inf for 1."""
    p = np.asarray(prob, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        pe = -np.expm1(np.log(p) / decoded_chips(tos_len))
        sinr = -2.0 * np.log(pe / 0.5) / _EB_N0_PER_SINR
        out = 10.0 * np.log10(sinr)
    out = np.where(p <= 0.0, -np.inf, out)
    return np.where(p >= 1.0, np.inf, out)


def prr_from_bit_error(bit_error: ArrayLike, tos_len: int = TYPICAL_TOS_MSG_BYTES) -> np.ndarray:
    """Reception probability of a frame whose every decoded data bit is independently
    wrong with ``bit_error`` (no error correction), as TOSSIM 1.x ``lossy.nss`` links give."""
    bits = 8 * (tos_len + DECODED_EXTRA_BYTES)
    with np.errstate(divide="ignore"):  # every bit wrong: log1p(-1) = -inf, PRR 0
        return np.exp(bits * np.log1p(-np.asarray(bit_error, dtype=np.float64)))
