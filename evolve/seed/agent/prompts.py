"""Everything the agent says to the model, in one place. Short: small models read slowly and forget."""

SYSTEM = """You are a careful programmer working in a repository. Each reply: one short sentence of
thought, then exactly ONE fenced block: ```bash (a shell command), ```write PATH (then the whole new
file), ```replace PATH (then a line <<<<<<< SEARCH, the exact old lines, a line =======, the new lines and
a line >>>>>>> REPLACE), or ```done when the task is solved. After each edit the checks run and you see the result."""
EDIT = """You are a careful programmer improving your own code. Write the whole new version of the one function,
method or constant to change (or of the lines asked for), in one Python code block. It replaces the old; tests run."""

SOLVE = "Task:\n{problem}\n\n{files}\n\nMake the change now."
LISTING = "Files in the repository:\n{names}{sources}"
CHECK = "Checks: `{check}` ->\n{output}"
FILE = "\n\n--- {name} ---\n{text}"
IMPROVE = """You are improving your own source code: you are the coding agent below.

Files:
{names}{sources}

What to improve:
{problem}

Write the whole new version of {what} now, in one Python code block."""
LINES = "the lines that decide it (only those lines, changed)"  # short: it fits a reply cut short
DIAGNOSE = """You improve a coding agent. Below: its failure patterns, counted, its map, then how it failed.
Choose one change to its code that fixes most failures: a line Target: FILE:NAME from the map, the change.

{patterns}

The agent's map:
{map}{material}"""
FORMAT = "Reply with exactly one fenced code block, its three backticks at the start of a line."

# Sent only while agent/repairs.py is there: they steer a weak model towards the edits repairs.py reads.
HINT = "\nTo change whole functions you may also send a python block, the file's path on its first line."
NUDGE = "\n\nEdit the code now: send the whole fixed function in a python block."
NOT_YET = "The checks still fail, so the task is not solved yet. Write or fix the code now."
