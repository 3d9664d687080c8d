"""The console's throttled status updates (gateway/console.py): the first message shows,
those within the interval after it do not, the first one past it shows."""

from __future__ import annotations

from motebase.gateway.console import throttled


def test_a_throttled_update_shows_at_most_once_per_interval() -> None:
    now = [0.0]
    shown: list[str] = []
    show = throttled(shown.append, every_s=0.1, clock=lambda: now[0])
    for t, message in [(0.0, "a"), (0.05, "b"), (0.099, "c"), (0.1, "d"), (0.15, "e"), (1.0, "f")]:
        now[0] = t
        show(message)
    assert shown == ["a", "d", "f"]
