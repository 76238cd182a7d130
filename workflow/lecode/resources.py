"""Resources the rules declare that depend on the size of the experiment."""

from __future__ import annotations

#: The tables job's peak memory, measured by ``benchmarks/scale.py`` (``max_rss``): 266 MB for
#: 2,000 dialogues (1,000 cases x 2 systems) and 902 MB for 20,000, i.e. about 36 KB a
#: dialogue over about 200 MB of code and libraries.
REPORT_BASE_MB = 200
REPORT_KB_PER_DIALOGUE = 36
#: Never less than this (the fixed part of matplotlib, polars and the bootstrap).
REPORT_MIN_MB = 2000


def report_memory_mb(dialogues: int) -> int:
    """Memory a report job (tables, figures, HTML report) reserves for ``dialogues``
    transcripts (cases x systems) held at once: twice the measured need, at least
    :data:`REPORT_MIN_MB`, so that a run with many cores on a small machine queues report jobs
    instead of exhausting memory."""
    if dialogues < 0:
        raise ValueError("dialogues must be >= 0")
    need = REPORT_BASE_MB + (REPORT_KB_PER_DIALOGUE * dialogues) // 1000
    return max(REPORT_MIN_MB, 2 * need)
