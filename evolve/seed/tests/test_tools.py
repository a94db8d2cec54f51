import pytest
from agent.tools import ToolError, Workspace


def test_write_and_replace_edit_files_in_the_repository(tmp_path):
    ws = Workspace(tmp_path)
    ws.write("pkg/a.py", "x = 1\ny = 2")
    assert (tmp_path / "pkg/a.py").read_text() == "x = 1\ny = 2\n"
    ws.replace("pkg/a.py", "y = 2", "y = 3")
    assert (tmp_path / "pkg/a.py").read_text() == "x = 1\ny = 3\n" and ws.edits == 2


@pytest.mark.parametrize("old", ["z = 9", "= ", ""])
def test_replace_needs_one_exact_occurrence(tmp_path, old):
    ws = Workspace(tmp_path)
    ws.write("a.py", "x = 1\ny = 2\n")
    with pytest.raises(ToolError, match="occurs"):
        ws.replace("a.py", old, "new")
    assert (tmp_path / "a.py").read_text() == "x = 1\ny = 2\n"


def test_an_edit_that_changes_nothing_is_refused_and_not_counted(tmp_path):
    ws = Workspace(tmp_path)
    ws.write("a.py", "x = 1\n")
    for edit in (lambda: ws.write("a.py", "x = 1"), lambda: ws.replace("a.py", "x = 1", "x = 1")):
        with pytest.raises(ToolError, match="changed nothing"):
            edit()
    assert ws.edits == 1


@pytest.mark.parametrize("path", ["../outside.py", "/etc/passwd", ""])
def test_paths_outside_the_repository_are_refused(tmp_path, path):
    with pytest.raises(ToolError, match="inside the repository"):
        Workspace(tmp_path / "repo").write(path, "x")


def test_bash_reports_output_exit_code_and_timeout(tmp_path):
    ws = Workspace(tmp_path, timeout=1)
    output = ws.bash("echo hi; exit 3")
    assert output.startswith("hi\n") and output.endswith("[exit code 3]")
    assert "timed out" in ws.bash("sleep 5")
