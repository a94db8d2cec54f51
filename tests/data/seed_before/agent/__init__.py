"""The seed agent: `python -m agent solve|improve|diagnose`. Standard library only; all of it may change."""
