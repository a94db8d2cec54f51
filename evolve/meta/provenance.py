"""Where in the agent's code what it sent the model came from: provenance of each recorded request's fields.

The gateway records every request an agent sent (its parameters such as `max_tokens`, `temperature` and
`stop`, its messages, its tool schemas) with the reply it got. Each field is traced to the code that produced
it, by the agent's syntax trees and whatever its names: a parameter to a literal of that value (strongest
where the literal sits in a dict entry, keyword argument, default or assignment named like the field; else
any literal equal to it), a message's text to the string constants, f-strings and format templates whose
literal text appears in it. Each traced place becomes a `Location` whose evidence says what was sent and
what the recorded exchanges show of it, computed from the exchanges only (any agent, not one agent's
wording):

- replies cut at the length limit, beside the token limit that was sent (`max_tokens`);
- replies repeated word for word, beside the sampling temperature that was sent;
- replies the agent did not act on: different replies answered with the same text of the agent's own
  (evolve.meta.evidence.fixed_answers), at the lines that send that text (where the agent chose not to act)
  and, just below them, at the text's constant;
- a list's repr sent where its items were meant (evolve.meta.reprs: quoted, on one line, newlines written
  as backslash-n), at the places that format a list or tuple into text, by the share of failed evaluations
  that sent one;
- the texts every request carries (a system message, the task's template), ranked low: they were sent,
  nothing yet counts against them.

A score is the share of what the field touched that went wrong (in [0, 1]); the ranking is one source of
evolve.meta.locate. The agent's code is read as text (nothing of it is imported or run) and its exchanges
are untrusted: they inform the meta step and decide nothing.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from evolve import syntax
from evolve.meta.agentmap import agent_files
from evolve.meta.evidence import fixed_answers, turns_from_exchanges
from evolve.meta.locations import Location
from evolve.meta.reprs import formatted_sequences, sequence_reprs
from evolve.untrusted import read_text


@dataclass(frozen=True)
class Recorded:
    """One evaluation's recorded exchanges (the gateway's JSONL records of its job) and its graded outcome."""

    outcome: str
    records: tuple[dict, ...]


@dataclass(frozen=True)
class Literal:
    """A literal of the agent's code: its value and the name it is given (dict key, keyword, default or
    assigned name; "" where none). A named value that is no literal (`"temperature": float(t) * 10`) has
    `value` None: what it computes is known only from what was sent."""

    path: str
    line: int
    value: object
    name: str


@dataclass(frozen=True)
class Text:
    """A string constant, f-string or format template of the agent's code: the literal pieces of its text."""

    path: str
    line: int
    pieces: tuple[str, ...]
    name: str = ""
    """The module-level name it is assigned to (`REFUSAL = "..."`), "" where none."""


@dataclass(frozen=True)
class Use:
    """A line of the agent's code that reads a name (`REFUSAL`, `words.REFUSAL`)."""

    name: str
    path: str
    line: int


@dataclass(frozen=True)
class Site:
    """A line of the agent's code that formats a local bound to a list or tuple into text
    (evolve.meta.reprs)."""

    path: str
    line: int
    name: str


@dataclass(frozen=True)
class Index:
    """What the agent's code holds that a request's fields may come from."""

    literals: list[Literal]
    texts: list[Text]
    uses: list[Use]
    sites: list[Site]


MIN_PIECE = 12
"""A shorter piece of text ("Task:", "\\n\\n") appears in too many messages to say where one came from."""
TOKEN_LIMITS = ("max_tokens", "max_completion_tokens")
"""The OpenAI-style request fields that bound a reply's length (a reply stopped there ends with `length`)."""
SAMPLING = ("temperature", "top_p")
USED_TEXT = 0.9
"""A fixed answer's own text ranks just below the lines that send it (where the agent chose not to act)."""
SENT_SCORE = 0.05
"""The score of a text or parameter that every request carried and nothing counts against."""
NAMED, COMPUTED, UNNAMED = 1.0, 0.9, 0.5
"""A literal named like the field it was sent as, an expression named so (the field is computed there: no
literal holds the value sent), and a literal only equal to its value."""
SKIPPED_FIELDS = frozenset({"messages", "tools", "tool_choice", "response_format", "model", "stream", "seed"})
_PLACEHOLDER = re.compile(r"\{[^{}]*\}|%[-#0 +]*\d*(?:\.\d+)?[sdrf]")


