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
