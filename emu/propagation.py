"""Received power of every directed link: log-distance path loss, shadowing, hardware variance.

For a sender ``i`` and a receiver ``j`` at distance ``d``::

    rx_dbm(i -> j) = tx_dbm + tx_offset[i] - (PL(d0) + 10 n log10(d / d0) + X_ij)
    noise_dbm[j]   = noise_dbm + noise_offset[j]

``X_ij`` (shadowing, normal with ``shadowing_db`` deviation) is drawn once per unordered
pair, so the path itself is symmetric; ``(noise_offset, tx_offset)`` is drawn once per node
from the 2 x 2 hardware covariance, which is what makes the two directions of a link differ
(Zuniga & Krishnamachari's link-layer model, as in TOSSIM 2's LinkLayerModel). Every draw
comes from one numpy generator seeded from the network seed, in a fixed order, so a seed
fixes the table. The figures and their sources are in emu/README.md ("Radio model").

Only links whose power reaches the receiver's noise floor + ``link_min_snr_db`` (3 dB, the
carrier-sense threshold) are kept. A weaker frame can be neither sensed nor received (a
receiver locks at 6 dB); all it could do is add up to the noise floor's power again to the
interference. Leaving those out keeps a packet's cost at its out-degree (about 45 links on
a 10 m grid instead of 117 at noise - 3 dB, which made the emulator ~35 % slower), at the
price of underestimating interference from far senders; emu/README.md has the figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

_BLOCK = 256  # senders per sweep block
_STREAM = 0x52414449  # radio draws' own seed stream, apart from random_positions' generator
_TAIL_SIGMAS = 4.0  # pairs needing a stronger-than-4-sigma draw to be a link are not drawn


@dataclass(frozen=True)
class RadioParams:
    """Propagation and hardware figures (defaults: mica2 indoors, see emu/README.md)."""

    exponent: float = 3.0  # path-loss exponent n
    pl_d0_db: float = 55.4  # path loss at the reference distance
    d0_m: float = 1.0
    shadowing_db: float = 3.2  # deviation of X_ij
    tx_dbm: float = 0.0  # nominal output power
    noise_dbm: float = -105.0  # nominal noise floor
    noise_var_db2: float = 3.7  # hardware covariance S11: noise floor
    noise_tx_cov_db2: float = -3.3  # S12 = S21
    tx_var_db2: float = 6.0  # S22: output power
    link_min_snr_db: float = 3.0  # links kept: power at least the receiver's floor + this
    # receiver and MAC (used by the C medium, not by the propagation below)
    lock_db: float = 6.0  # SINR at a frame's start that locks a receiver on it
    cca_db: float = 3.0  # energy over the noise floor that makes the channel busy

    def covariance(self) -> np.ndarray:
        return np.array(
            [[self.noise_var_db2, self.noise_tx_cov_db2], [self.noise_tx_cov_db2, self.tx_var_db2]]
        )

    def path_loss_db(self, dist: np.ndarray) -> np.ndarray:
        """Mean path loss (no shadowing) at ``dist`` metres; closer than d0 counts as d0."""
        ratio = np.maximum(np.asarray(dist, dtype=np.float64), self.d0_m) / self.d0_m
        return self.pl_d0_db + 10.0 * self.exponent * np.log10(ratio)

    def reach_m(self) -> float:
        """Beyond this distance a link would need a draw more than 4 sigma strong."""
        spread = math.sqrt(
            self.shadowing_db**2
            + self.tx_var_db2
            + self.noise_var_db2
            - 2.0 * self.noise_tx_cov_db2
        )
        max_loss = self.tx_dbm - (self.noise_dbm + self.link_min_snr_db) + _TAIL_SIGMAS * spread
        return self.d0_m * 10.0 ** ((max_loss - self.pl_d0_db) / (10.0 * self.exponent))


@dataclass(frozen=True)
class LinkPowers:
    """Directed links (``src[k] -> dst[k]``, in no particular order) and per-node figures."""

    src: np.ndarray  # int64
    dst: np.ndarray  # int64
    rx_dbm: np.ndarray  # float32, per link
    noise_dbm: np.ndarray  # float32, per node
    tx_dbm: np.ndarray  # float32, per node: nominal power plus the node's offset


def link_powers(pos: np.ndarray, params: RadioParams, seed: int) -> LinkPowers:
    """Every directed link of the nodes at ``pos`` (n x 2, metres) above the cutoff.

    Pairs are swept in blocks of senders sorted by x, each compared only with the nodes
    within ``params.reach_m()`` in x, so the work is O(n x neighbours), not O(n^2).
    """
    n = len(pos)
    rng = np.random.default_rng([seed & 0xFFFFFFFFFFFFFFFF, _STREAM])
    offsets = rng.multivariate_normal(np.zeros(2), params.covariance(), size=n)
    noise = params.noise_dbm + offsets[:, 0]
    tx = params.tx_dbm + offsets[:, 1]
    reach = params.reach_m()
    by_x = np.argsort(pos[:, 0], kind="stable")
    xs = pos[by_x, 0]
    srcs, dsts, powers = [], [], []
    for start in range(0, n, _BLOCK):
        block = by_x[start : start + _BLOCK]
        hi = np.searchsorted(xs, xs[min(start + _BLOCK, n) - 1] + reach, side="right")
        cand = by_x[start:hi]  # later in x order only: each unordered pair once
        dist = np.hypot(
            pos[block, None, 0] - pos[None, cand, 0], pos[block, None, 1] - pos[None, cand, 1]
        )
        rank = np.arange(len(block))[:, None] < np.arange(len(cand))[None, :]
        i, j = np.nonzero(rank & (dist <= reach))
        a, b = block[i], cand[j]
        loss = params.path_loss_db(dist[i, j]) + rng.normal(0.0, params.shadowing_db, len(a))
        for s, r in ((a, b), (b, a)):
            rx = tx[s] - loss
            keep = rx >= noise[r] + params.link_min_snr_db
            srcs.append(s[keep])
            dsts.append(r[keep])
            powers.append(rx[keep])
    return LinkPowers(
        src=np.concatenate(srcs).astype(np.int64),
        dst=np.concatenate(dsts).astype(np.int64),
        rx_dbm=np.concatenate(powers).astype(np.float32),
        noise_dbm=noise.astype(np.float32),
        tx_dbm=tx.astype(np.float32),
    )
