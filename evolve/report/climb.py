"""The report's climb (evolve.archive.climb), the figure of DGM and HGM: every node's own dev pass rate
against the expansion that made it, the best-so-far by the run's final rule, the final agent's lineage
in gold and the held-out scores measured on it; under it, the lineage's steps with their edits."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from evolve.archive.climb import Climb, ClimbNode, LineageStep
from evolve.meta.diagnose import edit_name

WIDTH, HEIGHT = 760, 340
GOLD, BEST, HELDOUT, OTHER = "#b07d00", "#1f77b4", "#d62728", "#9a9a9a"


def step_name(step: LineageStep) -> str:
    """A lineage step's short name: `seed` for the root, else the edit its instructions asked for."""
    return "seed" if not step.instructions and step.expansion == 0 else edit_name(step.instructions)


def _frame(left: int, top: int, width: int, height: int) -> list[str]:
    return [
        (f'<svg class="chart" id="climb" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
         f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="the climb">'),
        (f'<text class="title" x="{left}" y="16">the climb: each node against the expansion that made it'
         "</text>"),
        f'<rect class="frame" x="{left}" y="{top}" width="{width}" height="{height}"/>',
        f'<text class="axis" x="{left + width / 2}" y="{HEIGHT - 8}" text-anchor="middle">expansion</text>',
        (f'<text class="axis" transform="translate(14,{top + height / 2}) rotate(-90)" '
         'text-anchor="middle">pass rate</text>'),
    ]  # fmt: skip


def _stairs(climb: Climb, sx: Callable[[float], float], sy: Callable[[float], float]) -> list[str]:
    """The best-so-far's points: it holds until the next step, then moves to that step's value."""
    points: list[str] = []
    held: float | None = None
    for step, score in zip(climb.steps, climb.best_score, strict=True):
        if score is None:
            continue
        if held is not None:
            points.append(f"{sx(step):.1f},{held:.1f}")
        held = sy(score)
        points.append(f"{sx(step):.1f},{held:.1f}")
    return points


def _node_shape(node: ClimbNode, x: float, y: float) -> str:
    if not node.valid:  # a node may be invalid yet scored (found out after its evaluations)
        return (f'<path d="M{x - 3:.1f},{y - 3:.1f}L{x + 3:.1f},{y + 3:.1f}M{x - 3:.1f},{y + 3:.1f}'
                f'L{x + 3:.1f},{y - 3:.1f}" stroke="#c00"/>')  # fmt: skip
    return (f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{5 if node.on_lineage else 3.5}" '
            f'fill="{GOLD if node.on_lineage else OTHER}" fill-opacity="0.85"/>')  # fmt: skip


def climb_chart(climb: Climb) -> str:
    """The figure as inline SVG (`<svg class="chart" id="climb">`)."""
    left, top, right, bottom = 48, 84, 16, 44
    width, height = WIDTH - left - right, HEIGHT - top - bottom
    last = max((n.expansion for n in climb.nodes), default=0) or 1

    def sx(expansion: float) -> float:
        return left + width * expansion / last

    def sy(rate: float) -> float:
        return top + height * (1 - rate)

    parts = _frame(left, top, width, height)
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<line class="grid" x1="{left}" x2="{left + width}" y1="{sy(tick):.1f}" '
                     f'y2="{sy(tick):.1f}"/><text class="tick" x="{left - 6}" y="{sy(tick) + 4:.1f}" '
                     f'text-anchor="end">{tick:g}</text>')  # fmt: skip
    for tick in range(0, last + 1, max(1, round(last / 10))):
        parts.append(f'<text class="tick" x="{sx(tick):.1f}" y="{top + height + 16}" '
                     f'text-anchor="middle">{tick}</text>')  # fmt: skip
    legend = [("each node's own dev pass rate (a red cross: invalid)", OTHER),
              ("the final agent's lineage", GOLD),
              ("best-so-far: the run's final rule on the nodes made by then", BEST),
              ("held-out pass rate, where measured (lineage)", HELDOUT)]  # fmt: skip
    for index, (label, colour) in enumerate(legend):
        row = 32 + 13 * index
        parts.append(
            f'<rect x="{left + 8}" y="{row - 7}" width="12" height="4" fill="{colour}"/>'
            f'<text class="legend" x="{left + 24}" y="{row - 1}">{escape(label)}</text>'
        )
    stairs = _stairs(climb, sx, sy)
    if stairs:
        parts.append(f'<polyline class="series best-so-far" points="{" ".join(stairs)}" stroke="{BEST}" '
                     'fill="none" stroke-width="2"/>')  # fmt: skip
    scored = {n.id: (n, n.score) for n in climb.nodes if n.score is not None}
    lineage = [f"{sx(scored[s.node][0].expansion):.1f},{sy(scored[s.node][1] or 0.0):.1f}"
               for s in climb.lineage if s.node in scored]  # fmt: skip
    if len(lineage) > 1:
        parts.append(f'<polyline class="series lineage" points="{" ".join(lineage)}" stroke="{GOLD}" '
                     'fill="none" stroke-dasharray="5 3"/>')  # fmt: skip
    for node, score in scored.values():
        tip = f"{node.id} (expansion {node.expansion}): {node.successes}/{node.successes + node.failures} dev"
        classes = "climb-node" + (" lineage" if node.on_lineage else "") + ("" if node.valid else " invalid")
        parts.append(f'<g class="{classes}" data-id="{escape(node.id)}"><title>{escape(tip)}</title>'
                     f"{_node_shape(node, sx(node.expansion), sy(score or 0.0))}</g>")  # fmt: skip
    for step in climb.lineage:
        if step.heldout is None or not step.heldout[1]:
            continue
        x, y = sx(step.expansion), sy(step.heldout[0] / step.heldout[1])
        diamond = f"M{x:.1f},{y - 6:.1f}L{x + 6:.1f},{y:.1f}L{x:.1f},{y + 6:.1f}L{x - 6:.1f},{y:.1f}Z"
        parts.append(f'<g class="climb-heldout" data-id="{escape(step.node)}"><title>{escape(step.node)}: '
                     f'held-out {step.heldout[0]}/{step.heldout[1]}</title><path d="{diamond}" '
                     f'fill="{HELDOUT}"/></g>')  # fmt: skip
    if not scored:
        parts.append(f'<text class="empty" x="{left + width / 2}" y="{top + height / 2}" '
                     'text-anchor="middle">no node has a counted dev result yet</text>')  # fmt: skip
    return "".join(parts) + "</svg>"


