"""Generate and validate through the real pipeline on process sandboxes, scripted models behind a real gateway
(the scenario: tests/unit/engine/repair_case.py; its Docker run:
tests/integration/evolution/test_repair.py)."""

from __future__ import annotations

import json

from evolve.engine.expand import ExpandSettings, ranked_locations
from evolve.engine.repair import REPAIR_LOG, conversations
from evolve.meta.locations import Location
from evolve.meta.templates import Generated, TemplateEdit
from evolve.sandbox.factory import ProcessSandboxes
from evolve.sandbox.types import SandboxesClosed, SandboxLimits, SandboxUnavailable
from evolve.standins.models import RoutedModel
from evolve.tasks.types import write_files
from tests.unit.engine.repair_case import (
    FAULTY,
    INNOCENT,
    MODELS,
    RELAY,
    check_the_fix_at_the_second_location_is_the_child,
    expand_relay,
)

ROOMY = ProcessSandboxes(SandboxLimits(wall_clock_s=120.0))


def test_the_candidate_at_the_second_location_that_acts_differently_and_fixes_the_rerun_is_the_child(
    tmp_path,
):
    result, records, log_dir = expand_relay(tmp_path, lambda run: ROOMY)
    check_the_fix_at_the_second_location_is_the_child(result, records, log_dir)


def test_the_screens_kept_edits_are_checked_first_and_one_that_only_claimed_to_pass_gets_no_credit(tmp_path):
    # The screen's verdicts are the agent's own tests' exit statuses: both edits below were "kept", one only
    # because the agent said so. Each is still a candidate like any other.
    def kept(line: int, change: str, source: str) -> Generated:
        said = f"a template edit here ({change}) makes the 1 failing own test and every other own test pass"
        location = Location(FAULTY.path, line, 2.0, said)
        return Generated(location, FAULTY.path, TemplateEdit("screened", line, change, source), screened=True)

    claimed = kept(INNOCENT.line, "3 -> 30", RELAY.replace("RETRIES = 3", "RETRIES = 30"))
    fixing = kept(FAULTY.line, "given[:0] -> given", RELAY.replace("given[:0]", "given"))
    settings = ExpandSettings(candidates=1, templates=4, locations=2, replays=1, rerun=1, rerun_passed=1)
    result, records, log_dir = expand_relay(tmp_path, lambda run: ROOMY, settings, screened=(claimed, fixing))
    shown = "\n".join(
        f"{r.number} {r.source} {r.location} {r.template} {r.stage} {r.reason}" for r in records
    )
    assert result.valid, (result.reason, shown)
    assert [r.source for r in records] == ["screen", "screen"], shown  # it fixed all: nothing after it
    assert records[0].stage == "behaviour" and not records[0].chosen, shown
    assert records[1].chosen and records[1].fixed == 1, shown
    assert "    shown = given\n" in (result.code_dir / "agent" / "__main__.py").read_text()
    # the job's patch is the child's (candidate 2's); the first candidate's is kept beside it
    assert "+    shown = given\n" in (log_dir / "child.patch").read_text()
    assert "+RETRIES = 30\n" in (log_dir / "candidate-1.patch").read_text()


def test_a_screened_edit_that_fixes_no_failed_task_live_is_not_refused_for_it_and_an_unscreened_one_is(
    tmp_path,
):
    # It passed the own tests its parent failed (the screen's evidence); one live sample of a failed task is
    # not asked to repeat it. It must still act differently on the replay and keep the passed task.
    def edit(screened: bool) -> Generated:
        location = Location(FAULTY.path, FAULTY.line, 2.0, "a template edit here makes the own tests pass")
        changed = RELAY.replace("given[:0]", "given[:1]")  # the model now sees "F": still not the task
        return Generated(
            location, FAULTY.path, TemplateEdit("slice", FAULTY.line, "0 -> 1", changed), screened
        )

    settings = ExpandSettings(candidates=1, replays=1, rerun=1, rerun_passed=1)
    results = {}
    for screened in (True, False):
        _, records, log_dir = expand_relay(
            tmp_path / str(screened), lambda run: ROOMY, settings, screened=(edit(screened),)
        )
        kept_passed = (log_dir / "rerun-2" / "outcome.json").is_file()  # candidate 1 logs in the job
        results[screened] = (records[0].source, records[0].stage, records[0].fixed, kept_passed)
    # past the re-run (the passed task re-run and kept) to the gate, whose smoke task it then fails: the
    # model, shown one letter of it, changes nothing
    assert results[True] == ("screen", "smoke change", 0, True), results
    assert results[False] == ("template", "rerun", 0, False), results


