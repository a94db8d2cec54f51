"""The words the agent says to the model. Short, because small models read slowly and forget."""

SYSTEM_TEXT = """You are a careful programmer working in a repository. Each reply: one short sentence of
thought, then exactly ONE fenced block. The block types:

```python path/to/file.py
def the_function(...):
    ...complete new code of the function(s)...
```
(replaces those functions in the file; use it to implement or fix a function)

```write path/to/file.py
...the complete new file...
```

```replace path/to/file.py
<<<<<<< SEARCH
exact lines from the file
=======
new lines
>>>>>>> REPLACE
```

```bash
a shell command, e.g. python3 -m pytest -q
```

```done
```
(when the task is solved)

After each edit the checks run and you see the result. Do not explain at length; edit the code."""

SYSTEM_TOOLS = """You are a careful programmer working in a repository. Use the tools to read, edit and
test the code; change the source, not the tests. After each edit the checks run and you see the
result. Call `done` when the task is solved."""

SOLVE = """Task:
{problem}

{files}

Checks: `{check}` -> {baseline}
{lessons}
Make the change now: write the code (one fenced block)."""

IMPROVE = '''You are improving your own source code (a coding agent).

{files}

Checks: `{check}` -> {baseline}

What to improve:
{problem}

Edit the file shown so the agent does better next time, and keep its tests passing. Reply with one
fenced block that redefines what you change, for example:
```python agent/prompts.py
SOLVE = """...the new wording, keeping the {{placeholders}}..."""
```'''

LESSON = '''You are a coding agent. On an earlier task you had this problem:
{problem}

Write one short sentence of advice to yourself that would help next time. Reply with the sentence only.'''

LESSONS_HEADER = "Lessons from earlier tasks:"

NO_EDIT_YET = "You have not changed any file yet. The task is not solved. Write the code now in one fenced block."
CHECKS_FAIL = "The checks still fail:\n{output}\nFix the code, or reply ```done again if you are sure."
EDIT_RESULT = "{result}\nChecks: `{check}` ->\n{output}"
CHECKS_PASS = "\nThe checks pass. If the task is solved, reply ```done; otherwise make the next change."
STUBS_LEFT = "\nNot done yet: still `raise NotImplementedError` in {names}. Write that function's code now."
CHECKS_PASSED_BEFORE = ("\nThe checks passed before your edit too, so they do not show that the task is done. "
                        "Check the task's own example with a ```bash block (python3 -c ...), or reply ```done.")
REPEATED = "You sent the same reply as before; it will not work better this time. Try something different."
