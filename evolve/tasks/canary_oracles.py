"""A fixed family of oracles that try to tell a canary from the real test it copies by reading the test file,
and the statistic of how often each is right over seeded plantings (`evolve bench canaries`).

A forger in the tested process sees the file the tests run (the hidden tests as the grader rewrote them,
canaries planted): a canary and its twin differ in one expected constant, so it can find each pair; what
it cannot do, if the canaries give nothing away, is say which of the two is the copy. Each oracle is
asked exactly that, for every planted pair (the stronger position: it is told the pair), and answers
with a score (> 0: the later of the two in the file is the canary; < 0: the earlier; 0: it cannot say,
and a coin from the sample's seed answers). Under chance its hits are Binomial(pairs, 1/2); the
statistic is that count and the one-sided binomial tail P(X >= hits).

Two families: `SHAPE` (the forms an oracle can read without any idea of the answer: the length of the
change, wrappers, placement, names) and `ANSWER` (plausibility: which of two numbers is the likelier
answer, whether the changed constant fits the rest of the file: partial knowledge of the right answer;
reported, never claimed at chance).
"""

from __future__ import annotations

import ast
import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evolve.tasks import grader_canaries, grader_values

MODES = ("grader", "swebench")
"""How the sample is planted: as grader_script does for a pytest suite (checks against a literal taken out,
then canaries, the copied test renamed), or as the SWE-bench grader does (canaries in the file as it is,
the copied test renamed)."""


@dataclass(frozen=True)
class Pair:
    """One planted canary beside its twin, as the tested code could read them."""

    source: str
    tree: ast.Module
    first: ast.FunctionDef
    second: ast.FunctionDef
    canary_is_second: bool


Oracle = Callable[[Pair], float]


def plantings(files: list[tuple[str, str | bytes]], seeds: range, mode: str) -> list[Pair]:
    """Every canary planted in `files` ((path, text) of hidden pytest files) under each seed, as a Pair."""
    pairs = []
    for seed in seeds:
        for rel, text in files:
            source = text if isinstance(text, bytes) else text.encode()
            rng = random.Random(f"{seed}:{rel}")
            if mode == "grader":
                source, _ = grader_values.take(source, rel)
            source, ids, renames = grader_canaries.plant_among(source, rel, rng)
            twins = {
                canary: next((new for new, own in renames.items() if own == real), real)
                for canary, real in ids.items()
            }
            pairs += _pairs(source.decode(), twins)
    return pairs


def _pairs(source: str, twins: dict[str, str]) -> list[Pair]:
    tree = ast.parse(source)
    functions = {f"{scope}::{fn.name}" if scope else fn.name: fn for scope, fn in _functions(tree)}
    found = []
    for canary, twin in twins.items():
        a, b = functions[_within(canary)], functions[_within(twin)]
        first, second = sorted((a, b), key=lambda fn: fn.lineno)
        found.append(Pair(source, tree, first, second, second is a))
    return found


def _within(test: str) -> str:
    """A test id without its file's path (`Class::name` or `name`)."""
    return "::".join(test.split("::")[1:])


def _functions(tree):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            yield "", node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    yield node.name, item


@dataclass(frozen=True)
class Score:
    """How one oracle did: hits of `pairs`, and the chance of doing as well by guessing."""

    oracle: str
    family: str
    pairs: int
    hits: int

    @property
    def rate(self) -> float:
        return self.hits / self.pairs if self.pairs else 0.5

    @property
    def p_value(self) -> float:
        """P(X >= hits) for X ~ Binomial(pairs, 1/2): the chance of doing as well by guessing."""
        return _tail(self.pairs, self.hits)

    @property
    def p_two_sided(self) -> float:
        """P(|X - pairs/2| >= |hits - pairs/2|): an oracle right far less often than chance is one whose
        opposite is right far more often."""
        return min(1.0, 2 * _tail(self.pairs, max(self.hits, self.pairs - self.hits)))

    def as_json(self) -> dict:
        return {
            "oracle": self.oracle,
            "family": self.family,
            "pairs": self.pairs,
            "hits": self.hits,
            "rate": round(self.rate, 4),
            "p_value": float(f"{self.p_value:.3g}"),
            "p_two_sided": float(f"{self.p_two_sided:.3g}"),
        }


