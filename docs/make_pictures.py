"""Draw the pictures docs/pictures.md shows, from one small seeded emulation.

    python docs/make_pictures.py            # rewrites docs/img/{topology,...}.svg
    python docs/make_pictures.py --out DIR  # elsewhere (the tox env `plot` checks them)

A 25-node mica2 grid on `logistic` links (a lossy network whose links, each grid node's 8
nearest, draw a readable picture; the default radio, `sinr`, links 243 pairs), seed 1,
runs two queries for 20 epochs with the gateway in this process, in virtual time, as
`mote emulate --query ... --log DIR --truth T` does; then each picture is drawn from what
the run left: the emulated network (`mote emulate --plot`), the result log (`mote plot
topology`, `mote plot log`) and the accuracy report (`mote accuracy --plot`). Same seed,
same matplotlib: the same files, byte for byte. Needs the plot extra.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from motebase.emu.experiment import QueryRun, result_records, run_experiment, truth_records
from motebase.emu.network import Network, NetworkConfig
from motebase.emu.plotting import topology_view
from motebase.gateway.accuracy import compare
from motebase.gateway.plot.accuracy import draw_accuracy
from motebase.gateway.plot.log import draw_log
from motebase.gateway.plot.logdata import read_log
from motebase.gateway.plot.topology import draw_topology, topology_from_log
from motebase.gateway.sinks import file_sinks

IMG = Path(__file__).resolve().parent / "img"
NODES, SEED, EPOCHS = 25, 1, 20
TUPLE_SQL = "SELECT nodeid, parent, depth, light FROM sensors EPOCH DURATION 4s"
AGGREGATE_SQL = "SELECT AVG(light), MAX(light), COUNT(*) FROM sensors EPOCH DURATION 4s"
#: Every picture this script writes, in the order docs/pictures.md shows them.
PICTURES = (
    "topology.svg",
    "topology-log.svg",
    "log-tuple.svg",
    "log-aggregate.svg",
    "accuracy.svg",
)


def make_pictures(out: Path) -> list[Path]:
    """Run the emulation and write :data:`PICTURES` into ``out``; their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / name for name in PICTURES]
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "log"
        with Network(NetworkConfig(nodes=NODES, seed=SEED, link_model="logistic")) as net:
            experiment = run_experiment(
                net,
                [QueryRun(TUPLE_SQL), QueryRun(AGGREGATE_SQL)],
                epochs=EPOCHS,
                sinks=file_sinks(None, log),
            )
            draw_topology(topology_view(net), paths[0])
        queries = read_log(log)
    tuples, aggregates = queries[1], queries[2]
    draw_topology(topology_from_log(tuples), paths[1])
    draw_log(tuples, paths[2], "light")
    draw_log(aggregates, paths[3])
    draw_accuracy(compare(result_records(experiment), truth_records(experiment)), paths[4])
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=IMG, help="directory to write into")
    args = parser.parse_args(argv)
    for path in make_pictures(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
