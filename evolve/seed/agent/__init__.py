"""The seed coding agent: a step loop over a model reached through the evolve gateway.

Standard library only. Entry points: `python -m agent solve ...` and `python -m agent improve ...`.
Everything in this package may be edited by the agent itself.
"""
