"""lecode: a reproducible evaluation workflow for interactive legal consultation (LeCoDe)."""

__version__ = "0.1.0"
