"""A bare coding agent: one loop, a shell and a file editor."""
