"""End to end in virtual time: `mote emulate --query SQL --epochs K --out FILE`, rows per
second of wall time.

Issue 14: `mote emulate --nodes 1000 --query "SELECT nodeid, light, temp FROM sensors
SAMPLE PERIOD 1s" --epochs 600 --out FILE` sustains >= 100,000 rows/s of wall time. The
whole command is timed in a subprocess, as a user runs it: the interpreter's start and
imports, the routing warm-up (--query-after), the emulator, the gateway's session and
assembler, the truth (computed whether or not --truth asks for it) and the JSON sink. Rows
are the lines of the --out file. Each radio asked for (--radios: lossless, i.e.
--lossless, logistic, and sinr, the default radio) runs --repeat times, interleaved.

By default the command runs the motebase this interpreter imports (`--trees installed`).
--trees A,B runs the same commands on several checkouts (PYTHONPATH=tree, each with its
own built emulator), interleaved, and reports each tree's rates and its speed over the
first tree's; every run's --out file is hashed, and the report says whether the trees
wrote identical bytes (one seed, so they must). --profile adds one run of the first
radio on each tree in-process under cProfile, broken down by stage (cProfile slows the
Python stages more than the emulator's C: the shares are indicative).

    python bench/emulate_e2e.py              # 1,000 nodes, 600 epochs, 3 runs a radio
    python bench/emulate_e2e.py --quick --out /tmp/e2e.json
    python bench/emulate_e2e.py --trees /tmp/before,. --radios lossless --profile
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import platform
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "emulate_e2e.json"
SQL = "SELECT nodeid, light, temp FROM sensors SAMPLE PERIOD 1s"
MOTE = "import sys; from motebase.gateway.cli.main import main; sys.argv[0] = 'mote'; main()"
RADIOS = {
    "lossless": ["--lossless"],
    "logistic": ["--link-model", "logistic"],
    "sinr": ["--link-model", "sinr"],
}
#: stage -> (file name ending, function name, "tt" own time or "ct" with callees)
STAGES = {
    "emulator (C)": ("", "emu_net_run_until", "tt"),
    "session: decode, assemble": ("gateway/session.py", "_dispatch", "ct"),
    "truth": ("emu/experiment.py", "_settle_truth", "ct"),
    "JSON sink": ("gateway/sinks.py", "write", "ct"),
}


def emulate_args(nodes: int, epochs: int, radio: str, out: Path) -> list[str]:
    return [
        "emulate",
        *("--nodes", str(nodes), *RADIOS[radio], "--query", SQL),
        *("--epochs", str(epochs), "--out", str(out)),
    ]


#: The --trees name of the motebase this interpreter imports: no PYTHONPATH of our own.
INSTALLED = "installed"


def tree_env(tree: str) -> dict[str, str]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    if tree != INSTALLED:
        env["PYTHONPATH"] = tree
    return env


def tree_cwd(tree: str, scratch: Path) -> Path:
    """Where a tree's commands run. `python -c` puts its working directory first on
    sys.path, so the installed package runs from scratch: in a checkout without an
    in-place build (CI's clean clone) its uncompiled package would shadow the installed
    one."""
    return scratch if tree == INSTALLED else Path(tree)


def run_once(tree: str, args: list[str], out: Path) -> dict[str, Any]:
    """One timed command: wall and CPU seconds, peak memory, rows written, the file's hash."""
    out.unlink(missing_ok=True)
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", MOTE, *args],
        env=tree_env(tree),
        cwd=tree_cwd(tree, out.parent),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(child.pid, 0)  # this child's own resources
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise subprocess.CalledProcessError(child.returncode, child.args)
    data = out.read_bytes()
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": round(usage.ru_maxrss / 1024),
        "rows": data.count(b"\n"),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def profile_child(args: list[str]) -> None:
    """In the child (PYTHONPATH=tree): the command under cProfile, its stages as JSON."""
    from motebase.gateway.cli.main import main as mote

    sys.argv = ["mote", *args]
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        mote()
    except SystemExit as done:
        if done.code not in (0, None):
            raise
    finally:
        profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = sum(tt for _, _, tt, _, _ in stats.values())
    stages: dict[str, float] = {}
    for stage, (suffix, name, kind) in STAGES.items():
        stages[stage] = sum(
            (tt if kind == "tt" else ct)
            for (file, _, func), (_, _, tt, ct, _) in stats.items()
            if file.endswith(suffix) and (func == name or (name in func and not suffix))
        )
    stages["other"] = total - sum(stages.values())
    print(json.dumps({"total_s": total, "stages_s": stages}))


def profile(tree: str, args: list[str], scratch: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--profile-child", json.dumps(args)],
        env=tree_env(tree),
        cwd=tree_cwd(tree, scratch),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    walls = [r["wall_s"] for r in runs]
    rows = runs[0]["rows"]
    return {
        "rows": rows,
        "wall_s": walls,
        "cpu_s": [r["cpu_s"] for r in runs],
        "best_rows_per_s": round(rows / min(walls)),
        "median_rows_per_s": round(rows / statistics.median(walls)),
        "median_rows_per_cpu_s": round(rows / statistics.median(r["cpu_s"] for r in runs)),
        "peak_rss_mb": [r["peak_rss_mb"] for r in runs],
        "sha256": sorted({r["sha256"] for r in runs}),
    }


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=600)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs of each")
    parser.add_argument("--radios", default="lossless,logistic", help="comma-separated")
    parser.add_argument(
        "--trees", default=INSTALLED, help=f"checkouts, comma-separated ({INSTALLED}: no checkout)"
    )
    parser.add_argument("--profile", action="store_true", help="a cProfile run per tree")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for the smoke test")
    parser.add_argument("--out", type=Path, default=None, help="JSON output path")
    parser.add_argument("--profile-child", help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> None:
    args = parse()
    if args.profile_child is not None:
        profile_child(json.loads(args.profile_child))
        return
    if args.quick:
        args.nodes, args.epochs, args.repeat = 16, 4, 1
    trees = [t if t == INSTALLED else str(Path(t).resolve()) for t in args.trees.split(",")]
    radios = args.radios.split(",")
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {
        radio: {str(t): [] for t in trees} for radio in radios
    }
    profiles: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.jsonl"
        for _ in range(args.repeat):  # interleaved: a busy moment slows every tree alike
            for radio in radios:
                for tree in trees:
                    command = emulate_args(args.nodes, args.epochs, radio, out)
                    runs[radio][str(tree)].append(run_once(tree, command, out))
        if args.profile:
            for tree in trees:
                command = emulate_args(args.nodes, args.epochs, radios[0], out)
                profiles[str(tree)] = profile(tree, command, Path(tmp))
    results: dict[str, Any] = {}
    for radio in radios:
        by_tree = {tree: summary(r) for tree, r in runs[radio].items()}
        first = by_tree[str(trees[0])]
        for s in by_tree.values():
            s["speed_over_first_best"] = round(min(first["wall_s"]) / min(s["wall_s"]), 3)
            s["speed_over_first_median"] = round(
                statistics.median(first["wall_s"]) / statistics.median(s["wall_s"]), 3
            )
        hashes = {h for s in by_tree.values() for h in s["sha256"]}
        results[radio] = {"trees": by_tree, "identical_rows": len(hashes) == 1}
    report = {
        "command": ["mote", *emulate_args(args.nodes, args.epochs, radios[0], Path("FILE"))],
        "nodes": args.nodes,
        "epochs": args.epochs,
        "repeat": args.repeat,
        "quick": args.quick,
        "target_rows_per_s": 100_000,
        "radios": results,
        "profiles": profiles,
        "load_average": os.getloadavg(),
        "machine": {"cpu_count": os.cpu_count(), "python": platform.python_version()},
    }
    out_path = args.out if args.out is not None else (None if args.quick else RESULTS)
    if out_path is not None:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(json.dumps(report, indent=2) + "\n")
    print_table(report)


def print_table(report: dict[str, Any]) -> None:
    print(f"{report['nodes']} nodes, {report['epochs']} epochs, {report['repeat']} runs each")
    print(
        "| radio | tree | rows | wall s, best / median | rows/s, best / median | rows per CPU s "
        "| speed over first, best / median | identical rows |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for radio, result in report["radios"].items():
        for tree, s in result["trees"].items():
            print(
                f"| {radio} | {tree} | {s['rows']:,} "
                f"| {min(s['wall_s']):.2f} / {statistics.median(s['wall_s']):.2f} "
                f"| {s['best_rows_per_s']:,} / {s['median_rows_per_s']:,} "
                f"| {s['median_rows_per_cpu_s']:,} "
                f"| x{s['speed_over_first_best']} / x{s['speed_over_first_median']} "
                f"| {result['identical_rows']} |"
            )
    for tree, prof in report["profiles"].items():
        print(f"\nprofile ({tree}, cProfile, {prof['total_s']:.1f} s):")
        print("| stage | s | share |\n|---|---|---|")
        for stage, seconds in prof["stages_s"].items():
            print(f"| {stage} | {seconds:.2f} | {seconds / prof['total_s']:.0%} |")


if __name__ == "__main__":
    main()
