import pytest
from agent.actions import Action, FormatError, parse_text, parse_tool_call
from agent.model import ToolCall


def test_bash_block_with_thought_around_it():
    assert parse_text("Let me run the tests.\n```bash\npython3 -m pytest -q\n```\nok") == Action(
        "bash", text="python3 -m pytest -q")


def test_missing_closing_fence_is_tolerated():
    assert parse_text("```sh\nls -la\n").text == "ls -la"


def test_write_block_keeps_the_content():
    action = parse_text("```write pkg/mod.py\nx = 1\ny = 2\n```")
    assert (action.kind, action.path, action.text) == ("write", "pkg/mod.py", "x = 1\ny = 2\n")


def test_write_without_path_tells_what_to_do():
    with pytest.raises(FormatError, match="path after the fence"):
        parse_text("```write\nx = 1\n```")


def test_replace_block_with_loose_markers():
    text = "```replace a.py\n<<<<<<<< SEARCH\nreturn a - b\n=========\nreturn a + b\n>>>>>>> REPLACE\n```"
    action = parse_text(text)
    assert (action.kind, action.path, action.old, action.new) == ("replace", "a.py", "return a - b", "return a + b")


def test_replace_without_markers_is_a_format_error():
    with pytest.raises(FormatError, match="marker"):
        parse_text("```replace a.py\nreturn a + b\n```")


def test_bare_python_block_and_file_comment():
    assert parse_text("```python\ndef f():\n    return 1\n```") == Action("python", text="def f():\n    return 1\n")
    assert parse_text("```python\n# file: m/x.py\nX = 1\n```").path == "m/x.py"
    assert parse_text("```python m/y.py\nX = 1\n```").path == "m/y.py"


def test_done_block_and_plain_done():
    assert parse_text("```done\n```").kind == "done"
    assert parse_text("All fixed. DONE").kind == "done"


def test_no_block_explains_the_protocol():
    with pytest.raises(FormatError, match="no fenced block"):
        parse_text("I think the bug is in line 3.")


def test_unknown_block_type():
    with pytest.raises(FormatError, match="rust"):
        parse_text("```rust\nfn main() {}\n```")


def test_tool_call_arguments_tolerate_fences_and_control_characters():
    call = ToolCall("c1", "write_file", '```json\n{"path": "a.py", "content": "x = 1\n"}\n```')
    assert parse_tool_call(call) == Action("write", path="a.py", text="x = 1\n", call_id="c1")


def test_malformed_tool_json_says_where():
    with pytest.raises(FormatError, match="not valid JSON"):
        parse_tool_call(ToolCall("c1", "bash", '{"command": "ls"'))


def test_unknown_tool():
    with pytest.raises(FormatError, match="Unknown tool"):
        parse_tool_call(ToolCall("c1", "browse", "{}"))


def test_replies_cut_at_the_closing_fence_still_parse():
    # the text protocol asks the server to stop at "\n```\n", so the closing fence is missing
    assert parse_text("Fix it.\n```python calc.py\ndef add(a, b):\n    return a + b").path == "calc.py"
    assert parse_text("```done").kind == "done"
    assert parse_text("```bash\nls").text == "ls"
