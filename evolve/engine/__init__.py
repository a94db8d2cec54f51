"""The engine: the runner, its state, the jobs it dispatches (evaluation, expansion), executors, progress,
resume."""
