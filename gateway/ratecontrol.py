"""Lowering a SELECT's sample rate when the network cannot carry it (issue 10, §3).

A network past its capacity does not lose tuples evenly. Its queues fill, tuples arrive
ever later, and the share of each epoch that arrives falls epoch after epoch (docs/radio.md:
the Intel lab layout at 4 s on `logistic` delivers about 7 tuples a second of the 13 it
samples, a median of 4 epochs late by the end of a run). Only a lower rate helps then.
TinyDB's own scheme, `qADAPTIVE_RATE`, slowed each mote by its own contention and was
compiled out (wire format §13.3): motes that each chose their own epoch would no longer
number epochs alike. Here the gateway chooses, for the whole network, with one RATE
message, which the root starts at an epoch boundary and the motes number on from
(firmware/core/querymsg.c).

The governor judges an epoch once ``settle_epochs`` newer epochs have arrived, which is
when a network within its capacity has delivered it. The newest epoch is the root's own,
which goes straight to the serial port, and the root is the first to take a RATE -- not
the newest of any node: a mote that missed the RATE samples on at the old rate, its epochs
ever further ahead (Intel lab on `sinr`, seed 5: two motes did, every later epoch was
judged before the others' tuples came, and the rate was halved six more times on a network
delivering all of them). Until the root's tuples come (a WHERE may keep them back), it is
the newest of any node. An epoch is judged against every node heard from
so far. When ``window`` judged epochs in a row bring less than ``low_yield`` of those
nodes, the epoch is doubled. Epochs sampled at the old rate are then not judged, and the
backlog they left has ``settle_epochs`` new epochs to drain. The rate is never raised
again by the governor; a user who wants it back sends `setrate`. Aggregates are not
governed: a record stands for a subtree, so the gateway cannot tell what is missing from
a row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from motebase.gateway.protocol.query import EPOCH_ONCE

#: epochDuration is an int16 of 10-ms units, 0x7FFF meaning ONCE (wire format §6.1): the
#: longest period a RATE can ask for is 0x7FFE units.
MAX_EPOCH_MS = (EPOCH_ONCE - 1) * 10
#: The basestation's mote id (firmware/core/mote.h MOTE_ROOT_ID).
ROOT_NODE = 0


@dataclass(frozen=True)
class RateDecision:
    """Lower the query's rate: ``epoch_ms`` from the epoch after ``after_epoch``."""

    after_epoch: int
    epoch_ms: int
    old_epoch_ms: int
    judged_yield: float  # the mean share of the nodes that the judged epochs brought
    nodes: int
    judged_epochs: int
    settle_epochs: int

    def describe(self, query_id: int) -> str:
        return (
            f"query {query_id}: {self.judged_epochs} epochs in a row brought "
            f"{self.judged_yield:.0%} of the {self.nodes} nodes' tuples within "
            f"{self.settle_epochs} epochs; the network cannot carry one every "
            f"{self.old_epoch_ms / 1000:g} s, so the sample period is now "
            f"{self.epoch_ms / 1000:g} s (RATE from epoch {self.after_epoch + 1})"
        )


@dataclass
class RateGovernor:
    """Watches which nodes deliver which epochs of one tuple query (see the module)."""

    epoch_ms: int
    low_yield: float = 0.8
    settle_epochs: int = 3
    window: int = 3
    max_epoch_ms: int = MAX_EPOCH_MS
    _latest: dict[int, int] = field(default_factory=dict)  # node -> its newest epoch
    _arrived: dict[int, set[int]] = field(default_factory=dict)
    _judged_through: int = 0
    _low: list[float] = field(default_factory=list)

    def observe(self, epoch: int, node: int) -> None:
        """A tuple of ``node`` for ``epoch`` arrived."""
        if epoch > self._latest.get(node, 0):
            self._latest[node] = epoch
        if epoch > self._judged_through:
            self._arrived.setdefault(epoch, set()).add(node)

    def decide(self) -> RateDecision | None:
        """Judge the epochs old enough; a decision to lower the rate, or None."""
        while self._judged_through + self.settle_epochs < self._newest():
            self._judged_through += 1
            share = len(self._arrived.pop(self._judged_through, ())) / max(1, len(self._latest))
            if share < self.low_yield:
                self._low.append(share)
            else:
                self._low.clear()
            if len(self._low) >= self.window and self.epoch_ms < self.max_epoch_ms:
                return self._lower()
        return None

    def _newest(self) -> int:
        root = self._latest.get(ROOT_NODE)
        return root if root is not None else max(self._latest.values(), default=0)

    def _lower(self) -> RateDecision:
        decision = RateDecision(
            after_epoch=self._newest(),
            epoch_ms=min(2 * self.epoch_ms, self.max_epoch_ms),
            old_epoch_ms=self.epoch_ms,
            judged_yield=sum(self._low) / len(self._low),
            nodes=len(self._latest),
            judged_epochs=len(self._low),
            settle_epochs=self.settle_epochs,
        )
        self.epoch_ms = decision.epoch_ms
        # The old rate's epochs (all heard so far) are not judged: their backlog drains
        # meanwhile.
        self._judged_through = self._newest()
        self._arrived.clear()
        self._low.clear()
        return decision
