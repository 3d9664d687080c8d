"""Link tables from files (``--link-table``), in one of three formats told apart by content.

* CSV ``src,dst,prob`` (header optional): reception probabilities, as
  :func:`motebase.emu.topology.links_from_csv` reads them.
* TOSSIM 1.x ``lossy.nss`` (LossyBuilder's output, read by TOSSIM's ``-rf``): whitespace-
  separated ``src:dst:bit_error_probability`` entries. Each becomes a reception probability:
  every decoded data bit of a typical frame (a 54-byte TinyDB TOS_Msg, sync word and CRC)
  independently wrong with that probability, no error correction
  (:func:`motebase.emu.reception.prr_from_bit_error`). Links that can never deliver (probability 0
  in single precision) are left out.
* TOSSIM 2 gain files (LinkLayerModel's output, read by ``topo.txt``-style scripts):
  ``gain SRC DST DBM`` lines give a link's received power and ``noise NODE MEAN RANGE``
  lines a node's noise floor (MEAN; RANGE, the spread of TOSSIM 2's old uniform noise,
  is not modelled: the floor is constant here). Nodes without a ``noise`` line get
  ``RadioParams.noise_dbm``. These feed the SINR model directly; links below the
  receiver's floor + ``RadioParams.link_min_snr_db`` are left out, as for computed powers.

Node numbers in every format are node indices (equal to mote ids below 126).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from motebase.emu import reception, topology
from motebase.emu.propagation import RadioParams

_NSS_ENTRY = re.compile(r"^(\d+):(\d+):([-+0-9.eE]+)$")


def detect_format(text: str) -> str:
    """``"gain"``, ``"nss"`` or ``"csv"``, from the first line that is not blank or a comment."""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "%")):
            continue
        first = stripped.split()[0]
        if first in ("gain", "noise"):
            return "gain"
        if _NSS_ENTRY.match(first):
            return "nss"
        return "csv"
    return "csv"


def load(path: str | Path, n: int, params: RadioParams | None = None) -> topology.Links:
    """The link table in ``path`` for ``n`` nodes (format detected from the content)."""
    text = Path(path).read_text()
    kind = detect_format(text)
    if kind == "gain":
        return links_from_gain(text, n, params or RadioParams(), str(path))
    if kind == "nss":
        return links_from_nss(text, n, str(path))
    return topology.links_from_csv(path, n)


def _check_nodes(where: str, n: int, *nodes: int) -> None:
    for node in nodes:
        if not 0 <= node < n:
            raise ValueError(f"{where}: node {node} outside 0..{n - 1}")


def links_from_nss(text: str, n: int, where: str = "lossy.nss") -> topology.Links:
    src, dst, ber = [], [], []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(("#", "%")):
            continue
        for token in line.split():
            m = _NSS_ENTRY.match(token)
            if m is None:
                raise ValueError(f"{where}:{lineno}: expected 'src:dst:bit_error', got {token!r}")
            s, d, p = int(m[1]), int(m[2]), float(m[3])
            _check_nodes(f"{where}:{lineno}", n, s, d)
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{where}:{lineno}: bit error probability {p} not in [0, 1]")
            if s != d:  # TOSSIM ignores self links too
                src.append(s)
                dst.append(d)
                ber.append(p)
    prob = reception.prr_from_bit_error(np.array(ber, dtype=np.float64)).astype(np.float32)
    keep = prob > 0.0
    return topology.to_csr(
        n, np.array(src, np.int64)[keep], np.array(dst, np.int64)[keep], prob[keep]
    )


def _node(where: str, text: str, n: int) -> int:
    try:
        node = int(text)
    except ValueError:
        raise ValueError(f"{where}: {text!r} is not a node number") from None
    _check_nodes(where, n, node)
    return node


def _number(where: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}: {text!r} is not a number") from None
    if not np.isfinite(value):
        raise ValueError(f"{where}: {text!r} is not finite")
    return value


def links_from_gain(
    text: str, n: int, params: RadioParams, where: str = "gain file"
) -> topology.Links:
    noise = np.full(n, params.noise_dbm, dtype=np.float64)
    src, dst, rx = [], [], []
    for lineno, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts or parts[0].startswith(("#", "%")):
            continue
        here = f"{where}:{lineno}"
        if parts[0] == "gain" and len(parts) >= 4:
            s, d = _node(here, parts[1], n), _node(here, parts[2], n)
            if s != d:
                src.append(s)
                dst.append(d)
                rx.append(_number(here, parts[3]))
        elif parts[0] == "noise" and len(parts) >= 3:
            noise[_node(here, parts[1], n)] = _number(here, parts[2])
        else:
            raise ValueError(f"{here}: expected 'gain SRC DST DBM' or 'noise NODE MEAN RANGE'")
    s_arr, d_arr = np.array(src, np.int64), np.array(dst, np.int64)
    rx_arr = np.array(rx, np.float64)
    keep = rx_arr >= noise[d_arr] + params.link_min_snr_db
    return topology.links_from_powers(n, s_arr[keep], d_arr[keep], rx_arr[keep], noise)
