"""`evolve bench selfrepair`: does the meta step find a known improvement?

Each planted defect is a one-place change to the seed (a reply-parser branch broken, a prompt that hides the
file, a context budget misused, a tool that drops output, ...). For each, a short evolution runs from the
defective seed through the real runner (`evolve run`'s `run_evolution`, the seed and the final agent both
scored on the held-out tasks), and the intact seed (the reference) is scored on the same held-out tasks
through the evaluation pipeline (`evolve eval`'s `evaluate_all`). The recovered fraction is
(final - defective) / (reference - defective) on those tasks, with a 95 % paired bootstrap interval over
the tasks (seeded by the run seed); it is undefined where the defect did not lower the pass rate. Beside it:
the run's code-edit rate, its tokens, its wall time and the location each expansion's diagnosis ranked first.

Three sets of defects (`--set`): `dev`, the ones below (the engine was tuned on them); `test`, written
before the engine learned to find faults from data and never studied while tuning it (defects/test.toml),
though the author of the repair templates read its definitions; and `test2`, `test3` and `test4`, each written
by someone who had read none of the engine's repair code (defects/test2.toml, ...). A file set
runs only while its SHA-256 is the committed one (the `.sha256` beside it). A user's agent brings its own
(`--reference DIR --defects FILE`, a file in test.toml's form).
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
import tomllib
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import numpy as np

from evolve.archive.edits import EditRate, code_edit_rate
from evolve.archive.records import JobKind, Split
from evolve.archive.store import Run
from evolve.config import RunConfig
from evolve.errors import EvolveError
from evolve.llm.client import ChatModel
from evolve.llm.types import Role


@dataclass(frozen=True)
class Defect:
    """One place of the seed changed: `old` (exactly once in `path`) becomes `new`."""

    path: str
    old: str
    new: str
    what: str
    layer: str = ""
    """The part of the agent it breaks (`how it calls the model`, ...), where its file says."""
    form: str = ""
    """`mutation (...)` or `omission (...)`: whether its repair changes code or adds it back."""


DEFECTS: Mapping[str, Defect] = MappingProxyType(
    {
        "python-blocks-ignored": Defect(
            "agent/repairs.py",
            'block[1].lower() in ("python", "py", "")',
            'block[1].lower() in ("py",)',
            "a reply-parser branch broken: a ```python block (the small model's usual reply) is no action",
        ),
        "file-hidden": Defect(
            "agent/commands.py",
            "def solve(agent: Agent, problem: str, budget: int = 6000)",
            "def solve(agent: Agent, problem: str, budget: int = 0)",
            "a prompt that hides the file: solve shows the file list but no source",
        ),
        "context-starved": Defect(
            "agent/loop.py",
            "> self.context_chars:",
            "> self.context_chars // 10:",
            "a context budget misused: the conversation is cut to a tenth of its budget, so no step's result "
            "is seen",
        ),
        "stderr-dropped": Defect(
            "agent/tools.py",
            'output = f"{done.stdout}{done.stderr}',
            'output = f"{done.stdout}',
            "a tool that drops output: the shell returns stdout only (tracebacks and errors are lost)",
        ),
        "check-dropped": Defect(
            "agent/commands.py",
            "files=listing), check)",
            'files=listing), "")',
            "solve runs no check: the model never sees whether its edit passes the repository's tests",
        ),
        "nudge-dropped": Defect(
            "agent/prompts.py",
            '"\\n\\nEdit the code now: send the whole fixed function in a python block."',
            '""',
            "a prompt line dropped: solve no longer asks for the fixed function in a python block after the "
            "check "
            "(11 of 16 held-out tasks with it, 4 without)",
        ),
        "reply-cut": Defect(
            "agent/model.py",
            '"max_tokens": 1024',
            '"max_tokens": 64',
            "a step budget misused: each reply is cut at 64 tokens, mid-function",
        ),
    }
)
"""The planted defects, by name (`--defect NAME`)."""
DEFAULT = ("python-blocks-ignored", "file-hidden", "nudge-dropped", "check-dropped", "reply-cut")
"""What `evolve bench selfrepair` runs with no `--defect`: five that lower the seed's held-out pass rate
beyond a task or two of 16. Not by default: `context-starved` (one task: a solve that succeeds at its first
step loses nothing to a cut conversation) and `stderr-dropped` (two, within noise: HumanEval's doctest
checks print their failures to stdout, so the seed's runs showed no failing command without its output)."""


DEFECTS_DIR = Path(__file__).resolve().parent / "defects"
FILE_SETS = MappingProxyType(
    {name: DEFECTS_DIR / f"{name}.toml" for name in ("test", *(f"test{n}" for n in range(2, 16)))}
)
"""The held-out sets by name; the `.sha256` beside each holds its digest, committed before any engine change
it measures."""
SETS = ("dev", *FILE_SETS)


def load_defects(path: Path) -> dict[str, Defect]:
    """The defects of a TOML file, by name: one table each, with `path`, `old`, `new` and `what` (text), and
    optionally `layer` and `form`; EvolveError naming what is wrong."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise EvolveError(f"{path}: cannot read the defects: {exc}") from exc
    defects = {}
    for name, table in data.items():
        if not isinstance(table, dict):
            raise EvolveError(f"{path}: {name} is not a table of a defect")
        unknown = sorted(set(table) - {"path", "old", "new", "what", "layer", "form"})
        missing = sorted({"path", "old", "new", "what"} - set(table))
        wrong = sorted(key for key, value in table.items() if not isinstance(value, str))
        if unknown or missing or wrong:
            problem = (
                f"unknown key {unknown[0]}"
                if unknown
                else f"no {missing[0]}"
                if missing
                else f"{wrong[0]} is not text"
            )
            raise EvolveError(f"{path}: defect {name}: {problem}")
        defects[name] = Defect(**table)
    if not defects:
        raise EvolveError(f"{path}: no defects in it")
    return defects


def verified(path: Path) -> Path:
    """`path`, once its SHA-256 is the one its `.sha256` file records (sha256sum's form); EvolveError
    otherwise."""
    digest_file = path.with_name(path.name + ".sha256")
    try:
        recorded = digest_file.read_text(encoding="utf-8").split()[0].lower()
    except (OSError, IndexError, UnicodeDecodeError) as exc:
        raise EvolveError(f"{digest_file}: no recorded SHA-256 to check {path.name} against ({exc})") from exc
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    if actual != recorded:
        raise EvolveError(
            f"{path}: its SHA-256 is {actual[:12]}..., not the committed {recorded[:12]}... "
            f"({digest_file.name}): the set was changed after it was fixed; not running it"
        )
    return path


def defect_set(name: str) -> tuple[Mapping[str, Defect], tuple[str, ...]]:
    """A set's defects and the ones run with no `--defect`: `dev` (DEFECTS, DEFAULT), or every defect of a
    held-out set's file, verified against its digest."""
    if name == "dev":
        return DEFECTS, DEFAULT
    if name in FILE_SETS:
        defects = load_defects(verified(FILE_SETS[name]))
        return defects, tuple(defects)
    raise EvolveError(f"unknown defect set {name!r}; known: {', '.join(SETS)}")


def plant(defect: Defect, reference: Path | None, dest: Path) -> Path:
    """A copy of the agent at `reference` (None: the bundled seed) with the defect planted; EvolveError when
    its place is not there once."""
    from evolve.seed import copy_agent

    copy = copy_agent(reference, dest)
    target = copy / defect.path
    text = target.read_text() if target.is_file() else ""
    if text.count(defect.old) != 1:
        raise EvolveError(
            f"{defect.path}: the defect's place occurs {text.count(defect.old)} times, not once "
            f"(the seed changed; update evolve/bench/selfrepair.py)"
        )
    target.write_text(text.replace(defect.old, defect.new))
    return copy


@dataclass(frozen=True)
class Recovery:
    """One defect's short evolution, measured on the held-out tasks."""

    name: str
    run: str
    tasks: int
    reference: float
    defective: float
    final: float
    fraction: float | None
    """(final - defective) / (reference - defective); None where the defect did not lower the pass rate."""
    interval: tuple[float, float] | None
    code_edits: int
    expansions: int
    tokens: int
    seconds: float
    final_node: str | None
    stop: str = ""
    """Why its search stopped (the run's stop reason, e.g. `a node passed every search task (...)`)."""
    locations: tuple[str, ...] = ()
    """Per expansion, the location its diagnosis ranked first (`path:line`; instructions.json)."""

    def to_json(self) -> dict:
        return {
            **self.__dict__,
            "interval": list(self.interval) if self.interval else None,
            "code_edit_rate": EditRate(self.code_edits, self.expansions).rate,
        }


def recovered_fraction(
    reference: list[bool],
    defective: list[bool],
    final: list[bool],
    rng: np.random.Generator,
    draws: int = 2000,
) -> tuple[float | None, tuple[float, float] | None]:
    """The fraction and its 95 % percentile interval over `draws` paired resamples of the tasks (a resample
    whose reference does no better than the defective seed has no fraction and is left out)."""
    r, d, f = (np.asarray(x, dtype=float) for x in (reference, defective, final))
    gap = r.mean() - d.mean() if r.size else 0.0
    if gap <= 0:
        return None, None
    picks = rng.integers(0, r.size, size=(draws, r.size))
    gaps = r[picks].mean(axis=1) - d[picks].mean(axis=1)
    kept = gaps > 0
    ratios = (f[picks].mean(axis=1)[kept] - d[picks].mean(axis=1)[kept]) / gaps[kept]
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float((f.mean() - d.mean()) / gap), (float(low), float(high))


@dataclass(frozen=True)
class SelfRepair:
    """The bench's inputs: the run config of each short evolution, where runs go, and stand-in models
    (tests)."""

    config: RunConfig
    archive: Path
    models: Mapping[Role, ChatModel] | None = None
    progress: Callable[[str], None] = field(default=lambda line: None)

    def reference_outcomes(self, reference: Path | None) -> dict[str, bool]:
        """The reference agent on the held-out tasks, through the evaluation pipeline (`evolve eval`'s)."""
        from evolve.engine.evaluate import EvalSettings, evaluate_all
        from evolve.launch import load_tasks
        from evolve.llm.gateway import Gateway
        from evolve.llm.stack import ModelStack
        from evolve.sandbox.factory import DockerSandboxes, limits_from_config
        from evolve.seed import copy_agent

        tasks = list(load_tasks(self.config).heldout.values())
        path = self.archive / f"{self.config.run.name}-reference"
        if (path / "run.sqlite").exists():
            raise EvolveError(f"{path} already holds a run; choose another archive or run name")
        with ExitStack() as stack:
            models = (
                self.models
                or stack.enter_context(ModelStack(self.config.models, seed=self.config.run.seed)).models
            )
            run = stack.enter_context(Run.create(path, self.config))
            with tempfile.TemporaryDirectory(prefix="evolve-reference-") as tmp:
                node = run.add_node(copy_agent(reference, Path(tmp) / "agent"), origin="seed")
            gateway = stack.enter_context(
                Gateway(
                    models, exchanges_dir=run.path / "exchanges", usage_sink=run, seed=self.config.run.seed
                )
            )
            settings = EvalSettings(
                budget_steps=self.config.budget.agent_steps, token_budget=self.config.budget.job_tokens
            )
            results = evaluate_all(
                run,
                node.id,
                tasks,
                sandboxes=DockerSandboxes(run.id, limits_from_config(self.config.sandbox)),
                gateway=gateway,
                settings=settings,
            )
        return {r.task_id: r.outcome == "pass" for r in results if r.outcome != "infra"}

    def recover(self, name: str, defective: Path, reference: dict[str, bool]) -> Recovery:
        """A short evolution from `defective` (the real runner), scored against the reference's outcomes."""
        from evolve.launch import run_evolution

        base = self.config
        config = base.model_copy(
            update={
                "run": base.run.model_copy(
                    update={"name": f"{base.run.name}-{name}", "archive_dir": self.archive}
                ),
                "seed": base.seed.model_copy(update={"path": defective}),
                "tasks": base.tasks.model_copy(update={"heldout_seed": True}),
            }
        )
        started = time.monotonic()
        run, outcome = run_evolution(config, models=self.models)
        seconds = time.monotonic() - started
        if outcome.signal is not None:  # stopped, not finished: its held-out scores are missing, not zero
            run.close()
            raise EvolveError(
                f"{name}: the run was stopped by signal {outcome.signal} before it was scored "
                f"(`evolve run --resume {run.path}` finishes that run)"
            )
        with run:
            root = outcome.seed_node or run.nodes()[0].id
            final = outcome.best_node or root
            seen = {
                node: {
                    e.task: e.outcome == "pass"
                    for e in run.evaluations(node, split=Split.HELDOUT)
                    if e.outcome != "infra"
                }
                for node in {root, final}
            }
            tasks = sorted(set(reference) & set(seen[root]) & set(seen[final]))
            rate = code_edit_rate(run) or EditRate(0, 0)  # a short run has a few children
            tokens = run.usage_totals()[0]
            path = str(run.path)
            first = first_ranked(run)
        ref, bad, end = ([outcomes[t] for t in tasks] for outcomes in (reference, seen[root], seen[final]))
        fraction, interval = recovered_fraction(ref, bad, end, np.random.default_rng(self.config.run.seed))
        return Recovery(
            name,
            path,
            len(tasks),
            _mean(ref),
            _mean(bad),
            _mean(end),
            fraction,
            interval,
            rate.code,
            rate.expansions,
            tokens,
            round(seconds, 1),
            final,
            outcome.stop_reason,
            first,
        )

    def bench(
        self,
        defects: list[str] | None = None,
        *,
        seed: Path | None = None,
        reference: Path | None = None,
        catalogue: Mapping[str, Defect] = DEFECTS,
        default: tuple[str, ...] = DEFAULT,
    ) -> list[Recovery]:
        """Each named defect of `catalogue` (default: `default`) planted in `reference` (default: the bundled
        seed), or the one defective agent `seed` against `reference`."""
        unknown = sorted(set(defects or ()) - set(catalogue))
        if unknown:
            raise EvolveError(f"unknown defect {', '.join(unknown)}; known: {', '.join(catalogue)}")
        self.progress(f"scoring the reference ({reference or 'the bundled seed'}) on the held-out tasks")
        outcomes = self.reference_outcomes(reference)
        if seed is not None:
            return [self.recover(seed.name, seed, outcomes)]
        results = []
        with tempfile.TemporaryDirectory(prefix="evolve-defects-") as tmp:
            for name in defects or list(default):
                self.progress(f"{name}: {catalogue[name].what}")
                defective = plant(catalogue[name], reference, Path(tmp) / name)
                results.append(self.recover(name, defective, outcomes))
                shutil.rmtree(defective, ignore_errors=True)
                self.progress(render(results[-1:]).splitlines()[-1])  # each defect's line as it is done
        return results


def first_ranked(run: Run) -> tuple[str, ...]:
    """Per expansion of the run, in order, the location its diagnosis ranked first (`path:line`); an
    expansion that recorded no ranking adds nothing."""
    from evolve.engine.expand import ranked_locations

    ranked = [ranked_locations(run.log_dir(job.id)) for job in run.jobs() if job.kind == JobKind.EXPAND]
    return tuple(f"{found[0].path}:{found[0].line}" for found in ranked if found)


def _mean(values: list[bool]) -> float:
    return sum(values) / len(values) if values else 0.0


def totals(results: list[Recovery], seconds: float) -> dict:
    """The set's answer to the issue's goal: defects recovered by half or more, code edits over all expansions
    (the run-level code-edit rate), tokens, and `seconds` (the whole bench's wall time, the reference's
    scoring included)."""
    rate = EditRate(sum(r.code_edits for r in results), sum(r.expansions for r in results))
    return {
        "defects": len(results),
        "recovered_half": sum(r.fraction is not None and r.fraction >= 0.5 for r in results),
        "code_edits": rate.code,
        "expansions": rate.expansions,
        "code_edit_rate": rate.rate,
        "tokens": sum(r.tokens for r in results),
        "seconds": round(seconds, 1),
    }


def render(results: list[Recovery]) -> str:
    """A table: per defect the held-out pass rates, the recovered fraction, the code-edit rate and the
    cost."""
    header = (
        f"{'defect':<22} {'tasks':>5} {'ref':>5} {'defect':>6} {'final':>5}  {'recovered [95 %]':<23} "
        "code edits  tokens"
    )
    lines = [header + "      time  ranked first"]
    for r in results:
        recovered = (
            "undefined (no drop)"
            if r.fraction is None
            else (
                f"{r.fraction:+.2f} [{r.interval[0]:+.2f}, {r.interval[1]:+.2f}]"
                if r.interval
                else f"{r.fraction:+.2f}"
            )
        )
        lines.append(
            f"{r.name:<22} {r.tasks:>5} {r.reference:>5.2f} {r.defective:>6.2f} {r.final:>5.2f}  "
            f"{recovered:<23} {r.code_edits}/{r.expansions:<8} {r.tokens:<10}  {r.seconds / 60:.1f} min"
            f"  {', '.join(r.locations) or '-'}"
        )
    return "\n".join(lines)
