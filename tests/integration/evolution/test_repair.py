"""Generate and validate on Docker sandboxes (the scenario: tests/unit/engine/repair_case.py): candidates at
two ranked locations of an agent that is not the seed; the template at the second location that acts
differently on the replayed failure and fixes the live re-run is the child."""

import pytest

from evolve.sandbox.factory import DockerSandboxes
from tests.unit.engine.repair_case import check_the_fix_at_the_second_location_is_the_child, expand_relay


@pytest.mark.docker
def test_the_candidate_that_changes_behaviour_and_passes_the_rerun_is_the_child(tmp_path, base_image):
    result, records, log_dir = expand_relay(tmp_path, lambda run: DockerSandboxes(run.id))
    check_the_fix_at_the_second_location_is_the_child(result, records, log_dir)
