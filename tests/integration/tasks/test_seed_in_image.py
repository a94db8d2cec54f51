"""The seed agent's own tests pass inside the base image (what the validation gate runs)."""

from __future__ import annotations

from evolve.sandbox.docker_backend import DockerSandbox
from evolve.seed import copy_seed


def test_seed_tests_pass_in_the_base_image(base_image, tmp_path):
    code = copy_seed(tmp_path / "agent")
    with DockerSandbox.create(base_image, run_id="test-seed", job_id="seed-tests") as box:
        box.put_dir(code, "/work/agent")
        result = box.exec(
            ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
            cwd="/work/agent",
            timeout=300,
        )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-1000:]
    assert " passed" in result.stdout and "failed" not in result.stdout