def climb_section(climb: Climb) -> str:
    """The figure and, under it, the lineage's steps (as `evolve status` prints them)."""
    rows = "".join(
        f"<tr><td>{escape(s.node)}</td><td>{s.expansion}</td><td>{s.successes}/{s.successes + s.failures}"
        f"</td><td>{'-' if s.heldout is None else f'{s.heldout[0]}/{s.heldout[1]}'}</td>"
        f"<td>{escape(s.edit)}</td><td>{escape(step_name(s))}</td></tr>" for s in climb.lineage)  # fmt: skip
    note = (f" The best-so-far is {escape(climb.rule)}, applied to the nodes made by each expansion."
            if climb.rule else "")  # fmt: skip
    unscored = sum(node.score is None for node in climb.nodes)
    if unscored:
        nodes = f"{unscored} node{'s' if unscored != 1 else ''}"
        note += f" {nodes} without a counted dev result (invalid, or not yet evaluated): not drawn."
    return ('<h2 id="climb-section">the climb</h2><p class="meta">As DGM and HGM draw it: every node\'s '
            "own dev pass rate against the expansion that made it (the seed at 0), on the results the run "
            "ended with."
            + note + f'</p><div class="charts">{climb_chart(climb)}</div><table id="climb-steps"><thead><tr>'
            "<th>node</th><th>expansion</th><th>dev</th><th>held-out</th><th>edit kind</th><th>edit</th></tr>"
            f"</thead><tbody>{rows}</tbody></table>")  # fmt: skip
