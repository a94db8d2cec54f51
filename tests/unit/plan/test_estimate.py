"""`evolve plan`'s arithmetic, checked against a run whose usage is known: the published quickstart bundle."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from evolve.archive import Run
from evolve.archive.lineage import import_bundle
from evolve.config import RunConfig, parse_config
from evolve.models.pricing import known_price
from evolve.plan import make_plan
from evolve.plan.profiles import default_profile

BUNDLE = Path(__file__).resolve().parents[3] / "archive" / "published" / "quickstart-embedded.evolve.tar.gz"


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory) -> Path:
    """The bundle imported into an archive directory, as an earlier run there would be."""
    archive = tmp_path_factory.mktemp("archive")
    import_bundle(BUNDLE, archive / "quickstart-20261130-062346").close()
    return archive / "quickstart-20261130-062346"


def _recorded(run_path: Path) -> dict:
    """What the run's own records say: token totals, the evaluations' input/output, job seconds."""
    with Run.open(run_path) as run:
        evaluations, nodes = run.evaluations(), run.nodes()
        seconds = run.job_seconds()
    usage = [
        json.loads(line)["response"]["usage"]
        for path in (run_path / "exchanges").glob("*.jsonl")
        for line in path.read_text().splitlines()
    ]
    return {
        "evaluations": len(evaluations),
        "eval_tokens": sum(e.tokens for e in evaluations),
        "all_tokens": sum(n.tokens for n in nodes),
        "seconds": seconds,
        "eval_in": sum(u["prompt_tokens"] for u in usage),
        "eval_out": sum(u["completion_tokens"] for u in usage),
    }


def _quickstart_config(archive: Path, **models: str) -> RunConfig:
    """The published run's own config (the bundle's `run.toml`), not today's quickstart, which has changed."""
    with tarfile.open(BUNDLE) as bundle:
        config = parse_config(bundle.extractfile("run.toml").read().decode(), "run.toml")
    config = config.model_copy(update={"run": config.run.model_copy(update={"archive_dir": archive})})
    if models:
        priced = {
            role: config.models.solve.model_copy(update={"provider": "openai", "model": name})
            for role, name in models.items()
        }
        config = config.model_copy(update={"models": config.models.model_copy(update=priced)})
    return config


def test_the_plan_of_the_quickstart_predicts_what_its_published_run_used(quickstart):
    recorded = _recorded(quickstart)
    assert recorded["evaluations"] == 15 and recorded["all_tokens"] == 40_343  # the bundle as published
    config = _quickstart_config(quickstart.parent)
    plan = make_plan(config, measured_from=[quickstart], check=False)

    # 12 search evaluations + 3 held-out, 3 expansions: what the run did, so the plan is its usage
    assert (plan.counts.search_evaluations, plan.counts.heldout_evaluations, plan.counts.expansions) == (
        12,
        3,
        3,
    )
    assert plan.tokens.total == pytest.approx(recorded["all_tokens"])
    solve = plan.roles[2]
    expansion_solve = plan.profile.expansion.solve.times(3)
    assert solve.tokens.input - expansion_solve.input == pytest.approx(recorded["eval_in"])
    assert solve.tokens.output - expansion_solve.output == pytest.approx(recorded["eval_out"])
    assert recorded["eval_in"] + recorded["eval_out"] == recorded["eval_tokens"]
    # every ended job's wall time, once: container-hours; x 1 CPU; over the config's jobs in flight
    assert plan.container_hours == pytest.approx(recorded["seconds"] / 3600)
    assert plan.cpu_hours == pytest.approx(plan.container_hours * 1.0)
    assert plan.wall_hours == pytest.approx(plan.container_hours / config.executor.concurrency)
    assert plan.dollars == 0.0  # the embedded model is free
    assert plan.profile.source.startswith("measured:")


def test_dollars_are_the_planned_tokens_at_the_configured_prices(quickstart):
    recorded = _recorded(quickstart)
    config = _quickstart_config(
        quickstart.parent, diagnose="gpt-5-mini", modify="gpt-5-mini", solve="gpt-5-mini"
    )
    plan = make_plan(config, measured_from=[quickstart], check=False)
    price = known_price("gpt-5-mini")
    assert price is not None
    # the bundle keeps only its evaluations' exchanges: the expansions' 13,494 tokens divide into input
    # and output as the suite default's do
    shares = default_profile("humaneval").expansion
    expansion_in = (recorded["all_tokens"] - recorded["eval_tokens"]) * (
        (shares.diagnose.input + shares.modify.input + shares.solve.input) / shares.total
    )
    expected_in = recorded["eval_in"] + expansion_in
    expected_out = recorded["all_tokens"] - expected_in
    assert plan.tokens.input == pytest.approx(expected_in)
    assert plan.dollars == pytest.approx((expected_in * 0.25 + expected_out * 2.00) / 1e6, abs=1e-5)
    assert plan.dollars == pytest.approx(price.cost(round(expected_in), round(expected_out)), abs=1e-5)


