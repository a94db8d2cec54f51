"""Ray for the cluster tests, or a clear skip (a failure under EVOLVE_REQUIRE_RAY=1, as .ci/run sets)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def ray_module():
    try:
        import ray
    except ImportError:
        if os.environ.get("EVOLVE_REQUIRE_RAY") == "1":
            pytest.fail("EVOLVE_REQUIRE_RAY=1 but ray is not installed (pip install '.[distributed]')")
        pytest.skip("ray is not installed (extra `distributed`); EVOLVE_REQUIRE_RAY=1 makes this a failure")
    return ray
