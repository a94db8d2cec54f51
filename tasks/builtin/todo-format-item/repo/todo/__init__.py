"""todo: a command-line to-do list."""
