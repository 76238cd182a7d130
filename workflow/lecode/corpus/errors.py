"""Bad input at every door of the dataset build ends the step with one line per problem
(file, line or task, field, message) on standard error and in the log, and no traceback."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger("lecode")


def _known() -> tuple[type[BaseException], ...]:
    from lecode.config.base import SettingsError
    from lecode.corpus.annotate import AnnotationError
    from lecode.corpus.inputs import DuplicateDialogueError
    from lecode.corpus.review import ReviewError
    from lecode.corpus.roles_review import RolesFileError
    from lecode.corpus.transcripts import TranscriptError
    from lecode.dataset import DatasetError

    return (
        TranscriptError,
        ReviewError,
        RolesFileError,
        DuplicateDialogueError,
        AnnotationError,
        DatasetError,
        SettingsError,
    )


def problem_lines(exc: BaseException) -> list[str]:
    """Each problem of ``exc`` on a line of its own."""
    items = getattr(exc, "problems", None) or getattr(exc, "violations", None)
    if items:
        return [" ".join(str(p).split("\n")) for p in items]
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].endswith(":"):
        return lines[1:]  # a heading and the problems under it
    return [" ".join(lines)] if lines else [type(exc).__name__]


@contextmanager
def reported(step: str) -> Iterator[None]:
    """Run a step; a known input error exits with status 1 after printing its problems."""
    try:
        yield
    except _known() as exc:
        files = [h for h in logging.getLogger().handlers if isinstance(h, logging.FileHandler)]
        for line in problem_lines(exc):
            print(f"{step}: {line}", file=sys.stderr)  # once: not through the stderr handler
            record = log.makeRecord(
                log.name, logging.ERROR, __file__, 0, "%s: %s", (step, line), None
            )
            for h in files:
                h.handle(record)
        raise SystemExit(1) from None
