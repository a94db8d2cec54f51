import pytest

from evolve.archive.edits import EditKind, code_edit_rate, edit_kind, file_edit_kind, tree_edit_kind

PROMPTS = b'''"""The words."""

SYSTEM = """You solve tasks."""  # the system prompt
FORMAT = "Reply with one block."
'''
LOOP = b'''def step(reply):
    """One step."""
    if reply:
        return reply.strip()
    return None
'''

AGENT = b"\n\nclass Agent:\n    def run(self):\n        return self.solve_task()\n"


@pytest.mark.parametrize(
    ("before", "after", "kind"),
    [
        (PROMPTS, PROMPTS, EditKind.NONE),
        (PROMPTS, PROMPTS.replace(b"# the system prompt", b"# changed comment\n\n"), EditKind.COSMETIC),
        (LOOP, LOOP.replace(b'"""One step."""', b'"""One step of the loop, reworded."""'), EditKind.COSMETIC),
        # the old seed's lesson
        (PROMPTS, PROMPTS + b'\nSYSTEM += "\\nLesson: add more test cases."\n', EditKind.LESSON),
        (PROMPTS, PROMPTS.replace(b"one block", b"exactly one fenced block"), EditKind.PROMPT),
        # the old seed
        (b"LESSONS: list[str] = []\n", b'LESSONS: list[str] = ["Read the tests first."]\n', EditKind.PROMPT),
        (PROMPTS, PROMPTS + b'HINT = "Read the tests " + "first."\n', EditKind.PROMPT),
        (LOOP, LOOP.replace(b"reply.strip()", b"reply.strip().lower()"), EditKind.CODE),
        (LOOP.replace(b"None", b'"give up"'), LOOP.replace(b"None", b'"stop here"'), EditKind.PROMPT),
        (LOOP, LOOP.replace(b"return None", b'return "give up"'), EditKind.CODE),  # None is not text
        # a string that reads as a name is logic: a key, an encoding, a suffix; a word with its stop is text
        (b'CODE = args["code"]\n', b'CODE = args["source"]\n', EditKind.CODE),
        (b'x = p.read_text("utf-8")\n', b'x = p.read_text("utf-16-le")\n', EditKind.CODE),
        (b'x = p.removesuffix(".py")\n', b"x = p.removesuffix('.txt')\n", EditKind.CODE),
        (b'say("Continue.")\n', b'say("Stop.")\n', EditKind.PROMPT),
        (b'say("Go on, please")\n', b'say("")\n', EditKind.PROMPT),
        (LOOP, LOOP + b'\nSTEPS = len("abc")\n', EditKind.CODE),  # text into a call is logic
        (LOOP, LOOP.replace(b"def step", b"def step(", 1), EditKind.CODE),  # no longer parses
        (None, LOOP, EditKind.CODE),
        # what the 1.5B added for Agent.run (the twelfth selfrepair run): a top-level function nothing calls
        (LOOP, LOOP + b'\n\ndef solve_task(self, task):\n    return "solved"\n', EditKind.COSMETIC),
        (LOOP, LOOP + b"\n\ndef helper(x):\n    return x\n\n\nclass Old:\n    pass\n", EditKind.COSMETIC),
        (
            LOOP,
            LOOP.replace(b"reply.strip()", b"helper(reply)") + b"\n\ndef helper(x):\n    return x\n",
            EditKind.CODE,
        ),
        # an attribute: a use
        (LOOP + AGENT, LOOP + AGENT + b"\n\ndef solve_task(self):\n    return 1\n", EditKind.CODE),
        (LOOP, LOOP + b"\n\n@register\ndef hook():\n    pass\n", EditKind.CODE),  # a decorator may use it
        (LOOP, LOOP + b'\n\ndef test_step():\n    assert step("a ")\n', EditKind.CODE),  # pytest collects it
        (
            LOOP,
            LOOP + b"\n\nclass Plugin(Base):\n    pass\n",
            EditKind.CODE,
        ),  # a registry may find a subclass
        (LOOP, LOOP + b'\n\ndef ping():\n    return 1\n\n\nDISPATCH = {"ping": ping}\n', EditKind.CODE),
        (LOOP, None, EditKind.CODE),
    ],
)
def test_file_edit_kinds(before, after, kind):
    assert file_edit_kind("agent/x.py", before, after) == kind


def test_a_changed_file_that_is_not_python_is_code_unless_only_its_whitespace_changed():
    assert file_edit_kind("tests/data.json", b"{}", b"[]") == EditKind.CODE
    assert file_edit_kind("README.md", b"a", b"a") == EditKind.NONE
    assert file_edit_kind("tests/data.json", None, b"{}") == EditKind.CODE
    # What a quickstart child wrote: an empty file named after the prompt's placeholder.
    assert file_edit_kind("path/to/file.py with the whole new functions.", None, b"\n") == EditKind.COSMETIC
    assert file_edit_kind("README.md", b"a b\n", b"a  b\n\n") == EditKind.COSMETIC
    assert file_edit_kind("README.md", b"a b\n", b"ab\n") == EditKind.CODE


