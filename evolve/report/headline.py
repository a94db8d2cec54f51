"""The answer first: what a run found, in the same few lines at the end of `evolve run` and at the top
of its report.

- the final agent (`evolve.archive.best`: the run's policy's rule, in words) and its held-out score;
- the seed against it on the held-out tasks both were scored on, paired (Newcombe's 95 % interval of
  the difference and the exact McNemar test, `evolve.archive.compare`), with a line when the tasks are
  too few to tell them apart;
- what it cost (tokens and dollars from the gateway's counts, sandbox CPU-hours from the job rows);
- why it stopped (as the runner recorded it when it stopped).
"""

from __future__ import annotations

from dataclasses import dataclass

from evolve.archive.best import Best, run_best
from evolve.archive.compare import Comparison, compare, counted_outcomes
from evolve.archive.compute import run_cpu_hours, sandbox_cpus
from evolve.archive.store import Run
from evolve.archive.tree import CladeTree
from evolve.stats import proportion_ci95


@dataclass(frozen=True)
class Headline:
    best: Best | None
    final_heldout: tuple[int, int] | None
    """Held-out tasks the final agent passed and was scored on (first counted result each)."""
    seed: str | None
    seed_heldout: tuple[int, int] | None
    versus: Comparison | None
    """Seed (A) against the final agent (B) on the held-out tasks both were scored on."""
    tokens: int
    dollars: float
    cpu_hours: float
    stop_reason: str

    def lines(self) -> list[str]:
        """The answer, one line each: final agent, seed vs final, rule, cost, stop reason."""
        if self.best is None:
            lines = ["final agent: none (no valid node)"]
        else:
            score = f"{_score(self.final_heldout)}; {self.best.successes}/{self.best.total} dev"
            lines = [f"final agent: node {self.best.node} ({score})"]
            lines.append(self._versus_line())
            if self.versus is not None and (note := self.versus.small_sample_note()) is not None:
                lines.append(f"  {note}")
            lines.append(f"rule: {self.best.rule}")
        lines.append(
            f"cost: {self.tokens:,} tokens, ${self.dollars:.4f}, {self.cpu_hours:.2f} sandbox CPU-hours"
        )
        lines.append(f"stopped: {self.stop_reason}")
        return lines

    def _versus_line(self) -> str:
        assert self.best is not None
        if self.seed is None:
            return "seed vs final: no seed (the tree has no root)"
        if self.seed == self.best.node:
            return f"seed vs final: the final agent is the seed (node {self.seed}); no agent beat it"
        if self.versus is None:
            why = (
                "the seed was not scored on the held-out tasks (tasks.heldout_seed = true scores it)"
                if self.seed_heldout is None
                else "no held-out task was scored for both"
            )
            return f"seed vs final on held-out: not compared: {why}"
        d, v = self.versus.difference, self.versus
        return (
            f"seed vs final on {v.tasks} held-out tasks, paired: seed {v.a.passed}/{v.tasks}, final "
            f"{v.b.passed}/{v.tasks}, difference {d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}] (95 %, "
            "Newcombe), "
            f"exact McNemar p = {v.mcnemar_p:.3g}"
        )


def _score(heldout: tuple[int, int] | None) -> str:
    if heldout is None:
        return "not scored on held-out tasks"
    passed, total = heldout
    ci = proportion_ci95(passed, total)
    return f"{passed}/{total} held-out passed, {ci.mean:.0%} [{ci.low:.0%}, {ci.high:.0%}]"


def _passed(outcomes: dict[str, bool]) -> tuple[int, int] | None:
    return (sum(outcomes.values()), len(outcomes)) if outcomes else None


def headline(run: Run, stop_reason: str, tree: CladeTree | None = None) -> Headline:
    """The answer of `run` (`tree`: its `Run.tree()` when the caller has it)."""
    best = run_best(run, tree)
    roots = [n for n in run.nodes() if n.parent is None]
    seed = roots[0].id if roots else None
    final = counted_outcomes(run, best.node, split="heldout") if best is not None else {}
    seeded = counted_outcomes(run, seed, split="heldout") if seed is not None else {}
    versus = None
    if best is not None and seed is not None and seed != best.node and final.keys() & seeded.keys():
        versus = compare(seeded, final, labels=(f"seed {seed}", f"final {best.node}"))
    tokens, dollars = run.usage_totals()
    return Headline(
        best,
        _passed(final),
        seed,
        _passed(seeded),
        versus,
        tokens,
        dollars,
        run_cpu_hours(run, sandbox_cpus(run)),
        stop_reason,
    )
