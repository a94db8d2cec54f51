"""The report's section of the figures papers compare (evolve.archive.costcurves): the best-so-far against
expansions and against CPU-hours, the score distribution per generation, and the cost of each improvement."""

from __future__ import annotations

from html import escape

from evolve.archive.costcurves import CostCurves
from evolve.report.svg import Line, line_chart

WIDTH, HEIGHT = 520, 260


def costs_section(curves: CostCurves) -> str:
    """The section's HTML: two curves, the distribution per generation, the cost per improvement."""
    best = f"best-so-far (valid, ≥ {curves.min_results} results)"
    by_expansions = line_chart(
        "best-by-expansions",
        "best-so-far against expansions",
        [Line(best, [float(x) for x in curves.expansions], curves.best, "#1f77b4")],
        "children made",
        "own pass rate",
        y_max=1.0,
    )
    by_hours = line_chart(
        "best-by-cpu-hours",
        "best-so-far against CPU-hours",
        [Line(best, curves.cpu_hours, curves.best, "#2ca02c")],
        "CPU-hours spent",
        "own pass rate",
        y_max=1.0,
    )
    return (
        '<h2 id="costs">best-so-far and what it cost</h2><p class="meta">As papers of this field plot them: '
        "the best own pass rate so far against the children made and the CPU-hours spent, each generation's "
        "scores (a node's depth is its generation), and what the search spent for each new best.</p>"
        f'<div class="charts">{by_expansions}{by_hours}{generations_chart(curves)}'
        f"{improvements_chart(curves)}</div>{improvements_line(curves)}"
    )


def _frame(chart_id: str, title: str, xlabel: str, ylabel: str) -> tuple[list[str], int, int, int, int]:
    left, top, right, bottom = 48, 30, 12, 44
    width, height = WIDTH - left - right, HEIGHT - top - bottom
    parts = [
        (
            f'<svg class="chart" id="{chart_id}" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
            f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}">'
        ),
        f'<text class="title" x="{left}" y="16">{escape(title)}</text>',
        f'<rect class="frame" x="{left}" y="{top}" width="{width}" height="{height}"/>',
        (
            f'<text class="axis" x="{left + width / 2}" y="{HEIGHT - 8}" text-anchor="middle">'
            f"{escape(xlabel)}</text>"
        ),
        (
            f'<text class="axis" transform="translate(14,{top + height / 2}) rotate(-90)" '
            f'text-anchor="middle">{escape(ylabel)}</text>'
        ),
    ]
    return parts, left, top, width, height


def generations_chart(curves: CostCurves) -> str:
    """Each valid evaluated node's own pass rate as a dot over its generation, the median as a bar."""
    parts, left, top, width, height = _frame(
        "score-by-generation", "scores per generation", "generation (depth)", "own pass rate"
    )
    generations = sorted(curves.generations)
    slot = width / max(len(generations), 1)
    for tick in (0.0, 0.5, 1.0):
        y = top + height * (1 - tick)
        parts.append(f'<text class="tick" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:g}</text>')
    for index, generation in enumerate(generations):
        centre = left + slot * (index + 0.5)
        rates = sorted(curves.generations[generation])
        parts.append(
            f'<text class="tick" x="{centre:.1f}" y="{top + height + 16}" text-anchor="middle">'
            f"{generation}</text>"
        )
        for number, rate in enumerate(rates):
            jitter = (number % 7 - 3) * min(slot / 10, 4)
            parts.append(
                f'<circle class="score" cx="{centre + jitter:.1f}" cy="{top + height * (1 - rate):.1f}" '
                f'r="3" fill="#1f77b4" fill-opacity="0.6"><title>generation {generation}: {rate:.2f}</title>'
                "</circle>"
            )
        median = (
            rates[len(rates) // 2]
            if len(rates) % 2
            else (rates[len(rates) // 2 - 1] + rates[len(rates) // 2]) / 2
        )
        y = top + height * (1 - median)
        parts.append(
            f'<line class="median" x1="{centre - slot / 3:.1f}" x2="{centre + slot / 3:.1f}" y1="{y:.1f}" '
            f'y2="{y:.1f}" stroke="#d62728" stroke-width="2"/>'
        )
    if not generations:
        parts.append(f'<text x="{left + 10}" y="{top + 20}">no evaluated valid node yet</text>')
    return "".join(parts) + "</svg>"


def improvements_chart(curves: CostCurves) -> str:
    """One bar per improvement of the best-so-far: the CPU-hours spent since the previous best."""
    parts, left, top, width, height = _frame(
        "cost-per-improvement", "CPU-hours spent per improvement", "improvement (its node)", "CPU-hours"
    )
    spent = [improvement.spent_cpu_hours for improvement in curves.improvements]
    highest = max(spent, default=0.0) or 1.0
    parts.append(
        f'<text class="tick" x="{left - 6}" y="{top + 4}" text-anchor="end">{highest:.2g}</text>'
        f'<text class="tick" x="{left - 6}" y="{top + height + 4}" text-anchor="end">0</text>'
    )
    slot = width / max(len(spent), 1)
    for index, improvement in enumerate(curves.improvements):
        bar = height * improvement.spent_cpu_hours / highest
        x = left + slot * index + slot * 0.15
        parts.append(
            f'<rect class="bar" x="{x:.1f}" y="{top + height - bar:.1f}" width="{slot * 0.7:.1f}" '
            f'height="{bar:.1f}" fill="#ff7f0e"><title>node {escape(improvement.node)}: '
            f"{improvement.rate:.2f}, after {improvement.spent_expansions} children and "
            f"{improvement.spent_cpu_hours:.2f} CPU-hours</title></rect>"
            f'<text class="tick" x="{x + slot * 0.35:.1f}" y="{top + height + 16}" text-anchor="middle">'
            f"{escape(improvement.node)}</text>"
        )
    if not spent:
        parts.append(f'<text x="{left + 10}" y="{top + 20}">no node has beaten the first best yet</text>')
    return "".join(parts) + "</svg>"


def improvements_line(curves: CostCurves) -> str:
    """The cost per improvement in one line, under the charts."""
    found = curves.improvements
    if not found:
        return "<p class='meta' id='cost-per-improvement-line'>No improvement of the best-so-far yet.</p>"
    hours = sum(i.spent_cpu_hours for i in found) / len(found)
    children = sum(i.spent_expansions for i in found) / len(found)
    return (
        f"<p class='meta' id='cost-per-improvement-line'>{len(found)} improvement"
        f"{'s' if len(found) != 1 else ''} of the best-so-far; on average {hours:.2f} CPU-hours and "
        f"{children:.1f} children each.</p>"
    )
