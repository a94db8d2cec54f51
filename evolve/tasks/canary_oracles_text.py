"""The canary-oracle statistic for the runners that compile their tests (evolve.tasks.canary_oracles' method,
on source text): every canary grader_canaries_text plants in a Polyglot checkout's hidden test files under
seeds 0..N-1, and how often each oracle of a fixed family says which of a canary and its twin is the copy.

As in canary_oracles, each oracle is told the pair (the stronger position) and answers with a score (> 0:
the later of the two is the canary; < 0: the earlier; 0: a coin from the sample's seed). `shape`: what code
reading the file can see without any idea of the answer (place, names, the form of the change); `answer`:
plausibility (which value is the likelier answer), reported, never claimed at chance. A language whose
tests give no canary (Go's table-driven tests) contributes no pair.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evolve.tasks import canary_oracles
from evolve.tasks import grader_canaries_text as text_canaries
from evolve.tasks import grader_sources as sources
from evolve.tasks.canary_oracles import Score
from evolve.tasks.expected_names import expected_names

PROTOCOLS = {"cpp": "catch2", "go": "gotest", "rust": "libtest", "java": "junit", "javascript": "jest"}
"""The Polyglot languages whose runners compile their tests, and their report protocols."""


@dataclass(frozen=True)
class TextPair:
    """One planted canary beside its twin, as the tested code could read them."""

    protocol: str
    source: str
    first: dict
    second: dict
    """The two tests as grader_canaries_text finds them (span, body, name), in file order."""
    canary_is_second: bool
    between: int
    """Tests of the file between the two."""


TextOracle = Callable[[TextPair], float]


def polyglot_files(root: Path) -> list[tuple[str, str, bytes]]:
    """(protocol, path, text) of every hidden test file of the compiled languages in a Polyglot checkout
    (the layout evolve.tasks.polyglot reads)."""
    from evolve.tasks.polyglot import load_polyglot

    found = []
    for language, protocol in PROTOCOLS.items():
        if not (root / language).is_dir():
            continue
        for task in load_polyglot(root, [language]):
            for rel, text in sorted(task.hidden_tests.items()):
                if expected_names(protocol, {rel: text}):
                    found.append((protocol, rel, text))
    return found


def plantings(files: list[tuple[str, str, bytes]], seeds: range) -> list[TextPair]:
    """Every canary planted in `files` under each seed, as a TextPair."""
    pairs = []
    for seed in seeds:
        for protocol, rel, text in files:
            expected = set(expected_names(protocol, {rel: text}))
            source, ids, renames = text_canaries.plant_file(
                protocol, text, rel, random.Random(f"{seed}:{rel}"), expected, set()
            )
            out = source.decode("utf-8")
            found = sources.tests_in(protocol, rel, out)
            names, tests = [name for name, _ in found], [test for _, test in found]
            for canary, own in ids.items():
                twin = next(new for new, old in renames.items() if old == own)
                a, b = names.index(canary), names.index(twin)
                first, second = sorted((a, b))
                pairs.append(
                    TextPair(protocol, out, tests[first], tests[second], second == a, second - first - 1)
                )
    return pairs


def score(pairs: list[TextPair], seed: int = 0) -> list[Score]:
    """Every oracle of both families over `pairs` (canary_oracles.score)."""
    return canary_oracles.score(pairs, seed, {"shape": SHAPE, "answer": ANSWER})


def bench(root: Path, seeds: int) -> dict:
    """The statistic of every oracle on the checkout's compiled-language test files."""
    files = polyglot_files(root)
    pairs = plantings(files, range(seeds))
    return {
        "files": len(files),
        "languages": sorted({p for p, _, _ in files}),
        "pairs": len(pairs),
        "oracles": [s.as_json() for s in score(pairs)],
    }


def _sign(x: float) -> float:
    return (x > 0) - (x < 0)


def _body(pair: TextPair, test: dict) -> str:
    return pair.source[test["body"][0] : test["body"][1]]


def _changed(pair: TextPair) -> tuple[str, str]:
    """The token of each body where the two differ (the changed literal, or the flipped form)."""
    a, b = _body(pair, pair.first), _body(pair, pair.second)
    start = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    end = 0
    while end < min(len(a), len(b)) - start and a[len(a) - 1 - end] == b[len(b) - 1 - end]:
        end += 1

    def token(text: str) -> str:
        left = re.search(r"[\w.'\"!]*$", text[:start])
        right = re.match(r"[\w.'\"]*", text[len(text) - end :])
        return (left[0] if left else "") + text[start : len(text) - end] + (right[0] if right else "")

    return token(a), token(b)


def later_is_canary(pair: TextPair) -> float:
    return 1


def right_after_its_twin_is_canary(pair: TextPair) -> float:
    return 1 if pair.between == 0 else 0


def _words(name: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Za-z][a-z]*|\d+", name) if w.lower() != "test"]


def longer_name_is_canary(pair: TextPair) -> float:
    return _sign(len(_words(pair.second["name"])) - len(_words(pair.first["name"])))


def fallback_words_are_canary(pair: TextPair) -> float:
    fallback = set(text_canaries.FALLBACK_WORDS)
    second, first = set(_words(pair.second["name"])), set(_words(pair.first["name"]))
    return _sign(len(fallback & second) - len(fallback & first))


_NEGATIVE = re.compile(r"!|\bfalse\b|isFalse|_FALSE")


def negative_is_canary(pair: TextPair) -> float:
    """The negated or false-expecting form of the two is the copy: a prior on the answers (how often tests
    expect false), so in the answer family, as canary_oracles' "True is expected"."""
    first, second = _changed(pair)
    return _sign(len(_NEGATIVE.findall(second)) - len(_NEGATIVE.findall(first)))


def name_off_its_body_is_canary(pair: TextPair) -> float:
    def off(test: dict) -> float:
        body = " ".join(re.findall(r"[A-Za-z]+|\d+", _body(pair, test))).lower()
        words = _words(test["name"])
        return sum(w not in body for w in words) / max(1, len(words))

    return _sign(off(pair.second) - off(pair.first))


SHAPE: dict[str, TextOracle] = {
    "later in the file": later_is_canary,
    "right after its twin": right_after_its_twin_is_canary,
    "longer name": longer_name_is_canary,
    "fallback name words": fallback_words_are_canary,
    "name off its body": name_off_its_body_is_canary,
}


def _number(token: str) -> float | None:
    found = re.search(r"\d+(?:\.\d+)?", token)
    return float(found[0]) if found else None


def larger_is_canary(pair: TextPair) -> float:
    first, second = (_number(t) for t in _changed(pair))
    return _sign(second - first) if first is not None and second is not None else 0


def fits_the_file_is_real(pair: TextPair) -> float:
    """The changed token appears elsewhere in the file (an input the answer is made of)."""
    first, second = _changed(pair)
    rest = pair.source.replace(_body(pair, pair.first), "").replace(_body(pair, pair.second), "")
    return _sign(int(rest.count(second) < rest.count(first)) - int(rest.count(first) < rest.count(second)))


ANSWER: dict[str, TextOracle] = {
    "negated or false form": negative_is_canary,
    "larger value": larger_is_canary,
    "smaller value": lambda pair: -larger_is_canary(pair),
    "changed text fits the file": fits_the_file_is_real,
}