def test_where_the_traced_failure_never_ran_the_edit_the_screens_edit_goes_on_and_no_other_is_replayed(
    tmp_path,
):
    # The parent's trace of its failed task (the spectra's) says it never ran the faulty line: replayed, the
    # candidate would run its parent's path to the end, so the replay could only say "acts as its parent".
    # The screen's edit has shown a fix on the own tests and goes on (it fixes the task live, so it is the
    # child); a template's edit there is refused with no replay run.
    lines = RELAY.count("\n")
    ran = frozenset(("agent/__main__.py", n) for n in range(1, lines + 1) if n != FAULTY.line)
    fix = RELAY.replace("given[:0]", "given")

    def edit(screened: bool) -> Generated:
        location = Location(FAULTY.path, FAULTY.line, 2.0, "a template edit here makes the own tests pass")
        return Generated(location, FAULTY.path, TemplateEdit("slice", FAULTY.line, "0 -> all", fix), screened)

    settings = ExpandSettings(candidates=1, replays=1, rerun=1, rerun_passed=1)
    found = {}
    for screened in (True, False):
        result, records, log_dir = expand_relay(
            tmp_path / str(screened), lambda run: ROOMY, settings, screened=(edit(screened),), ran=ran
        )
        found[screened] = (result.valid, records[0].stage, records[0].reason, (log_dir / "replay-1").exists())
    assert found[True][:2] == (True, None) and not found[True][3], found
    valid, stage, reason, replayed = found[False]
    assert (valid, stage, replayed) == (False, "behaviour", False), found
    assert "touches no line its parent ran on the failed tasks traced (broken)" in reason


def test_the_ranked_locations_are_read_from_the_diagnosis_record_and_a_bad_entry_is_skipped(tmp_path):
    assert ranked_locations(tmp_path) == ()
    (tmp_path / "instructions.json").write_text(
        '{"locations": [{"path": "a.py", "line": 3, "score": 1, '
        '"evidence": "e"}, {"path": "/etc/passwd", "line": 1, "score": 1, '
        '"evidence": "e"}, 7], "problem": "p"}'
    )
    assert [(loc.path, loc.line) for loc in ranked_locations(tmp_path)] == [("a.py", 3)]


FIXED_MAIN = """```python
def main(args):
    value = lambda flag: args[args.index(flag) + 1]
    given = open(value("--problem" if args[0] == "solve" else "--instructions")).read()
    shown = given
    script = ask("Task: " + shown)
    return subprocess.run(["bash", "-c", script], cwd=value("--workdir")).returncode
```"""
WRONG_MAIN = FIXED_MAIN.replace("shown = given\n", "shown = given[:1]\n")
REPAIRING = {
    **MODELS,
    # told that its first rewrite was refused by the live re-run, the model sends the fix; asked first,
    # a change that fixes nothing; asked about any other code, a reply that is no fix
    "modify": RoutedModel([("refused at `rerun`", FIXED_MAIN), ("shown = given[:0]", WRONG_MAIN)], "true"),
}


