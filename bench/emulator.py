"""Emulator throughput benchmark: node-epochs per wall second, receptions per second, RSS.

Cases (mica2 grid, 1 s epochs, the default radio unless --link-model, one core):
  max_1000       SELECT MAX(light): in-network aggregation       target >= 2,000,000 node-epochs/s
  select_1000    SELECT nodeid, light, temp: every tuple forwarded target >=   250,000 node-epochs/s
  max_10000x3600 10,000 nodes x 3,600 epochs of MAX               target < 60 s wall, < 1 GB RSS
  max_100        100 nodes x 3,600 epochs of MAX: against it, CPU per node-epoch at 10,000
                 nodes (cpu_growth_100_to_10000)                 target <= 1.5

Each case runs in its own process (numpy's BLAS held to one thread) so its peak RSS is its
own. As in a deployment, the routing tree forms first (ROUTING_WARMUP_MS), then the query
is injected as framed AM 101 bytes into the root's UART, one part a second as the gateway
sends them. The query floods one tree level per epoch, so timing starts once the number of
nodes sampling per epoch stops growing (lossy links leave a few nodes without the query),
after at most ``max_warmup_epochs``. ``--quick`` runs tiny versions (for the test that
keeps this script from rotting) and writes only where ``--out`` says.

    python bench/emulator.py            # full run, writes bench/results/emulator.json
    python bench/emulator.py --quick --out /tmp/emu.json
    python bench/emulator.py --link-model logistic --case max_1000   # one case, one model
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "emulator.json"
MAX_SQL = "SELECT MAX(light) SAMPLE PERIOD 1s"
SELECT_SQL = "SELECT nodeid, light, temp SAMPLE PERIOD 1s"
EPOCH_MS = 1000.0
ROUTING_WARMUP_MS = 30_000.0
QUERY_PART_GAP_MS = 1000.0
PLATEAU_EPOCHS = 5  # epochs without more sampling nodes that end the query warm-up
DRAIN_EPOCHS = 10  # the root's UART is read every this many epochs


@dataclass(frozen=True)
class Case:
    name: str
    sql: str
    nodes: int
    epochs: int
    max_warmup_epochs: int


FULL = {
    "max_1000": Case("max_1000", MAX_SQL, 1000, 600, 60),
    "select_1000": Case("select_1000", SELECT_SQL, 1000, 120, 60),
    "max_10000": Case("max_10000", MAX_SQL, 10000, 3600, 200),
    "max_100": Case("max_100", MAX_SQL, 100, 3600, 60),
}
QUICK = {
    "max_1000": Case("max_1000", MAX_SQL, 100, 20, 20),
    "select_1000": Case("select_1000", SELECT_SQL, 100, 10, 20),
    "max_10000": Case("max_10000", MAX_SQL, 400, 20, 30),
    "max_100": Case("max_100", MAX_SQL, 25, 20, 20),
}


def start_query(net, case: Case) -> tuple[int, int]:
    """Routing warm-up, query injection, query warm-up.

    Returns the query warm-up epochs and the number of nodes sampling per epoch after it.
    """
    from motebase.emu.queries import query_frames

    net.run_for(ROUTING_WARMUP_MS)
    for frame in query_frames(case.sql):
        net.uart_write(frame)
        net.run_for(QUERY_PART_GAP_MS)
    samples = net.counters()["samples"]
    most, since_growth = 0, 0
    for epoch in range(1, case.max_warmup_epochs + 1):
        before = samples.copy()
        net.run_for(EPOCH_MS)
        sampling = int((samples > before).sum())
        most, since_growth = (sampling, 0) if sampling > most else (most, since_growth + 1)
        # A plateau only once some node samples: on a deep tree the root's first epoch
        # waits for the query to cross every level, and epochs of no growth from zero
        # started the timing there (10,000 nodes: 0 sampling after 5 epochs).
        if most and since_growth >= PLATEAU_EPOCHS:
            return epoch, most
    return case.max_warmup_epochs, most


def run_case(case: Case, link_model: str) -> dict[str, float]:
    """Runs in the child process."""
    from motebase.emu.network import NO_DEPTH, Network, NetworkConfig

    t_setup = time.perf_counter()
    config = NetworkConfig(
        nodes=case.nodes, topology="grid", platform="mica2", seed=1, link_model=link_model
    )
    net = Network(config)
    warmup_epochs, sampling_nodes = start_query(net, case)
    net.uart_read()
    setup_s = time.perf_counter() - t_setup
    _, depth = net.routing()
    routed = depth != NO_DEPTH

    received0 = int(net.counters()["received"].sum())
    sent0 = int(net.counters()["sent"].sum())
    events0, alarms0 = net.events, net.alarm_events
    uart_bytes = 0
    chunks = []
    start, cpu_start = time.perf_counter(), time.process_time()
    for _ in range(0, case.epochs, DRAIN_EPOCHS):
        chunk_start = time.perf_counter()
        net.run_for(DRAIN_EPOCHS * EPOCH_MS)
        uart_bytes += len(net.uart_read())
        chunks.append(time.perf_counter() - chunk_start)
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    epochs = -(-case.epochs // DRAIN_EPOCHS) * DRAIN_EPOCHS
    counters = net.counters()
    node_epochs = case.nodes * epochs
    return {
        "nodes": case.nodes,
        "epochs": epochs,
        "wall_s": wall,
        "cpu_s": cpu,  # well below wall_s: the process was waiting for a core
        "setup_s": setup_s,
        "warmup_epochs": warmup_epochs,
        "sampling_nodes": sampling_nodes,
        "routed_nodes": int(routed.sum()),
        "max_depth": int(depth[routed].max()),
        "node_epochs_per_s": node_epochs / wall,
        # per DRAIN_EPOCHS slice: how much a shared machine's load moved the figure
        "slice_node_epochs_per_s_median": case.nodes * DRAIN_EPOCHS / statistics.median(chunks),
        "slice_node_epochs_per_s_best": case.nodes * DRAIN_EPOCHS / min(chunks),
        "receptions_per_s": (int(counters["received"].sum()) - received0) / wall,
        "transmissions_per_s": (int(counters["sent"].sum()) - sent0) / wall,
        "events_per_s": (net.events - events0) / wall,
        "events_per_node_epoch": (net.events - events0) / node_epochs,
        # the firmware's alarms among them; the rest are radio timers (issue 14)
        "alarm_events_per_node_epoch": (net.alarm_events - alarms0) / node_epochs,
        "root_uart_bytes": uart_bytes,
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }


def cpu_per_node_epoch(run: dict[str, float]) -> float:
    return run["cpu_s"] / (run["nodes"] * run["epochs"])


def in_child(name: str, quick: bool, link_model: str) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--child", "--case", name, "--link-model", link_model]
    cmd += ["--quick"] if quick else []
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def machine() -> dict[str, object]:
    return {
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "system": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "note": "single-threaded emulator; one core used",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for the smoke test")
    parser.add_argument("--out", type=Path, default=None, help="JSON output path")
    parser.add_argument("--case", choices=sorted(FULL), help="run only this case")
    parser.add_argument("--link-model", default=None, help="radio model (default: NetworkConfig's)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.link_model is None:
        from motebase.emu.topology import DEFAULT_LINK_MODEL

        args.link_model = DEFAULT_LINK_MODEL
    cases = QUICK if args.quick else FULL
    if args.child:
        print(json.dumps(run_case(cases[args.case], args.link_model)))
        return
    if args.case:
        print(json.dumps(in_child(args.case, args.quick, args.link_model), indent=2))
        return

    runs = {name: in_child(name, args.quick, args.link_model) for name in cases}
    big = runs["max_10000"]
    scale = (3600 / big["epochs"]) if args.quick else 1.0
    result = {
        "node_epochs_per_s_max_1000": runs["max_1000"]["node_epochs_per_s"],
        "node_epochs_per_s_select_1000": runs["select_1000"]["node_epochs_per_s"],
        "wall_s_max_10000x3600": big["wall_s"] * scale,
        "peak_rss_bytes_max_10000": big["peak_rss_bytes"],
        "receptions_per_s_max_1000": runs["max_1000"]["receptions_per_s"],
        "receptions_per_s_select_1000": runs["select_1000"]["receptions_per_s"],
        # issue 14: CPU time per node-epoch grows <= 1.5x from 100 to 10,000 nodes
        "cpu_growth_100_to_10000": cpu_per_node_epoch(big) / cpu_per_node_epoch(runs["max_100"]),
        "quick": args.quick,
        "link_model": args.link_model,
        "runs": runs,
        "machine": machine(),
    }
    text = json.dumps(result, indent=2)
    out = args.out if args.out is not None else (None if args.quick else RESULTS)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
