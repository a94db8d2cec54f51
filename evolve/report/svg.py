"""The page's figures as inline SVG: the clade tree, line charts and the task x node outcome grid."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from evolve.report.data import NodeView

_VIRIDIS = ((68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37))
UNEVALUATED = "#c8c8c8"
TREE_HEIGHT = 640
"""Pixels of the tree's box; the tree is fitted into it (the whole tree first), then zoomed and panned."""
GRID_NODES = 150
"""Columns of the outcome grid: the best lineage first, then nodes in tree order, up to this many."""


def colour(rate: float | None) -> str:
    """Viridis for a pass rate in [0, 1]; grey for no result."""
    if rate is None or math.isnan(rate):
        return UNEVALUATED
    at = min(max(rate, 0.0), 1.0) * (len(_VIRIDIS) - 1)
    low = min(int(at), len(_VIRIDIS) - 2)
    mix = at - low
    rgb = (round(a + (b - a) * mix) for a, b in zip(_VIRIDIS[low], _VIRIDIS[low + 1], strict=True))
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _rate(counts: tuple[int, int]) -> float | None:
    return counts[0] / sum(counts) if sum(counts) else None


def tree_svg(nodes: Sequence[NodeView], best: str | None) -> str:
    """Colour by own pass rate, size by counted results, the best lineage in gold, invalid nodes
    crossed in red, nodes with a forged verdict flagged (a dashed black outline). Each node is a
    `<g class="node" data-id=...>`; the page's script fits the whole tree in the box, zooms, pans, and
    shows the labels once they are legible (they never overlap: the spacing is made for the longest id)."""
    longest = max((len(n.id) for n in nodes), default=1)
    dx = max(48.0, 7.2 * longest + 10)
    dy, margin = 78.0, 30.0
    width = margin * 2 + dx * (max((n.x for n in nodes), default=0) + 1)
    height = margin * 2 + dy * (max((n.depth for n in nodes), default=0) + 1)
    at = {n.id: (margin + dx * (n.x + 0.5), margin + 10 + dy * n.depth) for n in nodes}
    parts = [
        (
            f'<svg id="tree" xmlns="http://www.w3.org/2000/svg" width="100%" height="{TREE_HEIGHT}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" preserveAspectRatio="xMidYMid meet" role="img" '
            f'aria-label="clade tree" data-best="{escape(best or "")}" data-nodes="{len(nodes)}">'
        )
    ]
    for node in nodes:
        if node.parent is not None and node.parent in at:
            (x0, y0), (x1, y1) = at[node.parent], at[node.id]
            best_edge = node.on_best_lineage
            parts.append(f'<line class="edge{" best" if best_edge else ""}" x1="{x0:.1f}" y1="{y0:.1f}" '
                         f'x2="{x1:.1f}" y2="{y1:.1f}"/>')  # fmt: skip
    most = max((sum(n.own) for n in nodes), default=0) or 1
    largest = min(20.0, dx / 2 - 1)  # neighbours never overlap
    for node in nodes:
        x, y = at[node.id]
        results = sum(node.own)
        radius = 4 + (largest - 4) * math.sqrt(results / most)  # area grows with the counted results
        rate = _rate(node.own)
        tip = (f"{node.id}: own {node.own[0]}/{results}, clade {node.clade[0]}/{sum(node.clade)}"
               + ("" if node.valid else f", invalid: {node.reason or 'no reason recorded'}")
               + (f", FLAGGED: {node.forged} forged verdict(s)" if node.forged else ""))  # fmt: skip
        classes = (
            "node"
            + ("" if node.valid else " invalid")
            + (" best" if node.id == best else "")
            + (" flagged" if node.forged else "")
        )
        parts.append(
            f'<g class="{classes}" data-id="{escape(node.id)}" tabindex="0"><title>{escape(tip)}</title>'
        )
        if node.id == best:
            parts.append(f'<circle class="ring" cx="{x:.1f}" cy="{y:.1f}" r="{radius + 5:.1f}"/>')
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius:.1f}" fill="{colour(rate)}"/>')
        if not node.valid:
            d = radius * 0.75
            parts.append(f'<path class="cross" d="M{x - d:.1f},{y - d:.1f}L{x + d:.1f},{y + d:.1f}'
                         f'M{x - d:.1f},{y + d:.1f}L{x + d:.1f},{y - d:.1f}"/>')  # fmt: skip
        parts.append(f'<text class="label" x="{x:.1f}" y="{y + radius + 13:.1f}">{escape(node.id)}</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class Line:
    label: str
    xs: Sequence[float]
    ys: Sequence[float | None]
    colour: str
    steps: bool = True


def _ticks(top: float, count: int = 5) -> list[float]:
    if top <= 0:
        return [0.0]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [step * i for i in range(int(top / step) + 1)]


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 or value == int(value) else f"{value:.3g}"


def line_chart(chart_id: str, title: str, lines: Sequence[Line], xlabel: str, ylabel: str,
               y_max: float | None = None, width: int = 520, height: int = 260) -> str:  # fmt: skip
    """A chart of cumulative or step lines; None values break a line."""
    bottom = 44
    top = 30 + 15 * len(lines)  # the legend sits between the title and the plot
    xs = [x for line in lines for x in line.xs]
    ys = [y for line in lines for y in line.ys if y is not None]
    x_top = max(xs, default=1.0) or 1.0
    y_top = y_max if y_max is not None else (max(ys, default=1.0) or 1.0) * 1.05
    y_ticks = _ticks(y_top * (1 / 1.05 if y_max is None else 1))
    left = 30 + 7 * max(len(_number(t)) for t in y_ticks)  # the widest tick label and the axis label fit
    right = 12 + 4 * len(_number(_ticks(x_top)[-1]))  # the last x tick label is centred on the frame's edge
    plot_w, plot_h = width - left - right, height - top - bottom

    def sx(x: float) -> float:
        return left + plot_w * x / x_top

    def sy(y: float) -> float:
        return top + plot_h * (1 - y / y_top)

    parts = [(f'<svg class="chart" id="{chart_id}" xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}">'),
             f'<text class="title" x="{left}" y="16">{escape(title)}</text>',
             f'<rect class="frame" x="{left}" y="{top}" width="{plot_w}" height="{plot_h}"/>']  # fmt: skip
    for tick in y_ticks:
        parts.append(
            f'<line class="grid" x1="{left}" x2="{left + plot_w}" y1="{sy(tick):.1f}" y2="{sy(tick):.1f}"/>'
            f'<text class="tick" x="{left - 6}" y="{sy(tick) + 4:.1f}" '
            f'text-anchor="end">{_number(tick)}</text>'
        )
    for tick in _ticks(x_top):
        parts.append(f'<text class="tick" x="{sx(tick):.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
                     f"{_number(tick)}</text>")  # fmt: skip
    parts.append(
        f'<text class="axis" x="{left + plot_w / 2}" y="{height - 8}" text-anchor="middle">'
        f"{escape(xlabel)}</text>"
        f'<text class="axis" transform="translate(14,{top + plot_h / 2}) rotate(-90)" '
        f'text-anchor="middle">{escape(ylabel)}</text>'
    )
    for index, line in enumerate(lines):
        segments: list[list[str]] = [[]]
        previous: float | None = None
        for x, y in zip(line.xs, line.ys, strict=True):
            if y is None:
                segments.append([])
                previous = None
                continue
            if line.steps and previous is not None:
                segments[-1].append(f"{sx(x):.1f},{sy(previous):.1f}")
            segments[-1].append(f"{sx(x):.1f},{sy(y):.1f}")
            previous = y
        for points in segments:
            if len(points) == 1:  # one point draws no line: a dot, so a one-result series shows
                cx, cy = points[0].split(",")
                parts.append(f'<circle class="point" cx="{cx}" cy="{cy}" r="3.5" fill="{line.colour}"/>')
            elif points:
                parts.append(f'<polyline class="series" points="{" ".join(points)}" stroke="{line.colour}"/>')
        ly = 36 + 15 * index
        parts.append(
            f'<rect x="{left + 8}" y="{ly - 8}" width="12" height="4" fill="{line.colour}"/>'
            f'<text class="legend" x="{left + 24}" y="{ly - 2}">{escape(line.label)}</text>'
        )
    if not xs:
        parts.append(
            f'<text class="empty" x="{left + plot_w / 2}" y="{top + plot_h / 2}" text-anchor="middle">'
            "nothing recorded yet</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _grid_columns(nodes: Sequence[NodeView]) -> list[NodeView]:
    by_id = {n.id: n for n in nodes}
    children: dict[str | None, list[str]] = {}
    for node in nodes:
        children.setdefault(node.parent if node.parent in by_id else None, []).append(node.id)
    order: list[str] = []
    stack = list(reversed(children.get(None, [])))
    while stack:  # tree order (preorder), so a lineage reads left to right
        current = stack.pop()
        order.append(current)
        stack.extend(reversed(children.get(current, [])))
    lineage = [n for n in order if by_id[n].on_best_lineage]
    rest = [n for n in order if not by_id[n].on_best_lineage]
    chosen = set((lineage + rest)[:GRID_NODES])
    return [by_id[n] for n in order if n in chosen]


def _cell_colour(outcomes: list[str]) -> str:
    counted = [o for o in outcomes if o != "infra"]
    if not counted:
        return "#eeeeee"
    passed = sum(o == "pass" for o in counted) / len(counted)
    return "#2e9e4f" if passed == 1 else "#d64541" if passed == 0 else "#e8b730"


def grid_svg(nodes: Sequence[NodeView], tasks: Sequence[str], heldout: Sequence[str]) -> str:
    """Task rows x node columns: green passed, red failed, amber mixed attempts, grey only infra;
    held-out rows shaded and labelled. Node ids are written vertically, so long ids stay readable."""
    columns = _grid_columns(nodes)
    cell, label_w = 16, min(12 + 7 * max((len(t) for t in tasks), default=4), 300)
    header = 12 + 7 * max((len(n.id) for n in columns), default=4)
    held = set(heldout)
    width, height = label_w + 70 + cell * len(columns) + 10, header + cell * len(tasks) + 10
    parts = [(f'<svg id="grid" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}">')]  # fmt: skip
    x0 = label_w + 70
    for col, node in enumerate(columns):
        x = x0 + col * cell + cell / 2 + 4
        parts.append(
            f'<text class="col{" best" if node.on_best_lineage else ""}" '
            f'transform="translate({x:.1f},{header - 6}) rotate(-90)">{escape(node.id)}</text>'
        )
    for row, task in enumerate(tasks):
        y = header + row * cell
        is_held = task in held
        if is_held:
            parts.append(f'<rect class="heldout-row" x="0" y="{y}" width="{width}" height="{cell}"/>')
        shown = task if len(task) <= 40 else task[:37] + "..."
        parts.append(
            f'<text class="row" x="{label_w - 4}" y="{y + 12}" text-anchor="end"><title>{escape(task)}'
            f"</title>{escape(shown)}</text>"
        )
        parts.append(f'<text class="split{" heldout" if is_held else ""}" x="{label_w + 4}" y="{y + 12}">'
                     f'{"held-out" if is_held else "dev"}</text>')  # fmt: skip
        for col, node in enumerate(columns):
            outcomes = node.outcomes.get(task)
            if outcomes:
                tip = f"{node.id} on {task}: {' '.join(outcomes)}"
                parts.append(
                    f'<rect class="cell" x="{x0 + col * cell}" y="{y + 1}" width="{cell - 2}" '
                    f'height="{cell - 2}" fill="{_cell_colour(outcomes)}"><title>{escape(tip)}</title></rect>'
                )
    parts.append("</svg>")
    return "".join(parts)
