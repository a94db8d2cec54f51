import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.__main__ import run_tool


def test_write_file_stays_inside_the_working_directory(tmp_path):
    assert run_tool(tmp_path, "write_file", {"path": "a.py", "content": "x = 1\n"}) == "written"
    assert (tmp_path / "a.py").read_text() == "x = 1\n"
    assert run_tool(tmp_path, "write_file", {"path": "../b.py", "content": ""}).startswith("error")
