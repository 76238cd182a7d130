"""Logging of a job into its Snakemake ``log:`` file."""

from __future__ import annotations

import logging
from pathlib import Path


def setup_logging(log_path: str | Path | None) -> None:
    """Send this job's log records to its ``log:`` file (and stderr)."""
    handlers: list[logging.Handler] = [logging.StreamHandler()]
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_path, mode="w", encoding="utf-8"))
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )
