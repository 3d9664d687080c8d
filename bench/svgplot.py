"""A plot frame written straight as SVG, so the bench scripts need no plotting library.

An :class:`Axes` maps data to pixels and draws the frame, ticks and axis labels; a script
adds its marks (``axes.out.append(...)``) between :meth:`Axes.begin` and :meth:`Axes.end`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

W, H, LEFT, BOTTOM, TOP, RIGHT = 720, 420, 60, 50, 20, 20


@dataclass
class Axes:
    x_max: float
    y_max: float = 1.0
    x_min: float = 0.0
    y_min: float = 0.0
    out: list[str] = field(default_factory=list)

    @property
    def width(self) -> float:
        return W - LEFT - RIGHT

    @property
    def height(self) -> float:
        return H - TOP - BOTTOM

    def x(self, v: float) -> float:
        return LEFT + self.width * (v - self.x_min) / (self.x_max - self.x_min)

    def y(self, v: float) -> float:
        return TOP + self.height * (1.0 - (v - self.y_min) / (self.y_max - self.y_min))

    def begin(self) -> Axes:
        self.out += [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
            f'font-family="sans-serif" font-size="12">',
            f'<rect width="{W}" height="{H}" fill="white"/>',
        ]
        return self

    def band(self, lo: float, hi: float, name: str, shade: str) -> None:
        """A shaded x range with its name at the top."""
        self.out.append(
            f'<rect x="{self.x(lo):.1f}" y="{TOP}" width="{self.x(hi) - self.x(lo):.1f}" '
            f'height="{self.height}" fill="{shade}"/>'
        )
        self.out.append(
            f'<text x="{(self.x(lo) + self.x(hi)) / 2:.1f}" y="{TOP + 14}" '
            f'text-anchor="middle" fill="#555">{name}</text>'
        )

    def polyline(self, points: Sequence[tuple[float, float]], colour: str, label: str) -> None:
        """A line with a dot at each point, named at its last point."""
        xy = " ".join(f"{self.x(a):.1f},{self.y(b):.1f}" for a, b in points)
        self.out.append(f'<polyline points="{xy}" fill="none" stroke="{colour}"/>')
        for a, b in points:
            self.out.append(
                f'<circle cx="{self.x(a):.1f}" cy="{self.y(b):.1f}" r="3" fill="{colour}"/>'
            )
        a, b = points[-1]
        self.out.append(
            f'<text x="{self.x(a) + 6:.1f}" y="{self.y(b) + 4:.1f}" fill="{colour}">{label}</text>'
        )

    def end(
        self,
        x_ticks: Sequence[float],
        y_ticks: Sequence[float],
        x_label: str,
        y_label: str,
    ) -> str:
        ph = self.height
        self.out.append(
            f'<rect x="{LEFT}" y="{TOP}" width="{self.width}" height="{ph}" fill="none" '
            'stroke="black"/>'
        )
        for v in x_ticks:
            self.out.append(
                f'<line x1="{self.x(v):.1f}" y1="{TOP + ph}" x2="{self.x(v):.1f}" '
                f'y2="{TOP + ph + 5}" stroke="black"/>'
            )
            self.out.append(
                f'<text x="{self.x(v):.1f}" y="{TOP + ph + 18}" text-anchor="middle">{v:g}</text>'
            )
        for v in y_ticks:
            self.out.append(
                f'<line x1="{LEFT - 5}" y1="{self.y(v):.1f}" x2="{LEFT}" y2="{self.y(v):.1f}" '
                'stroke="black"/>'
            )
            self.out.append(
                f'<text x="{LEFT - 8}" y="{self.y(v) + 4:.1f}" text-anchor="end">{v:g}</text>'
            )
        self.out.append(
            f'<text x="{LEFT + self.width / 2}" y="{H - 10}" text-anchor="middle">{x_label}</text>'
        )
        self.out.append(
            f'<text x="15" y="{TOP + ph / 2}" text-anchor="middle" '
            f'transform="rotate(-90 15 {TOP + ph / 2})">{y_label}</text>'
        )
        self.out.append("</svg>")
        return "\n".join(self.out) + "\n"


def save(path: Path, svg: str) -> None:
    """Write a finished plot, making its folder if need be."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(svg)
    print(f"wrote {path}")