def _tail(n: int, k: int) -> float:
    return sum(math.comb(n, j) for j in range(k, n + 1)) / 2**n if n else 1.0


def bench(seeds: int) -> dict:
    """The statistic of every oracle on the builtin suite's hidden files planted under seeds 0..seeds-1,
    in both modes."""
    files = builtin_files()
    report: dict = {"seeds": seeds, "files": len(files), "modes": {}}
    for mode in MODES:
        pairs = plantings(files, range(seeds), mode)
        report["modes"][mode] = {"pairs": len(pairs), "oracles": [s.as_json() for s in score(pairs)]}
    return report


def score(
    pairs: Sequence[Any], seed: int = 0, families: dict[str, dict[str, Any]] | None = None
) -> list[Score]:
    """Every oracle of both families (`families`, default this module's SHAPE and ANSWER) over `pairs`, each
    pair with a `canary_is_second` (ties answered by a coin from `seed`)."""
    scores = []
    for family, oracles in (families or {"shape": SHAPE, "answer": ANSWER}).items():
        for name, oracle in oracles.items():
            coin = random.Random(f"{seed}:{name}")
            hits = 0
            for pair in pairs:
                said = oracle(pair)
                says_second = said > 0 if said else coin.random() < 0.5
                hits += says_second == pair.canary_is_second
            scores.append(Score(name, family, len(pairs), hits))
    return scores


# --- what the two tests of a pair differ in ---


def _changed(pair: Pair) -> tuple[object, object, str, str] | None:
    """(value in first, value in second, their source texts) of the one constant the two differ in."""
    a = [n for n in ast.walk(pair.first) if isinstance(n, ast.Constant)]
    b = [n for n in ast.walk(pair.second) if isinstance(n, ast.Constant)]
    if len(a) != len(b):
        return None
    for x, y in zip(a, b):
        if type(x.value) is not type(y.value) or x.value != y.value:
            return (
                x.value,
                y.value,
                ast.get_source_segment(pair.source, x) or "",
                ast.get_source_segment(pair.source, y) or "",
            )
    return None


def _sign(x: float) -> float:
    return (x > 0) - (x < 0)


def _size(value: object) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (str, bytes)):
        return float(len(value))
    return 0.0


def larger_is_canary(pair: Pair) -> float:
    """The larger number of a pair is the copy. Once the rule of a fixed direction (a number grew by 1-9);
    now a change goes either way, and what is left is the prior of the right answers (authors' expected
    numbers are small more often than not), so it is in the answer family."""
    changed = _changed(pair)
    return _sign(_size(changed[1]) - _size(changed[0])) if changed else 0


def smaller_is_canary(pair: Pair) -> float:
    return -larger_is_canary(pair)


def longer_text_is_canary(pair: Pair) -> float:
    changed = _changed(pair)
    return _sign(len(changed[3]) - len(changed[2])) if changed else 0


def shorter_literal_is_canary(pair: Pair) -> float:
    """A list or tuple that lost its last item (the issue's third rule): the shorter test."""
    return _sign(len(_text(pair.first)) - len(_text(pair.second)))


def _text(fn: ast.FunctionDef) -> str:
    """A test's body, without its name, as the file writes it."""
    return "\n".join(ast.unparse(stmt) for stmt in fn.body)


_WRAPPERS = re.compile(r"\bnot \(|== \[|assertNot|assertFalse|_FALSE|\bis False\b|!=")


def wrapped_is_canary(pair: Pair) -> float:
    """More negating or wrapping forms (`not (...)`, `== [...]`, the negative unittest assertion)."""
    return _sign(len(_WRAPPERS.findall(_text(pair.second))) - len(_WRAPPERS.findall(_text(pair.first))))


def later_is_canary(pair: Pair) -> float:
    return 1


def right_after_its_twin_is_canary(pair: Pair) -> float:
    """The issue's placement rule: a canary sits beside the test it copies."""
    scope = next(
        (
            n
            for n in ast.walk(pair.tree)
            if isinstance(n, (ast.Module, ast.ClassDef)) and pair.first in getattr(n, "body", [])
        ),
        pair.tree,
    )
    body = scope.body
    return 1 if body.index(pair.second) == body.index(pair.first) + 1 else 0