def test_a_node_takes_the_strongest_kind_over_its_files(run, code):
    root = run.add_node(code({"agent/prompts.py": PROMPTS.decode(), "agent/loop.py": LOOP.decode()}))
    lesson = run.add_node(
        code(
            {
                "agent/prompts.py": PROMPTS.decode() + 'SYSTEM += "Lesson: x"\n',
                "agent/loop.py": LOOP.decode() + "# note\n",
            }
        ),
        parent=root.id,
        origin="self_modify",
    )
    edit = run.add_node(
        code(
            {
                "agent/prompts.py": PROMPTS.decode(),
                "agent/loop.py": LOOP.decode().replace("strip", "lstrip"),
                "agent/new.py": "X = 1\n",
            }
        ),
        parent=lesson.id,
        origin="self_modify",
    )
    same = run.add_node(
        code(
            {
                "agent/prompts.py": PROMPTS.decode(),
                "agent/loop.py": LOOP.decode().replace("strip", "lstrip"),
                "agent/new.py": "X = 1\n",
            }
        ),
        parent=edit.id,
        origin="self_modify",
    )
    assert [edit_kind(run, n.id) for n in (root, lesson, edit, same)] == [
        EditKind.NONE,
        EditKind.LESSON,
        EditKind.CODE,
        EditKind.NONE,
    ]
    assert str(code_edit_rate(run)) == "1/3 (0.33)"  # `same` changed nothing: an expansion, not a code edit


def test_a_lesson_beside_a_reworded_prompt_is_prompt_text_and_dirs_compare_as_nodes(tmp_path):
    reworded = PROMPTS.replace(b"one block", b"two blocks") + b'SYSTEM += "Lesson: x"\n'
    assert file_edit_kind("agent/prompts.py", PROMPTS, reworded) == EditKind.PROMPT
    parent, child = tmp_path / "parent", tmp_path / "child"
    for root, loop in ((parent, LOOP), (child, LOOP.replace(b"strip", b"lstrip"))):
        (root / "agent" / "__pycache__").mkdir(parents=True)
        (root / "agent" / "loop.py").write_bytes(loop)
        (root / "agent" / "__pycache__" / "loop.pyc").write_bytes(loop[:5])
    assert tree_edit_kind(parent, child) == EditKind.CODE
    assert tree_edit_kind(parent, parent) == EditKind.NONE
    (child / "agent" / "loop.py").write_bytes(LOOP + b"\n\n# a comment\n")
    assert tree_edit_kind(parent, child) == EditKind.COSMETIC


@pytest.mark.parametrize("bundle", ["quickstart-embedded", "humaneval-cpu"])
def test_the_kinds_of_every_node_at_once_are_each_nodes_kind(bundle, tmp_path):
    from pathlib import Path

    from evolve.archive import import_bundle
    from evolve.archive.edits import edit_kinds

    published = Path(__file__).parents[3] / "archive" / "published" / f"{bundle}.evolve.tar.gz"
    with import_bundle(published, tmp_path / "run") as run:
        assert edit_kinds(run, run.nodes()) == {n.id: edit_kind(run, n.id) for n in run.nodes()}


def test_the_kinds_at_once_see_code_prompt_cosmetic_and_unchanged_children(run, code):
    from evolve.archive.edits import edit_kinds

    root = run.add_node(code({"agent.py": 'PROMPT = "a"\ndef f():\n    return 1\n'}))
    made = {
        "code": run.add_node(code({"agent.py": 'PROMPT = "a"\ndef f():\n    return 2\n'}), parent=root.id),
        "prompt": run.add_node(code({"agent.py": 'PROMPT = "b"\ndef f():\n    return 1\n'}), parent=root.id),
        "cosmetic": run.add_node(
            code({"agent.py": 'PROMPT = "a"\n\n\ndef f():\n    return 1  # one\n'}), parent=root.id
        ),
        "none": run.add_node(code({"agent.py": 'PROMPT = "a"\ndef f():\n    return 1\n'}), parent=root.id),
    }
    kinds = edit_kinds(run, run.nodes())
    assert kinds[root.id] == "none" and {kind: kinds[n.id] for kind, n in made.items()} == {
        k: k for k in made
    }


def test_agent_code_nested_too_deep_to_dump_is_a_code_edit_not_a_crash():
    """A candidate's file that parses but is too deep to unparse (900 chained additions) is read as code,
    as a file that does not parse is; `status` and the candidates' filter go on."""
    deep = b"X = " + b"1 + " * 900 + b"1\n"
    assert file_edit_kind("agent/a.py", b"X = 1\n", deep) == EditKind.CODE
    assert file_edit_kind("agent/a.py", b"X = 1\n", b"X = 1\x00\n") == EditKind.CODE
