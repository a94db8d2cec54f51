"""An agent's optional profile.toml: what the meta prompts may say about that agent, read as untrusted
data."""

from __future__ import annotations

from pathlib import Path

from evolve.meta.dgm import Entry, agent_summary, messages
from evolve.meta.profile import MAX_PROFILE_BYTES, SUMMARY_CHARS, Profile, agent_profile


def test_a_profile_is_read_and_bad_ones_are_ignored_saying_why(tmp_path: Path) -> None:
    assert agent_profile(tmp_path) == Profile()
    (tmp_path / "profile.toml").write_text('summary = """\n- `agent/main.py` runs the loop.\n"""\n')
    assert agent_profile(tmp_path).summary == "- `agent/main.py` runs the loop."
    (tmp_path / "profile.toml").write_text("summary = [1, 2]\n")
    assert agent_profile(tmp_path).problem == "profile.toml: summary must be a string"
    (tmp_path / "profile.toml").write_text("summary = \n")
    assert (
        agent_profile(tmp_path).problem.startswith("profile.toml: ") and agent_profile(tmp_path).summary == ""
    )
    (tmp_path / "profile.toml").write_text('summary = "' + "x" * (MAX_PROFILE_BYTES + 1) + '"\n')
    assert "larger than" in agent_profile(tmp_path).problem
    (tmp_path / "profile.toml").write_text('summary = "' + "x" * (SUMMARY_CHARS * 2) + '"\n')
    assert len(agent_profile(tmp_path).summary) < SUMMARY_CHARS + 10


def test_dgms_summary_is_the_contract_plus_the_agents_own_description(tmp_path: Path) -> None:
    plain = agent_summary(tmp_path)
    assert plain.startswith("# Coding agent summary") and "agent/__main__.py" in plain
    (tmp_path / "profile.toml").write_text('summary = "- `agent/main.py` runs the loop."\n')
    described = agent_summary(tmp_path)
    assert "- `agent/main.py` runs the loop.\n- `tests/` holds" in described
    system = messages(Entry("solve_stochasticity"), "CODE", None, described)[0]["content"]
    assert "`agent/main.py` runs the loop." in system


def test_markers_are_the_agents_own_words_and_the_engine_knows_none(tmp_path: Path) -> None:
    """The evidence finds a failing check, a silent failure, an edit and the exit status by the words the
    agent's profile declares: another agent's words are read the same way, and without markers the seed's
    words are no evidence of anything."""
    from evolve.meta.evidence import TaskRun, Turn, compute_evidence

    (tmp_path / "profile.toml").write_text(
        "[markers]\n"
        'check = "Tests: {command} ->"\n'
        'exit = "(exit {code})"\n'
        'timed_out = "(killed after {seconds})"\n'
        'edited = ["Saved {file}"]\n'
        'status = "done: {status}"\n'
    )
    markers = agent_profile(tmp_path).markers
    own = "Saved a.py.\nTests: make test ->\nok\n(exit 0)"
    broken = "Saved a.py.\nTests: make test ->\n(exit 1)"
    turns = (Turn("```x\n```", own), Turn("```x\n```", broken), Turn("```x\n```", "(killed after 5 s)"))
    run = TaskRun("t", "fail", turns, statement="fix a.py", agent_output="done: limits", markers=markers)
    assert run.exit_status == "limits" and run.edited and run.edited_files(own) == ["a.py"]
    kinds = {p.kind for p in compute_evidence([run]).patterns}
    assert {"broke_checks", "silent_failure", "timeout", "steps_exhausted"} <= kinds

    seed_words = (Turn("```x\n```", "Wrote a.py.\nChecks: `make` ->\nok\n[exit code 0]"),)
    unmarked = TaskRun("t", "fail", seed_words, agent_output="agent: limits after 3 steps")
    assert unmarked.exit_status == "" and not unmarked.edited
    assert not {"broke_checks", "silent_failure", "steps_exhausted", "no_check"} & {
        p.kind for p in compute_evidence([unmarked]).patterns
    }


def test_bad_markers_are_refused_in_one_line_and_the_rest_of_the_profile_is_kept_out(tmp_path: Path) -> None:
    for table, problem in [
        ('check = "Tests ->"', "must hold {command} once"),
        ('exit = "{code}"', "must open with text"),
        ('status = "done: {a}{status}"', "put text between its fields"),
        ('nonsense = "x {file}"', "unknown marker 'nonsense'"),
        ("edited = 3", "must be a non-empty string"),
        ("edited = [" + ", ".join(['"W {file}"'] * 9) + "]", "more than 8 templates"),
    ]:
        (tmp_path / "profile.toml").write_text(f'summary = "s"\n[markers]\n{table}\n')
        profile = agent_profile(tmp_path)
        assert problem in profile.problem and "\n" not in profile.problem, (table, profile.problem)
        assert profile.summary == ""