def source_index(code: Path) -> Index:
    """Every literal, text, use of a name and formatting of a list in the agent's Python files (its tests
    excluded: they send nothing)."""
    literals: list[Literal] = []
    texts: list[Text] = []
    uses: list[Use] = []
    trees = {}
    for path in agent_files(code):
        # the agent's file: no regular file reads as empty; one that does not parse produced nothing it sent
        tree = syntax.parsed(read_text(code / path))
        if tree is not None:
            trees[path] = tree
    for path, tree in trees.items():
        literals += _literals(path, tree)
        texts += texts_of(path, tree)
        uses += [
            Use(node.id if isinstance(node, ast.Name) else node.attr, path, node.lineno)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load)
        ]
    sites = [
        Site(path, site.line, site.value.id)
        for path, tree in trees.items()
        for site in formatted_sequences(tree, [t for p, t in trees.items() if p != path])
    ]
    return Index(literals, texts, uses, sites)


def _value(node: ast.expr) -> object:
    """The literal a node holds (a number, string, bool, or a list/tuple of them), else None."""
    if isinstance(node, ast.Constant) and node.value is not None and not isinstance(node.value, bytes):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
    ):
        number = node.operand.value
        return -number if isinstance(number, (int, float)) else None
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        values = [_value(e) for e in node.elts]
        return tuple(values) if all(v is not None for v in values) else None
    return None


def _literals(path: str, tree: ast.Module) -> list[Literal]:
    named: dict[int, str] = {}  # id(node) -> the name it is given
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    named[id(value)] = key.value
        elif isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg:
                    named[id(keyword.value)] = keyword.arg
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            pairs = [
                *zip(positional[len(positional) - len(args.defaults) :], args.defaults),
                *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None),
            ]
            named.update({id(default): arg.arg for arg, default in pairs})
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                name = (
                    target.id
                    if isinstance(target, ast.Name)
                    else target.attr
                    if isinstance(target, ast.Attribute)
                    else ""
                )
                if name and node.value is not None:
                    named[id(node.value)] = name
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.expr):
            literal = _value(node)
            if literal is not None or id(node) in named:
                found.append(Literal(path, node.lineno, literal, named.get(id(node), "")))
    return found