def test_earlier_runs_in_the_archive_are_measured_only_for_the_same_suite_and_model(quickstart):
    same = make_plan(_quickstart_config(quickstart.parent), check=False)
    assert same.profile.source.startswith("measured:") and str(quickstart) in same.profile.source
    other_model = make_plan(_quickstart_config(quickstart.parent, solve="gpt-5-mini"), check=False)
    # no earlier run of that model: the published figures
    assert other_model.profile.source.startswith("published")


def test_a_job_never_plans_more_tokens_than_its_channel_may_take(quickstart):
    config = _quickstart_config(quickstart.parent)
    capped = config.model_copy(update={"budget": config.budget.model_copy(update={"job_tokens": 1000})})
    plan = make_plan(capped, measured_from=[quickstart], check=False)
    # the mean evaluation (1,790 tokens) is cut to the 1,000 the gateway allows one job
    assert plan.roles[2].tokens.total <= 1000 * (plan.counts.evaluations + plan.counts.expansions) + 1e-6
    assert plan.profile.evaluation.solve.capped(1000).total == pytest.approx(1000)


def test_a_run_with_nothing_to_measure_is_refused_with_one_line(tmp_path):
    from evolve.errors import EvolveError

    Run.create(tmp_path / "empty").close()
    with pytest.raises(EvolveError, match="no evaluations to measure"):
        make_plan(_quickstart_config(tmp_path), measured_from=[tmp_path / "empty"], check=False)


def test_a_damaged_earlier_run_is_passed_over_but_a_named_one_is_an_error(quickstart, tmp_path):
    from evolve.config import dump_config
    from evolve.errors import EvolveError

    archive = tmp_path / "archive"
    damaged = archive / "damaged"
    damaged.mkdir(parents=True)
    (damaged / "run.toml").write_text(dump_config(_quickstart_config(archive)))
    (damaged / "run.sqlite").write_bytes(b"not a database")
    assert make_plan(_quickstart_config(archive), check=False).profile.source.startswith("published")
    with pytest.raises(EvolveError, match="cannot measure tokens from"):
        make_plan(_quickstart_config(archive), measured_from=[damaged], check=False)


def test_the_table_and_the_line_show_the_plan(quickstart):
    from evolve.plan import plan_json, render_table, summary_line

    plan = make_plan(_quickstart_config(quickstart.parent), measured_from=[quickstart], check=False)
    line = summary_line(plan)
    assert line.startswith("plan: 15 evaluations, 3 expansions, 40,343 tokens, $0.00, ") and "\n" not in line
    table = render_table(plan)
    assert "expansions    3 (the expansion budget)" in table and "not checked (--offline)" in table
    assert all(
        f"  {role:<13} qwen2.5-coder-0.5b-instruct: " in table for role in ("diagnose", "modify", "solve")
    )
    data = plan_json(plan)
    assert data["tokens"]["total"] == 40_343 and data["evaluations"]["total"] == 15


def test_each_candidate_of_an_expansion_is_planned_with_its_own_modify_and_solve_channels(quickstart):
    one = make_plan(_quickstart_config(quickstart.parent), check=False)
    config = _quickstart_config(quickstart.parent)
    three = make_plan(
        config.model_copy(update={"meta": config.meta.model_copy(update={"candidates": 3})}), check=False
    )
    role = {r.role: r for r in one.roles}
    more = {r.role: r for r in three.roles}
    expansions = one.counts.expansions * one.profile.expansion.of("modify").total
    assert more["modify"].tokens.total == pytest.approx(role["modify"].tokens.total + 2 * expansions)
    assert more["diagnose"].tokens == role["diagnose"].tokens  # one diagnosis per expansion, whatever k
    assert three.container_hours > one.container_hours


def test_live_reruns_are_counted_as_solves_of_every_candidate_at_most():
    from evolve.config import MetaConfig
    from evolve.plan.estimate import rerun_solves

    assert rerun_solves(MetaConfig()) == 0
    assert rerun_solves(MetaConfig(candidates=3, templates=2, locations=2, rerun=2, rerun_passed=1)) == 21
    screened = MetaConfig(
        candidates=3, templates=2, locations=2, rerun=2, rerun_passed=1, spectra=1, screen=100
    )
    assert rerun_solves(screened) == 21 + 4 * 3  # the screen hands on 4 edits at most
