"""How many tasks, evaluations and expansions a configured run will start, at most.

Tasks are counted from the suite when it can be read here without network (a directory suite,
HumanEval, a polyglot checkout, a local SWE-bench dataset file); a DGM/HGM subset is counted from
its ids and evolve's fixed split; a whole published benchmark not here is counted from its published
size, one task in five held out (as `evolve.tasks.polyglot.split_of` splits), and marked inexact.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from evolve.config import RunConfig
from evolve.plan.types import Counts
from evolve.search.estimates import should_expand

PUBLISHED_SIZES = {"swebench-verified": 500, "swebench-lite": 300, "polyglot": 225}
"""Tasks in each whole benchmark (SWE-bench Verified, SWE-bench Lite, Aider's polyglot)."""
HELDOUT_EVERY = 5
"""evolve's fixed split holds out one task in five (`split_of`)."""
STAGED = ("dgm", "greedy", "random")


@dataclass(frozen=True)
class PlannedTasks:
    """The run's search and held-out tasks, and the images their evaluations run in."""

    search: int
    heldout: int
    images: tuple[str, ...]
    unnamed_images: int
    """SWE-bench instance images needed whose names cannot be known without the dataset."""
    exact: bool


def _limited(count: int, limit: int | None) -> int:
    return count if limit is None else min(count, limit)


def _from_ids(config: RunConfig, ids: tuple[str, ...], image_of) -> PlannedTasks:
    from evolve.tasks.polyglot import split_of

    search = [i for i in config.tasks.ids or ids if split_of(i) == config.tasks.split][: config.tasks.limit]
    heldout = [i for i in ids if split_of(i) == config.tasks.heldout_split][: config.tasks.heldout_limit]
    images = {config.sandbox.image} | {image_of(i) for i in search + heldout}
    return PlannedTasks(len(search), len(heldout), tuple(sorted(images)), 0, True)


def _published(config: RunConfig, base: str, image: str | None) -> PlannedTasks:
    size = PUBLISHED_SIZES[base]
    heldout_all = size // HELDOUT_EVERY
    search = _limited(len(config.tasks.ids) if config.tasks.ids else size - heldout_all, config.tasks.limit)
    heldout = _limited(heldout_all, config.tasks.heldout_limit)
    if image is None:  # one image per SWE-bench instance
        return PlannedTasks(search, heldout, (config.sandbox.image,), search + heldout, False)
    return PlannedTasks(search, heldout, (config.sandbox.image, image), 0, False)


def _loaded(config: RunConfig) -> PlannedTasks:
    from evolve.launch import load_tasks

    tasks = load_tasks(config)
    everything = list(tasks.search.values()) + list(tasks.heldout.values())
    images = {config.sandbox.image} | {t.image for t in everything}  # expansions run in the sandbox image
    return PlannedTasks(len(tasks.search), len(tasks.heldout), tuple(sorted(images)), 0, True)


def planned_tasks(config: RunConfig) -> PlannedTasks:
    """The tasks the run will search on and score the final agent on; never reaches the network."""
    base, _, subset = config.tasks.suite.partition(":")
    if base.startswith("swebench-"):
        from evolve.tasks.swebench import instance_image, swebench_subset

        if os.environ.get("EVOLVE_SWEBENCH_DATASET"):
            return _loaded(config)
        if subset:
            return _from_ids(config, swebench_subset(subset), lambda i: instance_image({"instance_id": i}))
        return _published(config, base, None)
    if base == "polyglot":
        from evolve.tasks.polyglot import POLYGLOT_IMAGE, polyglot_subset

        checkout = config.tasks.polyglot_dir or os.environ.get("EVOLVE_POLYGLOT_DIR")
        if checkout and os.path.isdir(checkout):
            return _loaded(config)
        if subset:
            return _from_ids(
                config,
                polyglot_subset(subset),
                lambda i: config.sandbox.image if i.startswith("python__") else POLYGLOT_IMAGE,
            )
        return _published(config, base, POLYGLOT_IMAGE)
    return _loaded(config)


def widening_expansions(evaluations: int, alpha: float, cap: int | None) -> int:
    """Expansions HGM's widening rule `N^α ≥ |T|` makes over `evaluations` (each checked before the
    next evaluation starts, as the policy does), at most `cap`."""
    tree = 1
    for done in range(evaluations):
        while should_expand(done, tree, alpha) and (cap is None or tree - 1 < cap):
            tree += 1
    return tree - 1


def expansions_of(config: RunConfig) -> tuple[int, str]:
    """(expansions, how they were counted) for the configured policy and budgets."""
    budget = config.budget
    cap = budget.expansions
    policy = config.policy
    if policy.name in STAGED:
        first = policy.dgm.stages[0]
        found = budget.evaluations // first
        rule = f"each child's first stage takes {first} evaluations"
    else:
        alpha = policy.hgm_cost.alpha if policy.name == "hgm_cost" else policy.hgm.alpha
        found = widening_expansions(budget.evaluations, alpha, None)
        rule = f"HGM's widening rule N^{alpha:g} >= |T|"
    if cap is not None and cap <= found:
        return cap, "the expansion budget"
    return found, rule


def run_counts(config: RunConfig, tasks: PlannedTasks) -> Counts:
    """The run's evaluations (search, then the held-out scoring of the final agent, and of the seed under
    `heldout_seed`) and expansions."""
    expansions, rule = expansions_of(config)
    # No node is evaluated twice on a task: the whole tree can take at most nodes x tasks.
    search = min(config.budget.evaluations, (expansions + 1) * tasks.search)
    heldout = tasks.heldout * (2 if config.tasks.heldout_seed else 1)  # the final agent's, and the seed's
    return Counts(
        search_evaluations=search,
        heldout_evaluations=heldout,
        expansions=expansions,
        search_tasks=tasks.search,
        heldout_tasks=tasks.heldout,
        exact_tasks=tasks.exact,
        expansion_rule=rule,
    )
