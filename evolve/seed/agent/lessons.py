"""What the agent has learned about its own failures: each `improve` may add one line (newest last).

The solve prompt shows them, so a lesson changes how the agent works. This file is rewritten by
`agent.improve.learn`; keep it a single list of strings.
"""

LESSONS: list[str] = []