def texts_of(path: str, tree: ast.Module, shortest: int = MIN_PIECE) -> list[Text]:
    """The string constants, f-strings and format templates of one file with their literal pieces of at least
    `shortest` characters (docstrings left out)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    inside: set[int] = set()  # the constant parts of an f-string are traced as the f-string
    names = {
        id(node.value): node.targets[0].id
        for node in tree.body
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
    }
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
            inside.update(id(v) for v in node.values)
            pieces = tuple(p for p in (flat(part) for part in parts) if len(p) >= shortest)
            if pieces:
                texts.append(Text(path, node.lineno, pieces))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and id(node) not in inside
        ):
            flattened = (flat(part) for part in _PLACEHOLDER.split(node.value))
            pieces = tuple(p for p in flattened if len(p) >= shortest)
            if pieces:
                texts.append(Text(path, node.lineno, pieces, names.get(id(node), "")))
    return texts


def flat(text: str) -> str:
    """Text with its whitespace runs as one space: an agent may re-wrap or cap what it sends."""
    return " ".join(text.split())


def _content(content: object) -> str:
    if isinstance(content, list):
        return "".join(str(part.get("text") or "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def _requests(recorded: Sequence[Recorded]) -> list[tuple[Recorded, dict, dict]]:
    """(evaluation, request, response) of every record with both."""
    return [
        (run, record["request"], record["response"])
        for run in recorded
        for record in run.records
        if isinstance(record.get("request"), dict) and isinstance(record.get("response"), dict)
    ]


def trace(code: Path, recorded: Sequence[Recorded]) -> list[Location]:
    """The places in the agent's code (`code`, its root) that produced what its recorded requests sent,
    most suspicious first (a line may come more than once, for each field it produced: evolve.meta.locate
    merges them); [] with no recorded request."""
    sent = _requests(recorded)
    if not sent:
        return []
    index = source_index(code)
    found = (
        _parameter_locations(sent, index.literals)
        + _text_locations(recorded, sent, index.texts, index.uses)
        + _repr_locations(sent, index.sites)
    )
    return sorted(found, key=lambda loc: (-loc.score, loc.path, loc.line))


def _same(literal: object, sent: object) -> bool:
    """Whether a literal of the code is the value sent (a number written as a string counts: `"0.2"`)."""
    if isinstance(sent, list):
        sent = tuple(sent)
    if isinstance(literal, str) and isinstance(sent, (int, float)) and not isinstance(sent, bool):
        try:
            return float(literal) == sent
        except ValueError:
            return False
    if isinstance(literal, bool) or isinstance(sent, bool):
        return literal is sent
    return literal == sent


def _shown(value: object) -> str:
    return json.dumps(list(value) if isinstance(value, tuple) else value)


def _parameter_locations(sent: list[tuple[Recorded, dict, dict]], literals: list[Literal]) -> list[Location]:
    values: dict[tuple[str, str], list[tuple[Recorded, dict, dict]]] = defaultdict(list)
    for exchange in sent:
        request = exchange[1]
        for key, value in request.items():
            if key in SKIPPED_FIELDS or value is None or isinstance(value, dict):
                continue
            if isinstance(value, list) and not (
                value and all(isinstance(v, (str, int, float)) for v in value)
            ):
                continue
            values[(key, json.dumps(value, sort_keys=True))].append(exchange)
    locations = []
    for (key, shown), exchanges in values.items():
        value = json.loads(shown)
        exact = [lit for lit in literals if lit.name == key and _same(lit.value, value)]
        places = [(lit, NAMED, "") for lit in exact] or [
            *(
                (lit, COMPUTED, f" (computed here, named {key}: no literal holds the value sent)")
                for lit in literals
                if lit.name == key and lit.value is None
            ),
            *(
                (lit, UNNAMED, f" (a literal equal to it{f', named {lit.name}' if lit.name else ''})")
                for lit in literals
                if _distinct(value) and _same(lit.value, value)
            ),
        ]
        if not places:
            continue
        share, evidence = _parameter_evidence(key, value, exchanges, len(sent))
        for literal, weight, how in places:
            locations.append(
                Location(
                    literal.path, literal.line, round(max(share, SENT_SCORE) * weight, 4), evidence + how
                )
            )
    return locations


def _distinct(value: object) -> bool:
    """A value that a literal equal to it is likely the source of (not 0, 1, True or a short word)."""
    if isinstance(value, bool) or value in (0, 1, -1):
        return False
    return not isinstance(value, str) or len(value) >= 3


def _parameter_evidence(
    key: str, value: object, exchanges: list[tuple[Recorded, dict, dict]], total: int
) -> tuple[float, str]:
    """How suspicious a sent (field, value) is, and what the exchanges show of it."""
    count = len(exchanges)
    which = "every request" if count == total else f"{count} of {total} requests"
    head = f"{which} set {key} = {_shown(value)}"
    if key in TOKEN_LIMITS:
        cut = sum(response.get("finish_reason") == "length" for _, _, response in exchanges)
        failed = sum(
            run.outcome != "pass"
            for run, _, response in exchanges
            if response.get("finish_reason") == "length"
        )
        return cut / count, f"{head}; replies cut at the length limit in {cut} of {count}" + (
            f" ({failed} of them in failed evaluations)" if cut else ""
        )
    if key in SAMPLING:
        replies = Counter(
            " ".join(_content((response.get("message") or {}).get("content")).split())
            for _, _, response in exchanges
        )
        repeated = sum(n - 1 for reply, n in replies.items() if reply and n > 1)
        return 0.5 * repeated / count, f"{head}; replies repeated word for word in {repeated} of {count}"
    failed = sum(run.outcome != "pass" for run, _, _ in exchanges)
    return SENT_SCORE, f"{head} ({failed} of them in failed evaluations)"


def _text_locations(
    recorded: Sequence[Recorded], sent: list[tuple[Recorded, dict, dict]], texts: list[Text], uses: list[Use]
) -> list[Location]:
    roles: dict[str, Counter[str]] = defaultdict(Counter)  # flat message text -> role -> requests carrying it
    for _, request, _ in sent:
        messages = request.get("messages") or ()
        carried = {
            (m.get("role") or "?", flat(_content(m.get("content"))))
            for m in messages
            if isinstance(m, dict) and m.get("role") != "assistant"
        }
        if request.get("tools"):
            carried.add(("tools", flat(json.dumps(request["tools"]))))
        for role, message in carried:
            roles[message][role] += 1
    canned, answered = _canned_answers(recorded)  # flat answer -> replies answered with it
    locations = []
    for text in texts:
        piece = max(text.pieces, key=len)
        hits = {message: counts for message, counts in roles.items() if piece in message}
        if not hits:
            continue
        carried_by: Counter[str] = Counter()
        for counts in hits.values():
            carried_by.update(counts)
        where = ", ".join(
            f"the tool schemas of {n} requests" if role == "tools" else f"{role} messages of {n} requests"
            for role, n in carried_by.most_common(3)
        )
        quoted = json.dumps(piece if len(piece) <= 60 else piece[:57] + "...")
        answers = sum(n for message, n in canned.items() if piece in message)
        if answers and answered:
            share = round(answers / answered, 4)
            evidence = (
                f"the agent answered {answers} of {answered} replies in failed evaluations with its own text "
                f"{quoted}, the same for different replies: replies it did not act on"
            )
            # where the text is sent from decided not to act: those lines first, the text itself just below
            sites = [use for use in uses if text.name and use.name == text.name]
            locations += [
                Location(
                    use.path, use.line, share, f"sends {text.name} ({text.path} line {text.line}); {evidence}"
                )
                for use in sites
            ]
            locations.append(
                Location(text.path, text.line, round(share * (USED_TEXT if sites else 1), 4), evidence)
            )
        else:
            evidence = f"its text {quoted} was sent in {where}"
            locations.append(Location(text.path, text.line, SENT_SCORE, evidence))
    return locations


def _repr_locations(sent: list[tuple[Recorded, dict, dict]], sites: list[Site]) -> list[Location]:
    """The places that format a list into text, where failed evaluations sent the model a list's repr."""
    if not sites:
        return []
    reprs: dict[str, list[str]] = {}  # message text -> the reprs in it (a message repeats in later requests)
    failed: dict[int, list[str]] = {}  # failed evaluation -> the reprs its requests sent
    for run, request, _ in sent:
        if run.outcome == "pass":
            continue
        found = failed.setdefault(id(run), [])
        for message in request.get("messages") or ():
            if isinstance(message, dict) and message.get("role") != "assistant":
                text = _content(message.get("content"))
                if text not in reprs:
                    reprs[text] = sequence_reprs(text)
                found += reprs[text]
    carrying = [found for found in failed.values() if found]
    if not carrying:
        return []
    share = round(len(carrying) / len(failed), 4)
    example = carrying[0][0]
    quoted = example if len(example) <= 60 else example[:57] + "..."
    evidence = (
        f"{len(carrying)} of {len(failed)} failed evaluations sent the model a list's repr where its items "
        f"were meant ({quoted}: quoted on one line, its newlines written as \\n)"
    )
    return [
        Location(site.path, site.line, share, f"{evidence}; here {site.name}, bound to a list, is made text")
        for site in sites
    ]


def _canned_answers(recorded: Sequence[Recorded]) -> tuple[Counter[str], int]:
    """The agent's fixed answers to replies it did not act on (evolve.meta.evidence.fixed_answers; flat text
    -> replies it answered so, in failed evaluations), and how many replies failed evaluations had."""
    counted: Counter[str] = Counter()
    replies = 0
    for run in recorded:
        if run.outcome == "pass":
            continue
        turns = turns_from_exchanges(run.records)
        fixed = fixed_answers(turns)
        replies += len(turns)
        counted.update(
            answer for answer in (" ".join((t.output or "").split()) for t in turns) if answer in fixed
        )
    return counted, replies


def recorded_from(outcomes_and_records: Iterable[tuple[str, Iterable[dict]]]) -> list[Recorded]:
    """`Recorded` evaluations from (outcome, exchange records) pairs."""
    return [Recorded(outcome, tuple(records)) for outcome, records in outcomes_and_records]
