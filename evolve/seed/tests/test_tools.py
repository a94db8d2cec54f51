import pytest
from agent.tools import ToolError, Workspace, cap, merge_definitions


@pytest.fixture
def ws(tmp_path):
    (tmp_path / "m.py").write_text("import os\n\n\ndef f(x):\n    return x - 1\n\n\ndef g():\n    return 2\n")
    return Workspace(tmp_path, timeout=5)


def test_bash_reports_exit_code_and_times_out(ws):
    assert ws.bash("echo hi; exit 3").endswith("[exit code 3]")
    assert "timed out" in ws.bash("sleep 5", timeout=0.5)


def test_cap_keeps_head_and_tail():
    text = "a" * 5000 + "b" * 5000
    capped = cap(text, 100)
    assert capped.startswith("a" * 50) and capped.endswith("b" * 50) and "cut" in capped


def test_view_numbers_lines(ws):
    assert "   5      return x - 1" in ws.view("m.py")


def test_replace_exact_and_undo(ws):
    ws.replace("m.py", "return x - 1", "return x + 1")
    assert "x + 1" in (ws.root / "m.py").read_text()
    ws.undo("m.py")
    assert "x - 1" in (ws.root / "m.py").read_text()


def test_replace_requires_a_unique_match(ws):
    with pytest.raises(ToolError, match="not found"):
        ws.replace("m.py", "return 7", "return 8")
    with pytest.raises(ToolError, match="2 times"):
        ws.replace("m.py", "    return", "    return")


def test_paths_outside_the_repository_are_refused(ws):
    with pytest.raises(ToolError, match="outside"):
        ws.write("../evil.py", "x = 1")


def test_write_creates_and_undo_removes(ws):
    ws.write("pkg/new.py", "X = 1")
    assert (ws.root / "pkg/new.py").read_text() == "X = 1\n"
    ws.undo("pkg/new.py")
    assert not (ws.root / "pkg/new.py").exists()


def test_merge_replaces_only_the_named_function(ws):
    ws.merge_python("import math\n\ndef f(x):\n    return math.floor(x) + 1\n", "", ["m.py"])
    text = (ws.root / "m.py").read_text()
    assert "math.floor(x) + 1" in text and "return x - 1" not in text
    assert "def g():\n    return 2" in text and text.count("import math") == 1
    import ast
    ast.parse(text)


def test_merge_appends_new_functions():
    merged = merge_definitions("def a():\n    return 1\n", "def b():\n    return 2\n")
    assert "def a()" in merged and "def b()" in merged


def test_merge_without_a_target_asks_for_a_path(ws):
    with pytest.raises(ToolError, match="which file"):
        ws.merge_python("def unknown():\n    pass\n", "", ["m.py"])


def test_merge_reports_syntax_errors(ws):
    with pytest.raises(ToolError, match="does not parse"):
        ws.merge_python("def f(:\n", "", ["m.py"])


def test_merged_imports_go_below_the_docstring_and_future_import():
    source = '"""Doc."""\nfrom __future__ import annotations\n\ndef f():\n    return 1\n'
    merged = merge_definitions(source, "import re\n\ndef f():\n    return re.escape('x')\n")
    lines = merged.splitlines()
    assert lines[:3] == ['"""Doc."""', "from __future__ import annotations", "import re"]


def test_merge_replaces_a_method_and_reindents(tmp_path):
    (tmp_path / "c.py").write_text("class C:\n    def a(self):\n        return 1\n\n    def b(self):\n        raise NotImplementedError\n")
    ws = Workspace(tmp_path)
    ws.merge_python("    def b(self):\n        return self.a() + 1\n", "", ["c.py"])
    import importlib.util

    spec = importlib.util.spec_from_file_location("c", tmp_path / "c.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.C().b() == 2


def test_an_empty_block_does_not_erase_a_file(ws):
    with pytest.raises(ToolError, match="erase"):
        ws.merge_python("", "m.py", ["m.py"])
    assert "def f(x)" in (ws.root / "m.py").read_text()


def test_merge_replaces_a_top_level_assignment_by_name(ws):
    (ws.root / "words.py").write_text('"""Words."""\n\nA = "one"\nB = """two\nlines"""\n\n\ndef f():\n    return A\n')
    ws.merge_python('B = """new\nwords"""\n', "words.py", [])
    text = (ws.root / "words.py").read_text()
    assert 'B = """new\nwords"""' in text and "two" not in text
    assert 'A = "one"' in text and "def f():" in text  # the rest of the file is kept, not overwritten


def test_merge_appends_a_new_assignment():
    merged = merge_definitions("A = 1\n", "C: int = 3\n")
    assert "A = 1" in merged and "C: int = 3" in merged


def test_merge_keeps_the_code_before_an_echoed_prompt(ws):
    echoed = "def f(x):\n    return x + 2\n\nChecks: `python3 -m pytest -q` ->\n1 failed\n"
    ws.merge_python(echoed, "m.py", [])
    text = (ws.root / "m.py").read_text()
    assert "return x + 2" in text and "Checks" not in text and "def g():" in text


def test_a_method_written_without_self_gets_it(ws):
    (ws.root / "inv.py").write_text("class Inventory:\n    def __init__(self):\n        self.items = {}\n\n"
                                    "    def low(self, threshold):\n        raise NotImplementedError\n\n"
                                    "    def size(self):\n        raise NotImplementedError\n")
    ws.merge_python("def low(threshold):\n    return [k for k, v in self.items.items() if v < threshold]\n", "inv.py", [])
    ws.merge_python("def size():\n    return len(self.items)\n", "inv.py", [])
    text = (ws.root / "inv.py").read_text()
    assert "    def low(self, threshold):\n        return [k" in text
    assert "    def size(self):\n        return len(self.items)" in text
