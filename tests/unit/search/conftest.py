"""Fixtures for the search tests: small hand-built views."""

from __future__ import annotations

import pytest

from evolve.search import SearchView


def make_view(
    parent, successes, failures, *, valid=None, n_tasks=20, budget=100, used=None, evaluated=None,
    pending_evaluations=(), pending_expansions=(), ids=None, expansions_left=None, solved=None,
) -> SearchView:  # fmt: skip
    """A view whose node i finished the first `s_i + f_i` tasks of the order 0..n_tasks-1 and, unless
    `solved` says otherwise, passed the first `s_i` of its evaluated tasks."""
    size = len(parent)
    if evaluated is None:
        evaluated = [frozenset(range(s + f)) for s, f in zip(successes, failures, strict=True)]
    if solved is None:
        solved = [frozenset(sorted(done)[:s]) for done, s in zip(evaluated, successes, strict=True)]
    return SearchView(
        ids=tuple(ids) if ids is not None else tuple(f"n{i}" for i in range(size)),
        parent=parent,
        valid=[True] * size if valid is None else valid,
        successes=successes,
        failures=failures,
        evaluated=evaluated,
        task_order=tuple(range(n_tasks)),
        budget=budget,
        used=sum(successes) + sum(failures) if used is None else used,
        pending_evaluations=pending_evaluations,
        pending_expansions=pending_expansions,
        expansions_left=expansions_left,
        solved=solved,
    )


@pytest.fixture(name="make_view")
def make_view_fixture():
    """`make_view(parent, successes, failures, ...)`: a small hand-built SearchView."""
    return make_view
