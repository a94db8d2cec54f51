"""The seed coding agent: `python -m agent solve|improve`. Standard library only; all of it may change."""