def test_a_repair_told_why_its_first_attempt_was_refused_makes_the_child(tmp_path):
    settings = ExpandSettings(candidates=1, repairs=2, repair_locations=2, replays=1, rerun=1, rerun_passed=1)
    result, records, log_dir = expand_relay(tmp_path, lambda run: ROOMY, settings, REPAIRING)
    shown = "\n".join(f"{r.number} {r.location} {r.template} {r.stage} {r.reason}" for r in records)
    assert result.valid, (result.reason, shown)
    assert [r.source for r in records] == ["repair"] * 4, shown  # no improve run: the fix fixed all
    innocent, faulty = records[:2], records[2:]
    assert {r.location for r in innocent} == {f"{INNOCENT.path}:{INNOCENT.line}"}, shown
    assert all(r.stage is not None for r in innocent) and innocent[0].stage == "imports", shown
    assert faulty[0].stage == "rerun" and faulty[0].fixed == 0, shown
    assert faulty[1].chosen and faulty[1].fixed == 1 and faulty[1].tokens > 0, shown
    code = (result.code_dir / "agent" / "__main__.py").read_text()
    assert "    shown = given\n" in code and "RETRIES = 3" in code and code.count("\n") == RELAY.count("\n")
    # the second attempt at the faulty line was told the first's reply and its refusal
    told = json.loads((log_dir / f"candidate-{faulty[1].number}" / REPAIR_LOG).read_text())["messages"]
    assert [m["role"] for m in told] == ["system", "user", "assistant", "user"]
    assert told[2]["content"] == WRONG_MAIN and "refused at `rerun`" in told[3]["content"]
    assert "shown = given[:0]" in told[1]["content"] and FAULTY.evidence in told[1]["content"]


LINE_REPAIRING = {
    **MODELS,
    # asked what the faulty line should be, the model writes it right; asked about the innocent one, it
    # writes a change that acts as the parent does, the same at every temperature and when told it failed
    "modify": RoutedModel(
        [
            (f"Write line {FAULTY.line} as", "```python\nshown = given\n```"),
            (f"Write line {INNOCENT.line} as", "```python\nRETRIES = 4\n```"),
            (f"Write line {INNOCENT.line} differently", "```python\nRETRIES = 4\n```"),
        ],
        "true",
    ),
}


def test_a_line_repair_at_the_second_ranked_line_makes_the_child_and_a_repeated_change_is_no_change(
    tmp_path,
):
    settings = ExpandSettings(
        candidates=1, line_repairs=2, line_locations=2, replays=1, rerun=1, rerun_passed=1
    )
    result, records, log_dir = expand_relay(tmp_path, lambda run: ROOMY, settings, LINE_REPAIRING)
    shown = "\n".join(f"{r.number} {r.location} {r.template} {r.stage} {r.reason}" for r in records)
    assert result.valid, (result.reason, shown)
    assert [r.source for r in records] == ["line"] * 3, shown  # the fix fixed all: no more samples
    first, again, fix = records
    assert {first.location, again.location} == {f"{INNOCENT.path}:{INNOCENT.line}"}, shown
    assert first.stage == "behaviour" and again.stage == "applies", shown
    assert again.template is not None and "a change made before" in again.template, shown
    assert fix.location == f"{FAULTY.path}:{FAULTY.line}" and fix.chosen and fix.fixed == 1, shown
    code = (result.code_dir / "agent" / "__main__.py").read_text()
    assert code == RELAY.replace("    shown = given[:0]\n", "    shown = given\n")
    # the second sample at a line is told the first's reply and why it was refused; the other line's first
    # sample starts its own conversation
    told = json.loads((log_dir / f"candidate-{again.number}" / REPAIR_LOG).read_text())["messages"]
    assert [m["role"] for m in told] == ["system", "user", "assistant", "user"], told
    assert told[3]["content"].startswith("That change was tried and refused at `behaviour`: "), told[3]
    assert f"Write line {INNOCENT.line} differently" in told[3]["content"]
    asked = json.loads((log_dir / f"candidate-{fix.number}" / REPAIR_LOG).read_text())["messages"]
    assert [m["role"] for m in asked] == ["system", "user"]
    assert (
        f"{FAULTY.line}      shown = given[:0]" in asked[1]["content"]
        and FAULTY.evidence in asked[1]["content"]
    )


