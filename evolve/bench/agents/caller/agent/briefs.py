"""Everything the agent says to the model."""

ROLE = ("You are a careful software engineer with tools. Inspect the files you need, make the change with "
        "write_file or edit_file, run the tests with bash to confirm it works, then call finish.")
TASK = "Work tree: {tree}\n\nFiles:\n{listing}\n\nThe task:\n{statement}"
SELF = ("The work tree is your own source code. Its tests (tests/) must still pass after your change: "
        "run `python -m pytest -q tests`.\n\nFiles:\n{listing}\n\nWhat to change:\n{statement}")
NO_CALL = "Use a tool, or call finish if the work is done."
ELIDED = "(older output left out to save room)"
TRIAGE = ("You review a coding agent's failed runs. From the material below, name the single most harmful "
          "problem and write concrete instructions for changing the agent's code to fix it.\n\n{material}")
