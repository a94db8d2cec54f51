"""The commands docs/byoa.md shows run as the page says (a real Docker sandbox, the gateway, the stand-in
model): `evolve agent check` passes the tool-call agent and prints what the page promises."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.unit.docs.test_byoa_page import ROOT, page_commands

pytestmark = pytest.mark.docker


def test_the_page_s_commands_pass_the_example_agent(base_image):
    for words in page_commands():
        done = subprocess.run(
            [sys.executable, "-m", "evolve", *words[1:]],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"{words[3]} meets the agent contract" in done.stdout
        assert "FAIL" not in done.stdout