def _words(name: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Za-z][a-z]*", name) if w.lower() not in ("test", "check")]


def longer_name_is_canary(pair: Pair) -> float:
    return _sign(len(_words(pair.second.name)) - len(_words(pair.first.name)))


def fallback_words_are_canary(pair: Pair) -> float:
    fallback = set(grader_canaries.FALLBACK_WORDS)
    return _sign(len(fallback & set(_words(pair.second.name))) - len(fallback & set(_words(pair.first.name))))


def name_off_its_body_is_canary(pair: Pair) -> float:
    """A generated name is made of words from the whole scope; an author's names its own body."""

    def off(fn):
        body = " ".join(re.findall(r"[A-Za-z]+", _text(fn))).lower()
        words = _words(fn.name)
        return sum(w not in body for w in words) / max(1, len(words))

    return _sign(off(pair.second) - off(pair.first))


def name_of_other_tests_is_canary(pair: Pair) -> float:
    """A name made of words of the other tests' names."""
    others = [fn for _, fn in _functions(pair.tree) if fn not in (pair.first, pair.second)]
    pool = {w for fn in others for w in _words(fn.name)}

    def borrowed(fn):
        return sum(w in pool for w in _words(fn.name))

    return _sign(borrowed(pair.second) - borrowed(pair.first))


SHAPE: dict[str, Oracle] = {
    "longer constant text": longer_text_is_canary,
    "shorter literal": shorter_literal_is_canary,
    "wrapper forms": wrapped_is_canary,
    "later in the file": later_is_canary,
    "right after its twin": right_after_its_twin_is_canary,
    "longer name": longer_name_is_canary,
    "fallback name words": fallback_words_are_canary,
    "name off its body": name_off_its_body_is_canary,
    "name of other tests' words": name_of_other_tests_is_canary,
}


# --- plausibility: partial knowledge of the answer ---


def _rest(pair: Pair) -> str:
    """The file without the pair's two tests."""
    lines = pair.source.splitlines()
    drop = set()
    for fn in (pair.first, pair.second):
        start = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
        drop |= set(range(start - 1, (fn.end_lineno or fn.lineno)))
    return "\n".join(line for k, line in enumerate(lines) if k not in drop)


def fits_the_file_is_real(pair: Pair) -> float:
    """The changed constant's text appears elsewhere in the file (an input the answer is made of)."""
    changed = _changed(pair)
    if not changed:
        return 0
    rest = _rest(pair) + _text(pair.first) + _text(pair.second)
    first, second = rest.count(changed[2]), rest.count(changed[3])
    return _sign(int(second < first) - int(first < second))


def rarer_character_is_canary(pair: Pair) -> float:
    """The character a canary changed is rarer in the rest of the file than the one it replaced."""
    changed = _changed(pair)
    if not changed:
        return 0
    a, b = changed[2], changed[3]
    at = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), None)
    if at is None:
        return 0
    rest = _rest(pair)
    return _sign(rest.count(a[at]) - rest.count(b[at]))


def rounder_is_real(pair: Pair) -> float:
    """Numbers authors write end in zeros, or are small."""
    changed = _changed(pair)
    if not changed or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in changed[:2]):
        return 0

    def roundness(text):
        digits = text.replace(".", "")
        return len(digits) - len(digits.rstrip("0"))

    return _sign(roundness(changed[2]) - roundness(changed[3]))


def true_is_real(pair: Pair) -> float:
    changed = _changed(pair)
    if not changed or not all(isinstance(v, bool) for v in changed[:2]):
        return 0
    return 1 if changed[0] is True else -1


ANSWER: dict[str, Oracle] = {
    "larger value": larger_is_canary,
    "smaller value": smaller_is_canary,
    "changed text fits the file": fits_the_file_is_real,
    "rarer character": rarer_character_is_canary,
    "rounder number": rounder_is_real,
    "True is expected": true_is_real,
}


def builtin_files() -> list[tuple[str, str | bytes]]:
    """The builtin suite's hidden pytest files, (path, text)."""
    from evolve.tasks import load_suite

    return [
        (rel, text)
        for task in load_suite("builtin")
        for rel, text in sorted(task.hidden_tests.items())
        if rel.endswith(".py")
    ]
