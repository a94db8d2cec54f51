"""Generate and validate through the real pipeline on process sandboxes, scripted models behind a real gateway
(the scenario: tests/unit/engine/repair_case.py; its Docker run:
tests/integration/evolution/test_repair.py)."""

from __future__ import annotations

from evolve.engine.expand import ranked_locations
from evolve.sandbox.factory import ProcessSandboxes
from evolve.sandbox.types import SandboxLimits
from tests.unit.engine.repair_case import check_the_fix_at_the_second_location_is_the_child, expand_relay

ROOMY = ProcessSandboxes(SandboxLimits(wall_clock_s=120.0))


def test_the_candidate_at_the_second_location_that_acts_differently_and_fixes_the_rerun_is_the_child(
    tmp_path,
):
    result, records, log_dir = expand_relay(tmp_path, lambda run: ROOMY)
    check_the_fix_at_the_second_location_is_the_child(result, records, log_dir)


def test_the_ranked_locations_are_read_from_the_diagnosis_record_and_a_bad_entry_is_skipped(tmp_path):
    assert ranked_locations(tmp_path) == ()
    (tmp_path / "instructions.json").write_text(
        '{"locations": [{"path": "a.py", "line": 3, "score": 1, '
        '"evidence": "e"}, {"path": "/etc/passwd", "line": 1, "score": 1, '
        '"evidence": "e"}, 7], "problem": "p"}'
    )
    assert [(loc.path, loc.line) for loc in ranked_locations(tmp_path)] == [("a.py", 3)]
