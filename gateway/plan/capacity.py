"""What a query asks of the radio channel each epoch, against what the epoch carries.

The rule of docs/accuracy.md ("the channel's capacity"), measured on the emulated Mica2:

* a node sends one record per aggregate expression and group in its transmit interval, a
  quarter to an eighth of the epoch (``epoch_intervals``), each a packet's worst time with
  its backoff (firmware/net/airtime.h: 50 ms at the CC1000's 19.2 kbit/s), with a quarter of
  slack: ``k x G x 50 ms x 5/4 <= P / n``. The nodes of one level send in the same
  interval, so the same bound holds for all of a level's records within radio range of
  each other: a dense network past it loses records (docs/radio.md: 20 siblings in range
  at 2 s, where the interval holds 8);
* every tuple crosses a child of the root, and a link to the root carries about 25 frames a
  second (40 ms a frame: 36 ms on the air and its backoff), each with one tuple, or as many
  as fit one bundle (firmware/result/bundle.h: 14 bytes and the values for the first, 5 and
  the values for each other, 42 in all): a tuple query delivers every tuple while the
  busiest root child's subtree holds at most ``P x tuples per frame / 40 ms`` nodes.
  Measured lossless, 100-node grid (66 nodes below one root child), ``SELECT nodeid,
  light`` (3 a frame): one tuple a frame, 67 % at 1 s; bundled, every tuple from 1 s.

Past these, results wait in queues, records miss their parent's interval and tuples are
refused: delivery falls, answers stay sound. ``mote explain --nodes N`` prints it.
"""

from __future__ import annotations

from dataclasses import dataclass

from motebase.gateway.plan.model import QueryPlan
from motebase.gateway.protocol.motebase import tuples_per_bundle
from motebase.gateway.protocol.result import field_size

RECORD_MS = 50
"""One result packet on the air, with its longest backoff (firmware/net/airtime.h)."""
INTERVAL_TARGET_MS = 1024
INTERVALS_MIN, INTERVALS_MAX = 4, 8
SHORT_EPOCH_MS = 1536


def epoch_intervals(epoch_ms: int) -> int:
    """Intervals an epoch is cut into: firmware/core/schedule.c ``sched_intervals``, which
    aims at about a second per level and keeps 4 to 8 of them (8 below 1.5 s)."""
    if epoch_ms < SHORT_EPOCH_MS:
        return INTERVALS_MAX
    n = (epoch_ms + INTERVAL_TARGET_MS // 2) // INTERVAL_TARGET_MS
    return max(INTERVALS_MIN, min(INTERVALS_MAX, n))


RECORD_SLACK = 5 / 4
TUPLE_MS_PER_NODE = 40
"""Airtime a frame of tuples takes on the busiest link, the one into the root."""


def tuples_per_frame(plan: QueryPlan) -> int:
    """Tuples of the query one frame carries toward the root: a bundle of them
    (gateway/protocol/motebase.py), its values at most their wire size."""
    return tuples_per_bundle(sum(field_size(f.wire_type) for f in plan.fields))


@dataclass(frozen=True)
class Capacity:
    """One query's load against one epoch's capacity; ``nodes`` None: network unknown."""

    epoch_ms: int
    records_per_group: int
    grouped: bool
    nodes: int | None
    tuples_per_frame: int = 1

    @property
    def max_groups(self) -> int:
        """Groups a node can send records for in its interval."""
        if self.records_per_group == 0:
            return 0
        interval = self.epoch_ms // epoch_intervals(self.epoch_ms)
        return int(interval // (self.records_per_group * RECORD_MS * RECORD_SLACK))

    @property
    def max_subtree(self) -> int:
        """Nodes below one child of the root whose tuples all arrive."""
        return self.epoch_ms * self.tuples_per_frame // TUPLE_MS_PER_NODE

    def describe(self) -> list[str]:
        period = f"{self.epoch_ms / 1000:g} s"
        if self.records_per_group:
            share = epoch_intervals(self.epoch_ms)
            lines = [
                f"a node sends {self.records_per_group} record(s) per group in its interval "
                f"({period} / {share}, {RECORD_MS} ms a record): it carries "
                f"{self.max_groups} group(s) per node"
            ]
            if self.max_groups < 1:
                lines.append("over capacity: records will miss their parent's interval")
                return lines
            lines.append(
                "the nodes of one level share that interval: it holds the records of "
                f"{self.max_groups} of them (a group each) within radio range of each other; "
                "a denser level loses records (docs/radio.md)"
            )
            if self.grouped:
                lines.append(
                    f"fits while no relay holds more than {self.max_groups} groups of its "
                    "subtree (a relay sends one record per group it heard)"
                )
            return lines
        lines = [
            f"every tuple crosses a child of the root ({TUPLE_MS_PER_NODE} ms a frame of "
            f"{self.tuples_per_frame} tuple(s)): at "
            f"{period} every tuple arrives while one root child carries at most "
            f"{self.max_subtree} nodes"
        ]
        if self.nodes is not None:
            if self.nodes - 1 <= self.max_subtree:
                lines.append(f"fits any tree of {self.nodes} nodes")
            else:
                lines.append(
                    f"with {self.nodes} nodes it fits only if the busiest root child carries "
                    f"at most {self.max_subtree} of {self.nodes - 1} (a grid with the root "
                    "in a corner puts a third to three quarters below one child)"
                )
        return lines


def capacity(plan: QueryPlan, nodes: int | None = None) -> Capacity | None:
    """The plan's channel load; None for a query without an epoch (ONCE)."""
    if plan.epoch_ms is None:
        return None
    return Capacity(
        epoch_ms=plan.epoch_ms,
        records_per_group=len(plan.aggregates),
        grouped=plan.group_by is not None,
        nodes=nodes,
        tuples_per_frame=tuples_per_frame(plan),
    )
