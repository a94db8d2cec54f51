"""`python -m evolve` is the `evolve` command."""

from evolve.cli import main

main()
