"""Memory the report rules reserve grows with the experiment (hand-computed)."""

from __future__ import annotations

import pytest

from lecode.resources import report_memory_mb


@pytest.mark.parametrize(
    ("dialogues", "mb"),
    [
        (0, 2000),  # the floor
        (20_000, 2000),  # 2 * (200 + 720) = 1840: still the floor
        (40_000, 3280),  # 2 * (200 + 1440)
        (100_000, 7600),  # 2 * (200 + 3600)
    ],
)
def test_report_memory_follows_the_measured_slope(dialogues: int, mb: int) -> None:
    assert report_memory_mb(dialogues) == mb


def test_negative_counts_are_refused() -> None:
    with pytest.raises(ValueError):
        report_memory_mb(-1)
