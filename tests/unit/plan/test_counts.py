"""How many tasks, evaluations and expansions the plan counts, per policy and suite."""

from __future__ import annotations

import pytest

from evolve.config import parse_config
from evolve.plan.counts import expansions_of, planned_tasks, run_counts, widening_expansions
from evolve.search.estimates import should_expand


def test_hgm_expands_as_its_widening_rule_says():
    # by hand: N^0.6 reaches 1 at N=1, 2 at N=4, 3 at N=7, 4 at N=11
    assert widening_expansions(12, 0.6, None) == 4
    assert widening_expansions(12, 0.6, 3) == 3
    assert widening_expansions(0, 0.6, None) == 0
    found = widening_expansions(800, 0.6, None)
    assert should_expand(799, found, 0.6) and not should_expand(799, found + 1, 0.6)
    assert found == 55  # HGM's 800 evaluations grow about 55 children


def test_the_expansion_budget_or_the_staged_first_stage_bounds_expansions():
    staged = parse_config(
        '[policy]\nname = "dgm"\n[policy.dgm]\nstages = [10, 50]\n[budget]\nevaluations = 205\n'
    )
    assert expansions_of(staged) == (20, "each child's first stage takes 10 evaluations")
    capped = parse_config('[policy]\nname = "dgm"\n[budget]\nevaluations = 205\nexpansions = 7\n')
    assert expansions_of(capped) == (7, "the expansion budget")
    hgm = parse_config("[budget]\nevaluations = 12\nexpansions = 9\n")
    assert expansions_of(hgm)[0] == 4  # the rule stops first


def test_the_tree_cannot_take_more_evaluations_than_nodes_times_tasks():
    config = parse_config(
        '[tasks]\nsuite = "builtin"\nlimit = 3\nheldout_limit = 2\n'
        "[budget]\nevaluations = 1000\nexpansions = 1\n"
    )
    counts = run_counts(config, planned_tasks(config))
    assert (counts.search_tasks, counts.heldout_tasks) == (3, 2)
    assert counts.search_evaluations == 2 * 3 and counts.evaluations == 8


def test_a_subset_is_counted_from_its_ids_without_network(monkeypatch):
    monkeypatch.delenv("EVOLVE_SWEBENCH_DATASET", raising=False)
    config = parse_config('[tasks]\nsuite = "swebench-verified:60"\n')
    tasks = planned_tasks(config)
    assert (tasks.search, tasks.heldout, tasks.exact) == (48, 12, True)
    assert len(tasks.images) == 61 and "evolve-base:latest" in tasks.images
    assert "swebench/sweb.eval.x86_64.django_1776_django-10973:latest" in tasks.images


@pytest.mark.parametrize(
    ("suite", "search", "heldout"), [("swebench-verified", 400, 100), ("polyglot", 180, 45)]
)
def test_a_whole_benchmark_not_here_is_counted_from_its_published_size(monkeypatch, suite, search, heldout):
    monkeypatch.delenv("EVOLVE_SWEBENCH_DATASET", raising=False)
    monkeypatch.delenv("EVOLVE_POLYGLOT_DIR", raising=False)
    tasks = planned_tasks(parse_config(f'[tasks]\nsuite = "{suite}"\n'))
    assert (tasks.search, tasks.heldout, tasks.exact) == (search, heldout, False)
    assert tasks.unnamed_images == (search + heldout if suite.startswith("swebench") else 0)


def test_named_search_tasks_are_what_the_plan_counts(monkeypatch):
    monkeypatch.delenv("EVOLVE_POLYGLOT_DIR", raising=False)
    config = parse_config(
        '[tasks]\nsuite = "builtin"\nids = ["todo-tags", "shop-low-stock"]\nheldout_limit = 2\n'
    )
    assert (planned_tasks(config).search, planned_tasks(config).heldout) == (2, 2)
    published = parse_config('[tasks]\nsuite = "polyglot"\nids = ["python__a", "go__b", "rust__c"]\n')
    assert planned_tasks(published).search == 3
