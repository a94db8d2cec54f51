"""evolve: a self-modifying code-evolution engine (DGM / HGM line)."""

__version__ = "0.1.0"
