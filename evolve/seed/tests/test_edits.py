"""The edit machinery: reading a reply, merging a python block by syntax tree, a few lines onto the lines
most like them, and a SEARCH/REPLACE at the file's indent."""
import pytest
from agent import prompts
from agent.loop import parse
from agent.tools import ToolError, Workspace

try:
    from agent import repairs
except ImportError:  # the loop runs without agent/repairs.py, and so do these tests
    repairs = None

with_repairs = pytest.mark.skipif(repairs is None, reason="no agent/repairs.py")

TOOLS = '''import subprocess

LIMIT = 4000


def cap(text):
    return text[:LIMIT]


class Shell:
    def __init__(self, root):
        self.root = root

    def run(self, command):
        return subprocess.run(command, shell=True).returncode
'''


@pytest.fixture
def ws(tmp_path):
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "tools.py").write_text(TOOLS)
    (tmp_path / "agent" / "other.py").write_text("def other():\n    return 1\n")
    return Workspace(tmp_path)


def tools(ws):
    return (ws.root / "agent" / "tools.py").read_text()


def test_a_reply_names_one_action_in_its_first_block_at_a_line_start():
    assert parse("Look.\n```bash\nls\n```") == ("bash", {"command": "ls\n"})
    assert parse("```write a.py\nx = 1\n```") == ("write", {"path": "a.py", "content": "x = 1\n"})
    edit = "```replace a.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```"
    assert parse(edit) == ("replace", {"path": "a.py", "old": "x = 1", "new": "x = 2"})
    assert parse("Finished.\n```done\n```") == ("done", {})
    for unreadable in ("Each reply: ```bash or ```done.", "```replace a.py\nno marks\n```", "```sh\nls\n```"):
        with pytest.raises(ToolError) as refused:
            parse(unreadable)
        assert str(refused.value) == prompts.FORMAT  # the reply rules, whatever their wording


@with_repairs
def test_a_python_block_is_code_to_merge_and_a_bare_done_finishes():
    python = ("python", {"path": "a.py", "code": "def f():\n    pass\n"})
    assert parse("```python a.py\ndef f():\n    pass\n```") == python
    assert parse("All of it is done") == ("done", {})
    assert parse("```sh\nls\n```", editing=True) == ("python", {"path": "", "code": "ls\n"})


@with_repairs
def test_a_fence_inside_the_code_does_not_end_the_block():
    code = 'def step(self):\n    return self.query(stop=["\\n```\\n"])\n'
    assert parse(f"```python agent/loop.py\n{code}```\nDone.")[1]["code"] == code


@with_repairs
def test_a_method_sent_as_a_function_replaces_the_method_at_its_indent(ws):
    repairs.merge(ws, "agent/tools.py", "def run(self, command):\n    return 0\n")
    assert "    def run(self, command):\n        return 0\n" in tools(ws)
    assert "subprocess.run(command" not in tools(ws)
    assert "    def __init__(self, root):\n        self.root = root\n" in tools(ws)


@with_repairs
def test_constants_functions_and_imports_merge_into_the_one_file_that_defines_them(ws):
    code = "import re\n\nLIMIT = 10\n\n\ndef cap(text):\n    return re.sub('x', '', text)[:LIMIT]\n"
    repairs.merge(ws, "", code)
    assert tools(ws).startswith("import re\n") and "LIMIT = 10\n" in tools(ws)
    assert tools(ws).count("def cap") == 1
    assert (ws.root / "agent" / "other.py").read_text() == "def other():\n    return 1\n"


@with_repairs
def test_a_class_with_the_target_merges_the_target_and_new_methods_only(ws):
    ws.target = "Shell.run"
    whole_class = ("class Shell:\n    def __init__(self, root):\n        pass\n\n"
                   "    def run(self, command):\n        return 1\n\n"
                   "    def extra(self):\n        return 2\n")
    repairs.merge(ws, "", whole_class)
    assert "        return 1\n" in tools(ws) and "        self.root = root\n" in tools(ws)
    assert tools(ws).endswith("\n\ndef extra(self):\n    return 2\n")


@with_repairs
def test_a_new_function_is_appended_and_an_echo_after_the_code_dropped(ws):
    repairs.merge(ws, "agent/tools.py", "def helper():\n    return 3\nagent/tools.py (12 lines)\n")
    assert tools(ws).endswith("\n\ndef helper():\n    return 3\n") and "(12 lines)" not in tools(ws)


@with_repairs
def test_a_block_that_cannot_be_merged_is_refused_saying_why(ws):
    with pytest.raises(ToolError, match=r"does not parse \(line 2"):
        repairs.merge(ws, "agent/tools.py", "def cap(text):\n    return text[:LIMIT\n")
    with pytest.raises(ToolError, match="path"):
        repairs.merge(ws, "", "def nowhere():\n    pass\n")
    with pytest.raises(ToolError, match="changed nothing"):
        repairs.merge(ws, "", "def other():\n    return 1\n")
    assert tools(ws) == TOOLS


@with_repairs
def test_a_few_lines_replace_the_lines_most_like_them(ws):
    repairs.merge(ws, "", "return subprocess.run(command, shell=True, timeout=9).returncode")
    assert "        return subprocess.run(command, shell=True, timeout=9).returncode\n" in tools(ws)
    assert repairs.replace_similar_lines(ws, "", "completely_unrelated_thing_here(42)") is None
    ws.asked_for_lines = True  # a def line and a body line, asked for lines: each its own line
    repairs.merge(ws, "agent/tools.py", "def cap(text, limit=LIMIT):\n    return text[:limit]\n")
    assert "def cap(text, limit=LIMIT):\n    return text[:limit]\n" in tools(ws)
    compile(tools(ws), "tools.py", "exec")


@with_repairs
def test_a_line_cut_short_is_kept_as_it_was(ws):
    ws.asked_for_lines = True
    repairs.replace_similar_lines(ws, "agent/tools.py", "LIMIT = 8000\ndef cap(te")
    assert "LIMIT = 8000\n" in tools(ws) and "def cap(text):\n" in tools(ws)


def test_search_replace_finds_lines_at_another_indent_and_moves_the_new_ones_there(ws):
    unindented = "def run(self, command):\n    return subprocess.run(command, shell=True).returncode"
    ws.replace("agent/tools.py", unindented, "def run(self, command):\n    return 0")
    assert "    def run(self, command):\n        return 0\n" in tools(ws)
    with pytest.raises(ToolError, match="occurs 0 times"):
        ws.replace("agent/tools.py", "return nothing", "x")


def test_the_prompts_ask_for_what_the_parser_reads():
    assert "```bash" in prompts.SYSTEM and "```replace PATH" in prompts.SYSTEM and "```done" in prompts.SYSTEM
    assert "python block" in prompts.HINT and "python block" in prompts.NUDGE and "fail" in prompts.NOT_YET
