"""The run report as one self-contained HTML page: styles, script and figures inline, no network."""

from __future__ import annotations

import time
from html import escape

from evolve.report.climb import climb_section
from evolve.report.costs import costs_section
from evolve.report.data import ReportData
from evolve.report.script import SCRIPT
from evolve.report.svg import Line, grid_svg, line_chart, tree_svg

_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 24px 40px;color:#222;background:#fafafa}
h1{font-size:22px;margin:18px 0 4px}h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid #ddd}
.meta{color:#666}.cards{display:flex;flex-wrap:wrap;gap:16px}.card{background:#fff;border:1px solid #ddd;
border-radius:6px;padding:10px 14px;min-width:260px}.card h3{margin:0 0 6px;font-size:14px}
table.kv td{padding:1px 10px 1px 0;vertical-align:top}table.kv td:first-child{color:#666;white-space:nowrap}
.big{font-size:20px;font-weight:600}
.scroll{overflow:auto;background:#fff;border:1px solid #ddd;border-radius:6px}
#treebox{display:flex;gap:16px;align-items:flex-start}
#treeview{flex:1 1 60%;min-width:0;background:#fff;border:1px solid #ddd;border-radius:6px}
#tree{display:block;touch-action:none;cursor:grab}#tree text.label{display:none}
#tree.labels text.label{display:inline}
#tree .edge{vector-effect:non-scaling-stroke}#tree-controls{padding:4px}
#tree-controls button{margin-right:4px}
#node-table{border-collapse:collapse;font-size:13px}
#node-table th{cursor:pointer;text-align:left;border-bottom:1px solid #aaa;padding:2px 10px 2px 0}
#node-table td{padding:1px 10px 1px 0;font-family:monospace}
#node-table tr.best td{color:#8a6100;font-weight:600}#node-table tbody tr{cursor:pointer}
details.exchange{margin:4px 0}details.exchange pre{max-height:200px}.who{color:#666;font-size:12px}
#panel{flex:1 1 40%;min-width:320px;max-width:640px;background:#fff;border:1px solid #ddd;border-radius:6px;
padding:10px 14px}
#panel pre{max-height:360px;overflow:auto;background:#f6f8fa;padding:6px;font-size:12px;white-space:pre-wrap;
overflow-wrap:anywhere}
#panel pre.diff{white-space:pre}
#panel .add{color:#116329;background:#dafbe1}#panel .del{color:#82071e;background:#ffebe9}
#panel .hunk{color:#0550ae}
.node{cursor:pointer}.node circle{stroke:#333;stroke-width:1}
.node.selected circle{stroke:#0969da;stroke-width:3.5}
.node text{font:11px monospace;text-anchor:middle;fill:#333}
.ring{fill:none;stroke:#e0a800!important;stroke-width:3!important}
.node.invalid circle{stroke:#c00;stroke-dasharray:3 2}
.node.flagged circle{stroke:#000;stroke-width:3;stroke-dasharray:2 2}.cross{stroke:#c00;stroke-width:2.5}
.edge{stroke:#aaa;stroke-width:1.2}.edge.best{stroke:#e0a800;stroke-width:3.5}
.chart .frame{fill:#fff;stroke:#ccc}.chart .grid{stroke:#eee}.chart .series{fill:none;stroke-width:2}
.chart text{font-size:11px;fill:#444}.chart .title{font-size:13px;font-weight:600}
.charts{display:flex;flex-wrap:wrap;gap:12px}
#grid text{font:11px monospace;fill:#333}#grid .heldout-row{fill:#f3e8ff}#grid .split{fill:#888}
#grid .split.heldout{fill:#7b2cbf;font-weight:700}#grid .col.best{fill:#b07d00;font-weight:700}
.legend-row span{display:inline-block;margin-right:14px}.swatch{display:inline-block;width:11px;height:11px;
border:1px solid #333;vertical-align:-1px;margin-right:4px}
table.outcomes td{padding:0 8px 0 0;font-family:monospace}
#answer ul{list-style:none;padding:0;margin:4px 0 10px;font-size:15px}#answer li{margin:2px 0}
#climb-steps{border-collapse:collapse;font-size:13px;margin-top:6px}
#climb-steps td,#climb-steps th{padding:1px 12px 1px 0;text-align:left}
.pass{color:#116329}.fail,.error,.timeout{color:#a40e26}.infra{color:#888}
"""


def _kv(rows: list[tuple[str, str]]) -> str:
    return (
        '<table class="kv">'
        + "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in rows)
        + "</table>"
    )


def _best_card(data: ReportData) -> str:
    best = data.best
    if best is None:
        return '<div class="card" id="best"><h3>best belief</h3><p>no valid node yet</p></div>'
    total = best.successes + best.failures
    own = f"{best.successes}/{total} ({best.successes / total:.2f})" if total else "no results yet"
    held = "not scored" if best.heldout is None else f"{best.heldout[0]}/{best.heldout[1]} passed"
    rows = [
        ("own pass rate", own),
        ("90% interval", f"{best.interval[0]:.2f} to {best.interval[1]:.2f}"),
        *([("ε-quantile", f"{best.quantile:.3f}")] if best.quantile is not None else []),
        ("held-out", held),
        ("lineage", " → ".join(best.lineage)),
        ("rule", best.rule),
    ]
    return (
        f'<div class="card" id="best"><h3>best node (the run\'s policy: {escape(data.policy)})</h3>'
        f'<div class="big">node <a href="#node={escape(best.node)}" '
        f"onclick=\"select('{escape(best.node)}')\">{escape(best.node)}</a>"
        f"</div>{_kv(rows)}</div>"
    )


def _answer(data: ReportData) -> str:
    """The answer first: the lines `evolve run` ends with (evolve/report/headline.py), one per row."""
    rows = "".join(f'<li class="answer-line">{escape(line.strip())}</li>' for line in data.answer)
    return f'<section id="answer"><h2>the answer</h2><ul>{rows}</ul></section>'


def _usage_charts(data: ReportData) -> str:
    usage, charts = data.usage, []
    for chart_id, title, series, unit in (
        ("usage-tokens", "model tokens by role", usage.tokens, "tokens"),
        ("usage-dollars", "dollars by role", usage.dollars, "USD"),
        ("usage-cpu", "sandbox CPU-hours by job kind", usage.cpu_hours, "CPU-hours"),
    ):
        lines = [Line(role, s.hours, list(s.totals), _PALETTE[i % len(_PALETTE)], steps=True)
                 for i, (role, s) in enumerate(series.items())]  # fmt: skip
        charts.append(line_chart(chart_id, title, lines, "hours since the run started", unit))
    note = (
        ""
        if usage.exchanges
        else "<p class='meta'>No recorded model exchanges in this run (an imported run keeps none).</p>"
    )
    recorded = round(sum(series.totals[-1] for series in usage.tokens.values() if series.totals))
    # a bundle exported before every exchange file travelled
    if usage.exchanges and recorded < data.tokens_counted:
        note += (
            f"<p class='meta' id='tokens-missing'>The recorded exchanges hold {recorded:,} of the "
            f"{data.tokens_counted:,} tokens the gateway counted: the rest were not carried (a bundle "
            "exported before `evolve export` carried every exchange file of every job).</p>"
        )
    cache = "; ".join(
        f"{escape(role)} {usage.cache_hit_rate(role):.0%} of {prompt:,}"
        for role, (prompt, _) in sorted(usage.prompt_cache.items())
        if prompt
    )
    if cache:
        note += (
            "<p class='meta' id='prompt-cache'>prompt tokens read from the server's prompt cache: "
            f"{cache}</p>"
        )
    return note + '<div class="charts">' + "".join(charts) + "</div>"


def _progress_charts(data: ReportData) -> str:
    c = data.curves

    def lines(xs: list[float]) -> list[Line]:
        return [
            Line(
                f"best observed own pass rate (valid, ≥ {c.min_results} results)",
                xs,
                c.best_observed,
                "#1f77b4",
            ),
            Line("best node's own pass rate", xs, c.best_belief, "#e0a800"),
            Line("seed's own pass rate (baseline)", xs, c.seed, "#888888"),
        ]

    by_time = line_chart(
        "curve-time",
        "progress against wall time",
        lines(c.hours),
        "hours since the run started",
        "pass rate",
        y_max=1.0,
    )
    if data.import_times:  # results stamped at import time: a wall axis would show the import, in microhours
        by_time = (
            "<p class='meta' id='no-wall-axis'>No wall-time chart: this run was imported from another "
            "engine's run directory, whose results carry no time of their own.</p>"
        )
    return (
        '<div class="charts">'
        + line_chart(
            "curve-evaluations",
            "progress against evaluations used",
            lines([float(x) for x in c.evaluations]),
            "counted dev results",
            "pass rate",
            y_max=1.0,
        )
        + by_time
        + "</div>"
    )


def _overlays(data: ReportData) -> str:
    """`evolve report RUN_A RUN_B`: each run's best node against evaluations, and each run's answer."""
    if not data.overlays:
        return ""
    runs = [
        (f"{data.title.removeprefix('evolve run ')} (this page)", data.curves, data.answer),
        *((o.name, o.curves, o.answer) for o in data.overlays),
    ]
    lines = [
        Line(name, [float(x) for x in curves.evaluations], curves.best_belief, _PALETTE[i % len(_PALETTE)])
        for i, (name, curves, _) in enumerate(runs)
    ]
    answers = "".join(f"<div class='card overlay-answer'><h3>{escape(name)}</h3><ul>"
                      + "".join(f"<li>{escape(line.strip())}</li>" for line in answer) + "</ul></div>"
                      for name, _, answer in runs)  # fmt: skip
    return (
        '<h2 id="overlay">runs overlaid</h2><div class="charts">'
        + line_chart(
            "curve-overlay",
            "best node's own pass rate, each run",
            lines,
            "counted dev results",
            "pass rate",
            y_max=1.0,
        )
        + f'</div><div class="cards">{answers}</div>'
    )


def render(data: ReportData, refresh_s: float | None = None) -> str:
    """The whole page. `refresh_s`: the page reloads itself that often (`--watch`), keeping its #node."""
    refresh = "" if refresh_s is None else f'<meta http-equiv="refresh" content="{max(1, round(refresh_s))}">'
    generated = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(data.generated))
    evaluated = sum(1 for n in data.nodes if sum(n.own))
    invalid = sum(1 for n in data.nodes if not n.valid)
    legend = (
        "<div class='legend-row'><span><i class='swatch' style='background:#440154'></i>own pass rate 0"
        "</span><span><i class='swatch' style='background:#fde725'></i>1</span><span><i class='swatch' "
        "style='background:#c8c8c8'></i>no result</span><span>size: counted results</span><span style='color:"
        "#b07d00'>gold: best lineage, ringed: best belief</span><span style='color:#c00'>red cross: invalid"
        "</span><span>dashed black: flagged (a forged verdict)</span></div>"
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">{refresh}<title>{escape(data.title)}</title>
<style>{_STYLE}</style></head><body>
<h1>{escape(data.title)}</h1>
<p class="meta">run {escape(data.run_id)} at {escape(data.path)} &middot; report written {generated}</p>
{_answer(data)}
<div class="cards">
<div class="card" id="config"><h3>configuration</h3>{_kv(data.config)}</div>
<div class="card" id="budget"><h3>budget used</h3>{_kv(data.budget)}<p><b>stop reason:</b>
<span id="stop-reason">{escape(data.stop_reason)}</span></p></div>
{_best_card(data)}
</div>
<h2>clade tree: {len(data.nodes)} nodes ({evaluated} evaluated, {invalid} invalid)</h2>
{legend}
<div id="treebox"><div id="treeview"><div id="tree-controls"><button data-act="fit">fit</button><button
data-act="in">zoom in</button><button data-act="out">zoom out</button><button
data-act="best">best node</button>
<span class="meta">wheel: zoom, drag: pan; labels show once
legible</span></div>{tree_svg(data.nodes, None if data.best is None else data.best.node)}</div>
<div id="panel"><p>Click a node to see its instructions, its diff against its parent, its outcomes and its
clade estimate.</p></div></div>
<h2>nodes</h2>
<p><input id="node-filter"
placeholder="filter: id, parent, edit kind (code, prompt, lesson, cosmetic), valid/invalid" size="60">
<span id="node-count" class="meta"></span></p>
<div class="scroll" style="max-height:420px"><table id="node-table"><thead><tr><th data-key="id">id</th><th
data-key="parent">parent</th>
<th data-key="edit">edit kind</th><th data-key="status">status</th><th data-key="own">own</th><th
data-key="clade">clade</th>
<th data-key="tokens">tokens</th><th data-key="cost">cost</th></tr></thead><tbody></tbody></table></div>
<h2>progress</h2>
{_progress_charts(data)}
{climb_section(data.climb)}
{_overlays(data)}
{costs_section(data.costs)}
<h2>outcomes: task x node</h2>
<p class="meta">Green: passed, red: failed (fail, timeout or error), amber: attempts disagree, grey: only
infra.
Held-out rows are shaded: only the final agent is scored on them, the search never sees them. Columns: nodes
in tree order, up to 150 (the best lineage, in gold, always among them).</p>
<div class="scroll">{grid_svg(data.nodes, data.tasks, data.heldout_tasks)}</div>
<h2>usage over time</h2>
{_usage_charts(data)}
<script type="application/json" id="node-data">{data.panel_json()}</script>
<script type="application/json" id="exchange-data">{data.exchanges_json()}</script>
<script>{SCRIPT}</script>
</body></html>
"""
