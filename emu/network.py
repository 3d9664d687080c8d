"""The emulated network from Python: configure, run in virtual time, observe.

All per-packet and per-node work happens in C (``motebase.emu._motesim``); this module
turns a :class:`NetworkConfig` into C calls and exposes the C arrays (energy,
counters, liveness) as zero-copy numpy views.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from motebase.emu import linktables, native, reception, topology
from motebase.emu.propagation import RadioParams
from motebase.emu.sources import Source, default_sources
from motebase.emu.topology import DEFAULT_LINK_MODEL

ffi, lib = native.load()

PLATFORMS = {"mica": lib.EMU_MICA, "mica2": lib.EMU_MICA2, "mica2dot": lib.EMU_MICA2DOT}
TOPOLOGIES = ("grid", "random", "intel-lab", "intel", "file")  # intel: alias of intel-lab
LINK_MODELS = ("sinr", *topology.LINK_MODELS)
PHASES = {
    "sleep": lib.EMU_PH_SLEEP,
    "cpu": lib.EMU_PH_CPU,
    "listen": lib.EMU_PH_LISTEN,
    "transmit": lib.EMU_PH_TX,
    "sensing": lib.EMU_PH_SENSE,
}
COUNTERS = {
    "sent": lib.EMU_CNT_SENT,
    "received": lib.EMU_CNT_RECEIVED,
    "collided": lib.EMU_CNT_COLLIDED,
    "lost": lib.EMU_CNT_LOST,
    "dropped": lib.EMU_CNT_DROPPED,
    "acked": lib.EMU_CNT_ACKED,
    "backoffs": lib.EMU_CNT_BACKOFFS,
    "samples": lib.EMU_CNT_SAMPLES,
    "uart_bytes": lib.EMU_CNT_UART_BYTES,
}
#: One firmware hal.observe report (emu/csrc/emu_types.h ``emu_observation``).
OBSERVATION_DTYPE = np.dtype(
    [
        ("t_us", "<u8"),
        ("node", "<u4"),
        ("epoch", "<u2"),
        ("kind", "u1"),
        ("qid", "u1"),
        ("status", "u1"),
        ("n_fields", "u1"),
        ("have", "<u2"),
        ("values", "<i4", (16,)),
    ],
    align=True,
)
OBS_SAMPLED = lib.MOTE_OBS_SAMPLED
OBS_QUERY = lib.MOTE_OBS_QUERY
UNKNOWN_ATTR = 0x80
NO_PARENT = 0xFFFF  # routing(): the node has no route
NO_DEPTH = 0xFF
UART_ADDR = 0x007E  # routing(): the root's parent is its serial port
_UART_CHUNK = 65536
_MAX_SET_PROB = 1.0 - 1e-9  # set_link(p=1) in the SINR model: a finite, near-certain power


class ConfigError(ValueError):
    """A network configuration the emulator cannot build."""


@dataclass(frozen=True)
class NetworkConfig:
    """What to emulate. Distances are in metres, times in milliseconds of virtual time.

    ``link_model``: ``sinr``, the default (received powers from ``radio``,
    emu/propagation.py, and the C medium's SINR reception, capture and energy carrier
    sense), or a distance model,
    ``logistic`` or ``disc`` (emu/topology.py), whose ``radio_range`` defaults to 1.5 x
    ``spacing`` (a grid node then hears its 8 nearest neighbours) and whose links below
    ``min_link_prob`` are left out. ``lossless`` always uses ``disc``. A ``link_table`` file
    (emu/linktables.py) replaces the model. ``sensors`` maps attribute names (firmware
    catalog) to sources; attributes not named keep the defaults of
    :func:`motebase.emu.sources.default_sources`.
    """

    nodes: int = 25
    topology: str = "grid"
    platform: str = "mica2"
    seed: int = 1
    lossless: bool = False
    spacing: float = 10.0
    radio_range: float | None = None
    link_model: str = DEFAULT_LINK_MODEL
    radio: RadioParams = field(default_factory=RadioParams)
    min_link_prob: float = 0.1
    asymmetry: float = 0.0
    positions_file: str | Path | None = None
    root_position: tuple[float, float] | None = None
    link_table: str | Path | None = None
    link_decay_per_hour: float = 0.0
    battery_j: float = 0.0
    tx_current_a: float = 0.0
    #: The least time (ms) between two frames a node other than the root hands its radio
    #: (0: no limit). A radio slower than the sample rate (TODS 2005 Table V): the
    #: firmware retries a refused send a few ms later, so results pile up in its queue.
    send_gap_ms: float = 0.0
    sensors: Mapping[str, Source] = field(default_factory=dict)
    uart_capacity: int = 1 << 20
    max_faults: int = 4096

    def positions(self) -> np.ndarray:
        if self.topology == "grid":
            return topology.grid_positions(self.nodes, self.spacing)
        if self.topology == "random":
            return topology.random_positions(self.nodes, self.spacing, self.seed)
        return self.file_layout().positions

    def file_layout(self) -> topology.FileLayout:
        """The layout of a positions file (``file``) or of the Intel lab (``intel-lab``):
        every mote at the node of its id, absent nodes for the ids the file skips."""
        if self.topology in ("intel-lab", "intel"):
            path: str | Path = topology.INTEL_LAB
        elif self.topology == "file":
            if self.positions_file is None:
                raise ConfigError("topology 'file' needs positions_file")
            path = self.positions_file
        else:
            raise ConfigError(f"unknown topology {self.topology!r}; choose one of {TOPOLOGIES}")
        return topology.file_layout(path, self.root_position, node_index)

    def absent_nodes(self) -> np.ndarray:
        """Node indices no mote has (ids a positions file skips); none for a generated
        layout."""
        if self.topology in ("grid", "random"):
            return np.empty(0, dtype=np.int64)
        return self.file_layout().absent

    def node_count(self) -> int:
        fixed = ("file", "intel-lab", "intel")
        return len(self.positions()) if self.topology in fixed else self.nodes

    def links(self, positions: np.ndarray) -> topology.Links:
        if self.link_table is not None:
            return linktables.load(self.link_table, len(positions), self.radio)
        if self.link_model not in LINK_MODELS:
            raise ConfigError(
                f"unknown link model {self.link_model!r}; choose one of {', '.join(LINK_MODELS)}"
            )
        if self.link_model == "sinr" and not self.lossless:
            if self.radio_range is not None:
                # sinr's reach follows from powers: a range given for it would do nothing
                raise ConfigError(
                    "a radio range applies to the logistic and disc link models (and "
                    "lossless), not to sinr, the default, whose reach follows from its "
                    "powers (RadioParams): name one (--link-model logistic) or drop the range"
                )
            return topology.sinr_links(positions, self.radio, self.seed)
        reach = self.radio_range if self.radio_range is not None else 1.5 * self.spacing
        model = "disc" if self.lossless or self.link_model == "sinr" else self.link_model
        return topology.links_from_positions(
            positions,
            model,
            reach,
            min_prob=self.min_link_prob,
            asymmetry=0.0 if self.lossless else self.asymmetry,
            seed=self.seed,
        )


def mote_id(index: int) -> int:
    """The mote id (TOS_LOCAL_ADDRESS) of node ``index``: the same, except that no mote
    is 126, TinyOS 1.x's UART address, so nodes 126.. are motes 127.. (emu/csrc/moteid.h).
    Results, observations and routing parents carry mote ids."""
    return int(lib.emu_mote_id(index))


def node_index(mote: int) -> int:
    """The node index of mote id ``mote`` (EMU_MAX_NODES for 126 and the broadcast id)."""
    return int(lib.emu_node_index(mote))


def attr_id(name: str) -> int:
    """Catalog id of attribute ``name`` (the firmware's, via C); ConfigError if unknown."""
    attr = int(lib.emu_attr_id(name.lower().encode()))
    if attr == UNKNOWN_ATTR:
        raise ConfigError(f"unknown attribute {name!r}")
    return attr


def platform_profile(name: str) -> dict[str, Any]:
    """The C platform profile (bit rate, currents in amperes, supply volts)."""
    if name not in PLATFORMS:
        raise ConfigError(f"unknown platform {name!r}; choose one of {', '.join(PLATFORMS)}")
    p = lib.emu_platform_get(PLATFORMS[name])
    keys = ("cpu_hz", "bit_rate", "overhead_bytes", "supply_v", "sleep_a", "cpu_a")
    profile: dict[str, Any] = {k: getattr(p, k) for k in keys}
    profile.update(listen_a=p.listen_a, tx_a=p.tx_a, name=ffi.string(p.name).decode())
    return profile


def airtime_us(platform: str, tos_msg_len: int) -> int:
    """Air time of a TOS_Msg of ``tos_msg_len`` bytes (header + data) on ``platform``."""
    return int(lib.emu_platform_airtime_us(lib.emu_platform_get(PLATFORMS[platform]), tos_msg_len))


def memory_profile() -> str:
    """``"host"`` or ``"avr"``: the limits the loaded core was compiled with (emu/build_ffi.py)."""
    return str(ffi.string(lib.emu_memory_profile()).decode())


class Routing(NamedTuple):
    """The collection tree as the nodes' firmware holds it, one entry per node."""

    parent: np.ndarray  # uint16; NO_PARENT without a route, UART_ADDR at the root
    depth: np.ndarray  # uint8; NO_DEPTH without a route

    def in_cycles(self) -> set[int]:
        """The nodes (by index) whose chain of parents comes back to itself instead of
        ending at the root or at a node without a route."""
        up = [node_index(int(mote)) for mote in self.parent]  # EMU_MAX_NODES: no parent
        done = [False] * len(up)
        looping: set[int] = set()
        for start in range(len(up)):
            walk: list[int] = []
            node = start
            while node < len(up) and not done[node] and node not in walk:
                walk.append(node)
                node = up[node]
            if node in walk:
                looping.update(walk[walk.index(node) :])
            for visited in walk:
                done[visited] = True
        return looping


@dataclass
class LoopWatch:
    """How long nodes stay in routing cycles, from trees read one after another
    (:meth:`Routing.in_cycles`): a node in a cycle at two reads in a row counts as in it
    all along."""

    longest_ms: float = 0.0  # the longest a node stayed in one
    node_ms: float = 0.0  # nodes in cycles x the time between reads, summed
    nodes: set[int] = field(default_factory=set)  # every node seen in one
    _since: dict[int, float] = field(default_factory=dict)

    def see(self, routing: Routing, now_ms: float, step_ms: float) -> None:
        """The tree read at ``now_ms``, ``step_ms`` after the last read."""
        looping = routing.in_cycles()
        self.nodes |= looping
        self.node_ms += step_ms * len(looping)
        for node in set(self._since) - looping:
            self._since.pop(node)
        for node in looping:
            self._since.setdefault(node, now_ms)
            self.longest_ms = max(self.longest_ms, now_ms - self._since[node])


class Network:
    """N motes running the firmware core in virtual time. Thread-safe: one lock guards C."""

    def __init__(self, config: NetworkConfig) -> None:
        if config.platform not in PLATFORMS:
            raise ConfigError(f"unknown platform {config.platform!r}")
        self.config = config
        self.positions = config.positions()
        self.n = len(self.positions)
        #: Nodes no mote has (a positions file's skipped ids): dead from boot, no links.
        self.absent = config.absent_nodes()
        self.links = config.links(self.positions)
        self._lock = threading.RLock()
        self._keepalive: list[object] = []
        self._uart_buf = ffi.new("uint8_t[]", _UART_CHUNK)
        self._net = self._create()
        self._install_links()
        self._install_sensors()
        lib.emu_net_set_link_decay(self._net, config.link_decay_per_hour)
        lib.emu_net_boot(self._net)
        for node in self.absent:
            self.kill(int(node))

    @property
    def present(self) -> int:
        """How many nodes the network has, absent ones not counted."""
        return self.n - len(self.absent)

    def _create(self) -> Any:
        c = self.config
        cfg = ffi.new("emu_config *")
        cfg.n_nodes = self.n
        cfg.platform = PLATFORMS[c.platform]
        cfg.seed = c.seed & 0xFFFFFFFFFFFFFFFF
        cfg.lossless = int(c.lossless)
        cfg.battery_j = c.battery_j
        cfg.tx_a = c.tx_current_a
        cfg.uart_capacity = c.uart_capacity
        cfg.max_faults = c.max_faults
        if not 0.0 <= c.send_gap_ms <= 3_600_000.0:
            raise ConfigError(f"send_gap_ms must be within 0..3,600,000, not {c.send_gap_ms}")
        cfg.send_gap_us = round(c.send_gap_ms * 1000.0)
        net = lib.emu_net_new(cfg)
        if net == ffi.NULL:
            raise ConfigError(f"emulator rejected the configuration ({self.n} nodes)")
        return ffi.gc(net, lib.emu_net_free)

    def _install_links(self) -> None:
        lk = self.links
        ok = lib.emu_net_set_links(
            self._net,
            ffi.from_buffer("uint32_t[]", lk.row),
            ffi.from_buffer("uint32_t[]", lk.dst),
            ffi.from_buffer("float[]", lk.prob),
        )
        if ok != 0:
            raise ConfigError("invalid link table")
        if lk.rx_dbm is not None and lk.noise_dbm is not None and not self.config.lossless:
            ok = lib.emu_net_set_link_powers(
                self._net,
                ffi.from_buffer("float[]", lk.rx_dbm),
                ffi.from_buffer("float[]", lk.noise_dbm),
                self.config.radio.lock_db,
                self.config.radio.cca_db,
            )
            if ok != 0:
                raise ConfigError("invalid link powers")

    @property
    def sinr(self) -> bool:
        """True if the medium decides receptions by SINR (link powers installed)."""
        return self.links.rx_dbm is not None and not self.config.lossless

    def _install_sensors(self) -> None:
        sources = {**default_sources(), **dict(self.config.sensors)}
        for name, source in sources.items():
            self.set_sensor(name, source)

    # -- configuration while running -------------------------------------------------
    def set_sensor(self, attr: str, source: Source, nodes: range | None = None) -> None:
        """Make ``nodes`` (default: all) read ``attr`` from ``source``."""
        aid = attr_id(attr)
        span = nodes if nodes is not None else range(self.n)
        if span.step != 1 or not 0 <= span.start <= span.stop <= self.n:
            raise ConfigError(f"node range {span} outside 0..{self.n}")
        spec = ffi.new("emu_source_spec *")
        keep = source.fill(spec)
        with self._lock:
            sid = lib.emu_net_add_source(self._net, spec)
            if sid < 0:
                raise ConfigError(f"emulator rejected source {source!r} for {attr}")
            if keep is not None:
                self._keepalive.append(keep)
            lib.emu_net_assign_source(self._net, aid, sid, span.start, span.stop)

    def set_link(self, src: int, dst: int, prob: float) -> None:
        """Change an existing link's reception probability (degradation, repair).

        In the SINR model the link's received power is set to what gives a typical frame
        that probability on a quiet channel (0: no power at all), so it also interferes
        accordingly."""
        with self._lock:
            if not self.sinr:
                ok = lib.emu_net_set_link_prob(self._net, src, dst, prob)
            elif not 0.0 <= prob <= 1.0 or not 0 <= dst < self.n:
                ok = -1
            else:
                assert self.links.noise_dbm is not None
                snr = float(reception.snr_for_prr(min(prob, _MAX_SET_PROB)))
                dbm = float(self.links.noise_dbm[dst]) + snr
                ok = lib.emu_net_set_link_power(self._net, src, dst, dbm, prob)
            if ok != 0:
                raise ConfigError(f"no link {src}->{dst} (or bad probability {prob})")

    def kill(self, node: int, at_ms: float | None = None) -> None:
        self._fault(node, at_ms, alive=False)

    def revive(self, node: int, at_ms: float | None = None) -> None:
        """Reboot a dead node (fresh firmware state). A node with a flat battery stays dead."""
        self._fault(node, at_ms, alive=True)

    def _fault(self, node: int, at_ms: float | None, alive: bool) -> None:
        if not 0 <= node < self.n:
            raise ConfigError(f"no node {node}")
        with self._lock:
            at_us = self.now_us if at_ms is None else round(at_ms * 1000)
            if lib.emu_net_schedule_fault(self._net, node, at_us, int(alive)) != 0:
                raise ConfigError("too many pending faults")
            if at_ms is None:
                lib.emu_net_run_until(self._net, self.now_us)

    # -- time -------------------------------------------------------------------------
    @property
    def now_us(self) -> int:
        return int(lib.emu_net_now_us(self._net))

    @property
    def now_ms(self) -> float:
        return self.now_us / 1000.0

    @property
    def events(self) -> int:
        return int(lib.emu_net_events(self._net))

    @property
    def alarm_events(self) -> int:
        """Of :attr:`events`, the firmware's alarms (the rest: radio timers, faults)."""
        return int(lib.emu_net_alarm_events(self._net))

    def run_until(self, t_ms: float) -> None:
        with self._lock:
            lib.emu_net_run_until(self._net, round(t_ms * 1000))

    def run_for(self, ms: float) -> None:
        with self._lock:
            lib.emu_net_run_until(self._net, self.now_us + round(ms * 1000))

    # -- root UART ----------------------------------------------------------------------
    def uart_write(self, data: bytes) -> None:
        """Bytes into the root's UART (already framed, as a PC would send them)."""
        with self._lock:
            for i in range(0, len(data), 0xFFFF):
                chunk = data[i : i + 0xFFFF]
                lib.emu_net_uart_write(self._net, chunk, len(chunk))

    def uart_read(self) -> bytes:
        """Everything the root sent on its UART since the last read."""
        out = bytearray()
        with self._lock:
            while n := lib.emu_net_uart_read(self._net, self._uart_buf, _UART_CHUNK):
                out += ffi.buffer(self._uart_buf, n)
        return bytes(out)

    @property
    def uart_overflow(self) -> int:
        return int(lib.emu_net_uart_overflow(self._net))

    # -- observation (live numpy views of C memory) -------------------------------------
    def _view(self, ptr: Any, dtype: type) -> np.ndarray:
        size = np.dtype(dtype).itemsize * self.n
        view = np.frombuffer(ffi.buffer(ptr, size), dtype=dtype)
        view.flags.writeable = False
        return view

    def energy(self) -> dict[str, np.ndarray]:
        """Joules per node by phase (sleep, cpu, listen, transmit, sensing) and ``total``."""
        with self._lock:
            lib.emu_net_settle_energy(self._net)
            joules = {ph: lib.emu_net_joules(self._net, v) for ph, v in PHASES.items()}
            out = {ph: self._view(ptr, np.float64) for ph, ptr in joules.items()}
        out["total"] = sum(out.values())  # type: ignore[assignment]
        return out

    def phase_times_us(self) -> dict[str, np.ndarray]:
        """Microseconds per node spent in each phase (sensing: summed sample times)."""
        with self._lock:
            lib.emu_net_settle_energy(self._net)
            times = {ph: lib.emu_net_phase_us(self._net, v) for ph, v in PHASES.items()}
            return {ph: self._view(ptr, np.uint64) for ph, ptr in times.items()}

    def counters(self) -> dict[str, np.ndarray]:
        ptrs = {name: lib.emu_net_counters(self._net, v) for name, v in COUNTERS.items()}
        return {name: self._view(ptr, np.uint32) for name, ptr in ptrs.items()}

    def mote_id(self, index: int) -> int:
        """The mote id of node ``index`` (:func:`mote_id`)."""
        if not 0 <= index < self.n:
            raise IndexError(f"no node {index} in a network of {self.n}")
        return mote_id(index)

    def node_index(self, mote: int) -> int:
        """The index of the node with mote id ``mote``; ValueError if no node has it."""
        index = node_index(mote)
        if index >= self.n:
            raise ValueError(f"no node has mote id {mote}")
        return index

    def routing(self) -> Routing:
        """Every node's parent (a mote id) and depth now, by node index (a snapshot)."""
        parent = np.empty(self.n, dtype=np.uint16)
        depth = np.empty(self.n, dtype=np.uint8)
        with self._lock:
            lib.emu_net_routing(
                self._net,
                ffi.from_buffer("uint16_t[]", parent),
                ffi.from_buffer("uint8_t[]", depth),
            )
        return Routing(parent, depth)

    def logical_times_ms(self) -> np.ndarray:
        """Every node's logical clock now (ms, by node index): the time it cuts epochs by."""
        with self._lock:
            return np.array(
                [lib.mote_logical_time(lib.emu_net_mote(self._net, i)) for i in range(self.n)],
                dtype=np.uint32,
            )

    def mote_stats(self, node: int) -> dict[str, Any]:
        """The firmware's own counters of one node (firmware/core/mote_stats.h): results
        sent and forwarded, queue drops, commands executed, samples per attribute..."""
        stats = ffi.new("mote_stats *")
        with self._lock:
            lib.mote_get_stats(ffi.cast("mote_state *", lib.emu_net_mote(self._net, node)), stats)
        return {
            name: list(getattr(stats, name)) if name == "samples" else getattr(stats, name)
            for name, _ in ffi.typeof("mote_stats").fields
        }

    # -- ground truth (firmware hal.observe reports) -----------------------------------
    def record_observations(self, on: bool = True) -> None:
        """Keep every node's observe() reports (values read per query and epoch, query
        status changes) until :meth:`take_observations`; off by default."""
        with self._lock:
            lib.emu_net_record_observations(self._net, int(on))

    def take_observations(self) -> np.ndarray:
        """The reports kept since the last call, oldest first, as a structured array
        (``OBSERVATION_DTYPE``); the emulator's buffer is emptied."""
        with self._lock:
            lost = int(lib.emu_net_observations_lost(self._net))
            if lost:
                raise MemoryError(f"the emulator lost {lost} observations (out of memory)")
            count = int(lib.emu_net_observation_count(self._net))
            if count == 0:
                return np.empty(0, dtype=OBSERVATION_DTYPE)
            raw = ffi.buffer(
                lib.emu_net_observations(self._net), count * OBSERVATION_DTYPE.itemsize
            )
            out = np.frombuffer(raw, dtype=OBSERVATION_DTYPE).copy()
            lib.emu_net_clear_observations(self._net)
        return out

    @property
    def alive(self) -> np.ndarray:
        return self._view(lib.emu_net_alive(self._net), np.uint8).astype(bool)

    def close(self) -> None:
        with self._lock:
            if self._net is not None:
                ffi.release(self._net)
                self._net = None

    def __enter__(self) -> Network:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
