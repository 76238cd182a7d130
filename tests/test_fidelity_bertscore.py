"""BERTScore never truncates silently: truncated pairs are flagged, counted and logged."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pytest

from lecode.metrics.advice import PACKAGED_MODEL, BertScorer, BertScores


class _Tensor:
    def __init__(self, values: list[float]) -> None:
        self.values = values

    def tolist(self) -> list[float]:
        return list(self.values)


class _Tokenizer:
    """One token per character plus [CLS] and [SEP]; a 10-token limit."""

    model_max_length = 10

    def encode(self, text: str, **kw: Any) -> list[int]:
        assert kw.get("truncation") is False
        return [0] * (len(text) + 2)


class _Scorer:
    """bert-score's ``BERTScorer`` interface: F1 = 0.5 for every pair."""

    _tokenizer = _Tokenizer()

    def score(self, cands: Sequence[str], refs: Sequence[str], batch_size: int) -> tuple:
        return None, None, _Tensor([0.5] * len(cands))


@pytest.fixture
def bert() -> BertScorer:
    scorer = BertScorer(PACKAGED_MODEL, num_layers=4, batch_size=8, threads=1)
    scorer._scorer = _Scorer()  # the model is not needed to decide truncation
    return scorer


def test_truncated_pairs_are_flagged_counted_and_logged(
    bert: BertScorer, caplog: pytest.LogCaptureFixture
) -> None:
    short, long = "建议起诉。", "建议" * 10  # 7 and 22 tokens against a limit of 10
    with caplog.at_level(logging.WARNING, logger="lecode.metrics.advice"):
        result = bert.score_detailed([short, long, short, ""], [short, short, long, long])
    assert isinstance(result, BertScores)
    assert result.f1 == [0.5, 0.5, 0.5, 0.0]
    assert result.truncated == [False, True, True, False]  # an empty side is never scored
    assert sum(result.truncated) == 2 and bert.last_truncated == 2
    assert "2 of 3 pairs exceed the 10-token input limit" in caplog.text
    assert bert.is_truncated(long) and not bert.is_truncated(short)


def test_score_keeps_its_list_and_reports_the_count(
    bert: BertScorer, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="lecode.metrics.advice"):
        assert bert.score(["建议起诉。"], ["建议起诉。"]) == [0.5]
    assert bert.last_truncated == 0 and not caplog.text
    bert.score(["建议" * 10], ["建议"])
    assert bert.last_truncated == 1


@pytest.mark.slow
def test_real_model_flags_texts_past_512_tokens() -> None:
    bert = BertScorer(PACKAGED_MODEL, num_layers=4, batch_size=4, threads=2)
    advice = "建议您先与公司协商，协商不成再申请劳动仲裁。"
    long_text = "根据劳动合同法的规定，用人单位应当支付经济补偿。" * 60
    result = bert.score_detailed([advice, long_text], [advice, advice])
    assert result.truncated == [False, True]
    assert bert.n_tokens(long_text) > bert.max_tokens == 512
