"""The engine's error hierarchy: user-facing failures the CLI prints as one line."""


class EvolveError(Exception):
    """A failure the user can act on (bad input, missing run); the CLI prints it as one line."""
