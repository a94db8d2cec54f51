"""A real evolution (Docker sandboxes, the gateway, the seed agent, the gate; scripted models) tracked in a
local MLflow server the test starts and in W&B's offline files: the logged figures agree with the archive,
and MLflow's own UI, in headless Chromium, shows the run's metrics."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from evolve.archive.best import run_best
from evolve.launch import run_evolution
from tests.integration.report.test_browser import chromium  # noqa: F401  (the fixture)
from tests.integration.scripted import ONE_EXPANSION, TWO_TASKS, evolution_config, scripted_models
from tests.unit.tracking.wandb_files import history

mlflow = pytest.importorskip("mlflow", reason="the tracking extra: pip install 'evolve[tracking]'")
pytest.importorskip("wandb", reason="the tracking extra: pip install 'evolve[tracking]'")

START_S = 240.0
"""MLflow's server takes about a minute to start on a busy two-core machine."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory) -> Iterator[str]:
    """`mlflow server` on a free local port, its store and artifacts in a temporary directory."""
    root = tmp_path_factory.mktemp("mlflow")
    port = _free_port()
    uri = f"http://127.0.0.1:{port}"
    command = [
        sys.executable,
        "-m",
        "mlflow",
        "server",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        "1",
        "--backend-store-uri",
        f"sqlite:///{root / 'mlflow.db'}",
        "--artifacts-destination",
        str(root / "artifacts"),
    ]
    with (root / "server.log").open("w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + START_S
        while True:
            try:
                with urllib.request.urlopen(f"{uri}/health", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"mlflow server did not start: {(root / 'server.log').read_text()[-2000:]}")
                time.sleep(1)
        yield uri
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_tracked_evolution_logs_what_the_archive_holds_and_mlflow_shows_it(
    tmp_path,
    base_image,
    mlflow_server,
    chromium,  # noqa: F811 - the imported fixture
):
    tracking = {
        "mlflow": {"enabled": True, "uri": mlflow_server, "experiment": "evolve-tests"},
        "wandb": {"enabled": True, "mode": "offline"},
    }
    config = evolution_config(
        tmp_path, "tracked", 7, tasks=TWO_TASKS, budget=ONE_EXPANSION, tracking=tracking
    )
    run, outcome = run_evolution(config, models=scripted_models())
    best = run_best(run)
    assert best is not None and outcome.best_node == best.node

    client = mlflow.MlflowClient(tracking_uri=mlflow_server)
    run_id = (run.path / "tracking" / "mlflow.id").read_text().strip()
    logged = client.get_run(run_id)
    evaluations = run.evaluations()
    passed = client.get_metric_history(run_id, "evaluation/passed")
    assert sorted(m.value for m in passed) == sorted(float(e.outcome == "pass") for e in evaluations)
    assert sorted(m.value for m in client.get_metric_history(run_id, "evaluation/tokens")) == sorted(
        float(e.tokens) for e in evaluations
    )
    assert logged.data.metrics["run/expansions"] == len(run.nodes()) - 1
    assert logged.data.metrics["run/tokens"] == run.usage_totals()[0]
    assert logged.data.tags["final/node"] == best.node and logged.info.status == "FINISHED"
    assert {"run.toml", "report.html", "run.evolve.tar.gz", "events.jsonl"} <= {
        a.path for a in client.list_artifacts(run_id)
    }

    wandb_id = (run.path / "tracking" / "wandb.id").read_text().strip()
    (offline,) = (run.path / "tracking" / "wandb" / "wandb").glob(
        f"offline-run-*-{wandb_id}/run-{wandb_id}.wandb"
    )
    rows = history(offline)
    assert sorted(
        (r["evaluation/node"], r["evaluation/task"], r["evaluation/outcome"])
        for r in rows
        if "evaluation/node" in r
    ) == sorted((e.node, e.task, str(e.outcome)) for e in evaluations)

    page = f"{mlflow_server}/#/experiments/{logged.info.experiment_id}/runs/{run_id}/model-metrics"
    shot = tmp_path / "mlflow.png"
    command = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1400,1000",
        "--virtual-time-budget=20000",
        f"--screenshot={shot}",
        "--dump-dom",
        page,
    ]
    dom = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False).stdout
    (tmp_path / "mlflow.html").write_text(dom)  # kept beside the screenshot for a failure's reader
    shown = " ".join(
        re.sub(r"<[^>]+>", " ", re.sub(r"<(style|script)\b.*?</\1>", "", dom, flags=re.DOTALL)).split()
    )
    # The run's name, and its metric groups with as many charts as the tracker sent metrics of each group
    # (the charts themselves render as they scroll into view).
    assert "Evaluations tracked" in shown
    for group in ("best (3)", "clade (3)", "evaluation (5)", "expansion (5)", "run (6)"):
        assert f"{group} Add chart" in shown, group
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