def test_one_conversation_per_unit_each_with_its_first_failing_tests_source(tmp_path):
    test = b"import agent.calc\n\n\ndef test_add():\n    assert agent.calc.add(2, 3) == 5\n"
    write_files(
        {
            "agent/__init__.py": b"",
            "agent/calc.py": b"def add(a, b):\n    total = a - b\n    return total\n\n\nLIMIT = 3\n",
            "tests/test_calc.py": test,
        },
        tmp_path,
    )
    failing = ("tests/test_calc.py::test_add",)
    ranked = (
        Location("agent/calc.py", 2, 1.0, "ran by the failing test", failing),
        Location("agent/calc.py", 3, 1.0, "the same function"),
        Location("agent/gone.py", 1, 0.9, "no such file"),
        Location("agent/calc.py", 6, 0.5, "a constant", ("../../etc/passwd::x",)),
    )
    found = conversations(tmp_path, ranked, 3)
    assert [(c.unit.start, c.unit.end, c.unit.name) for c in found] == [(1, 3, "add"), (6, 6, None)]
    assert found[0].test == "def test_add():\n    assert agent.calc.add(2, 3) == 5" and found[1].test == ""


def test_where_prompt_edits_are_refused_a_unit_of_text_only_gets_no_repair(tmp_path):
    # Its rewrite could only change the text, which `require_code` refuses: the next unit gets the attempts.
    source = (
        'SYSTEM = """You are an agent.\nReply in one block."""\nHINT: str = "be brief"\n\n\n'
        "def ask(text):\n    return text[:0]\n"
    )
    write_files({"agent/__init__.py": b"", "agent/talk.py": source.encode()}, tmp_path)
    ranked = (
        Location("agent/talk.py", 1, 1.0, "its text was sent"),
        Location("agent/talk.py", 3, 0.9, "its text was sent"),
        Location("agent/talk.py", 7, 0.8, "ran only by failing replays"),
    )
    assert [c.unit.start for c in conversations(tmp_path, ranked, 2)] == [1, 3]
    assert [c.unit.name for c in conversations(tmp_path, ranked, 2, code_only=True)] == ["ask"]


class _LosesTheFirstTestsSandbox:
    """The process sandboxes, but the engine loses the sandbox of the first candidate's own tests."""

    def __init__(self) -> None:
        self.lost = False
        self.limits, self.isolating = ROOMY.limits, ROOMY.isolating

    def __call__(self, image: str, job: str, **kwargs):
        if job.endswith("-tests") and not self.lost:
            self.lost = True
            raise SandboxUnavailable("the engine lost the container")
        return ROOMY(image, job, **kwargs)


def test_a_candidate_whose_sandbox_fails_is_recorded_and_the_next_one_still_becomes_the_child(tmp_path):
    # One candidate's sandbox failure used to end the expansion with no child and no record of the others.
    maker = _LosesTheFirstTestsSandbox()
    result, records, _ = expand_relay(tmp_path, lambda run: maker)
    assert maker.lost
    first = records[0]
    assert (first.stage, first.reason) == ("sandbox", "sandbox failed: the engine lost the container")
    assert result.valid and any(r.chosen for r in records[1:])


class _ClosesAtTheSecondTestsSandbox:
    """The process sandboxes, closed (the run stopping) when the second candidate's own tests would run."""

    def __init__(self) -> None:
        self.asked = 0
        self.limits, self.isolating = ROOMY.limits, ROOMY.isolating

    def __call__(self, image: str, job: str, **kwargs):
        if job.endswith(("-tests", "-tests-2", "-tests-3")):
            self.asked += 1
            if self.asked == 2:
                raise SandboxesClosed("the sandbox pool is closed")
        return ROOMY(image, job, **kwargs)


def test_when_the_runs_sandboxes_close_the_expansion_ends_at_once_keeping_what_it_made(tmp_path):
    maker = _ClosesAtTheSecondTestsSandbox()
    result, records, _ = expand_relay(tmp_path, lambda run: maker)
    assert not result.valid and result.reason == "sandbox failed: the sandbox pool is closed"
    assert [r.number for r in records] == [1] and records[0].stage != "sandbox"
    assert maker.asked == 2  # no candidate after the second was made
