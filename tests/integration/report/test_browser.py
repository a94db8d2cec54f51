"""The run report in a real browser (headless Chromium, Debian's `chromium`): the published run and
an imported DGM run render their tree, a node's diff panel after a click, and their curves.

One Chromium launch per page: it loads `report.html#node=ID` (the page's script clicks that node),
dumps the DOM and takes a screenshot. Screenshots are kept in $EVOLVE_TEST_ARTIFACTS (default: the
test's temporary directory). Without Chromium the test skips, or fails under EVOLVE_REQUIRE_CHROMIUM=1
(set by .ci/run, whose set-up installs it).
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from evolve.archive import import_bundle, import_dgm_run
from evolve.report import write_report

ROOT = Path(__file__).resolve().parents[3]
PUBLISHED = ROOT / "archive" / "published"
HOSTILE = '</script><script>document.title="pwned"</script><img src="http://attacker.example/x.png">'


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("EVOLVE_REQUIRE_CHROMIUM") == "1":
            pytest.fail("EVOLVE_REQUIRE_CHROMIUM=1 but no chromium on PATH (scripts/setup.sh installs it)")
        pytest.skip("no chromium on PATH (apt-get install chromium)")
    return found


@pytest.fixture
def artifacts(tmp_path) -> Path:
    directory = Path(os.environ.get("EVOLVE_TEST_ARTIFACTS", tmp_path / "artifacts"))
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def render_in_browser(chromium: str, page: Path, node: str, screenshot: Path, profile: Path) -> str:
    """Load the page with `#node=ID`, return the DOM after its scripts ran, and take a screenshot."""
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               f"--user-data-dir={profile}", "--window-size=1400,2200", "--virtual-time-budget=5000",
               f"--screenshot={screenshot}", "--dump-dom", f"{page.as_uri()}#node={node}"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def check_page(
    dom: str,
    node: str,
    nodes: int,
    screenshot: Path,
    charts: tuple[str, ...] = ("curve-evaluations", "curve-time"),
) -> None:
    tree = re.search(r'<svg id="tree".*?</svg>', dom, re.DOTALL)
    assert tree is not None and tree.group().count('<g class="node') == nodes
    assert re.search(rf'<g class="node[^"]* selected" data-id="{re.escape(node)}"', dom)  # the click landed
    panel = re.search(r'<div id="panel" data-node="([^"]+)">(.*?)</div>\s*</div>', dom, re.DOTALL)
    assert panel is not None and panel.group(1) == node
    diff = re.search(r'<pre class="diff" id="diff">(.*?)</pre>', panel.group(2), re.DOTALL)
    assert diff is not None and "diff --git" in diff.group(1)
    assert re.search(r'<span class="(add|del)">', diff.group(1))  # the diff's lines are coloured
    for chart in charts:
        curve = re.search(rf'<svg class="chart" id="{chart}".*?</svg>', dom, re.DOTALL)
        assert curve is not None and '<polyline class="series"' in curve.group()
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size > 20_000


def test_published_run_report_renders_in_chromium(chromium, tmp_path, artifacts):
    run = import_bundle(PUBLISHED / "quickstart-embedded.evolve.tar.gz", tmp_path / "published")
    try:
        page = write_report(run, tmp_path / "published.html")
        node_count = len(run.nodes())
    finally:
        run.close()
    shot = artifacts / "report-published.png"
    dom = render_in_browser(chromium, page, "2", shot, tmp_path / "profile")
    check_page(dom, "2", node_count, shot)
    assert ">held-out</text>" in dom and 'class="ring"' in dom  # held-out rows marked, best belief ringed


def test_imported_dgm_run_report_renders_in_chromium(chromium, tmp_path, artifacts):
    fixtures = PUBLISHED / "fixtures" / "dgm"
    report = import_dgm_run(fixtures / "run", fixtures / "initial-code", tmp_path / "dgm")
    try:  # a child whose agent-written instructions try to run script and load a remote image
        code = report.run.checkout("initial", tmp_path / "code")
        report.run.add_node(code, parent="initial", origin="self_modify", instructions=HOSTILE)
        page = write_report(report.run, tmp_path / "dgm.html")
        node_count = len(report.run.nodes())
    finally:
        report.run.close()
    shot = artifacts / "report-dgm.png"
    node = "20250101_000002_000001"
    dom = render_in_browser(chromium, page, node, shot, tmp_path / "profile")
    check_page(dom, node, node_count, shot, charts=("curve-evaluations",))
    assert 'id="no-wall-axis"' in dom and 'id="curve-time"' not in dom  # import-time stamps draw no wall axis
    assert "not recorded by the DGM run directory" in dom and "qwen" not in dom  # no made-up config defaults
    assert dom.count('<path class="cross"') == 3  # the three invalid nodes are crossed out
    assert "<title>evolve run dgm</title>" in dom and "<img" not in dom  # the hostile text stayed text


def test_the_climb_is_drawn_in_chromium(chromium, tmp_path, artifacts):
    """The published CPU run's climb: each scored node by its expansion, the best-so-far, the lineage in
    gold with the held-out scores measured on it, and the lineage's steps under the figure."""
    from evolve.archive.climb import run_climb

    run = import_bundle(PUBLISHED / "humaneval-cpu.evolve.tar.gz", tmp_path / "climb")
    try:
        page = write_report(run, tmp_path / "climb.html")
        climb = run_climb(run)
    finally:
        run.close()
    shot = artifacts / "report-climb.png"
    dom = render_in_browser(chromium, page, climb.lineage[-1].node, shot, tmp_path / "profile")
    figure = re.search(r'<svg class="chart" id="climb".*?</svg>', dom, re.DOTALL)
    assert figure is not None
    scored = [node for node in climb.nodes if node.score is not None]
    assert figure.group().count('<g class="climb-node') == len(scored) > len(climb.lineage)
    assert figure.group().count('<g class="climb-node lineage') == len(climb.lineage)
    assert (
        figure.group().count('class="climb-heldout"') == sum(s.heldout is not None for s in climb.lineage) > 0
    )
    assert '<polyline class="series best-so-far"' in figure.group()
    steps = re.search(r'<table id="climb-steps">.*?</table>', dom, re.DOTALL)
    assert steps is not None and steps.group().count("<tr><td>") == len(climb.lineage)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
