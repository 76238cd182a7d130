"""Cached prompt tokens: read in the three reported shapes, priced, summed, played by the mock."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from lecode.config.models import Price
from lecode.llm.ledger import reported_cached_tokens
from lecode.mock import MockServer
from lecode.mock.server import CACHE_BLOCK, ProviderShape, cached_prefix, usage_payload
from tests.support.mock_llm import KEY_ENV, model_cfg, runtime


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 64}}, 64),
        ({"prompt_tokens": 100, "prompt_cache_hit_tokens": 80, "prompt_cache_miss_tokens": 20}, 80),
        ({"prompt_tokens": 100, "cached_tokens": 10}, 10),
        ({"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 500}}, 100),
        ({"prompt_tokens": 100, "prompt_tokens_details": {"audio_tokens": 0}}, None),
        ({"prompt_tokens": 100}, None),
        (None, None),
        ({"prompt_cache_hit_tokens": True}, None),
    ],
)
def test_cached_tokens_are_read_in_every_reported_shape(
    usage: object, expected: int | None
) -> None:
    assert reported_cached_tokens(usage) == expected


def test_cached_prompt_tokens_are_priced_at_the_cached_price() -> None:
    price = Price(prompt=2.0, completion=8.0, cached_prompt=0.5)
    # 1,000 prompt tokens of which 600 cached, 100 completion tokens:
    # (400 * 2.0 + 600 * 0.5 + 100 * 8.0) / 1000 = (800 + 300 + 800) / 1000
    assert price.cost(1000, 100, cached_prompt=600) == pytest.approx(1.9)
    # no cached price: every prompt token at the full price
    assert Price(prompt=2.0, completion=8.0).cost(1000, 100, cached_prompt=600) == pytest.approx(
        2.8
    )
    # a report above the prompt count is capped at it
    assert price.cost(10, 0, cached_prompt=50) == pytest.approx(0.005)


def test_the_mock_caches_whole_blocks_of_earlier_prompts() -> None:
    seen: set[str] = set()
    first = "甲" * (3 * CACHE_BLOCK + 5)
    assert cached_prefix(seen, first) == 0
    # the same three whole blocks, then other text: three blocks cached
    assert cached_prefix(seen, first[: 3 * CACHE_BLOCK] + "乙" * 40) == 3 * CACHE_BLOCK
    # a change inside the second block: only the first block is cached
    changed = first[:CACHE_BLOCK] + "丙" + first[CACHE_BLOCK + 1 :]
    assert cached_prefix(seen, changed) == CACHE_BLOCK
    assert usage_payload("deepseek", 100, 7, 64) == {
        "prompt_tokens": 100,
        "completion_tokens": 7,
        "total_tokens": 107,
        "prompt_cache_hit_tokens": 64,
        "prompt_cache_miss_tokens": 36,
    }
    assert "prompt_tokens_details" not in usage_payload("none", 1, 1, 0)
    with pytest.raises(ValueError, match="usage shape"):
        ProviderShape(usage="anthropic")


@pytest.fixture
def mock(monkeypatch: pytest.MonkeyPatch) -> Iterator[MockServer]:
    monkeypatch.setenv(KEY_ENV, "sk-test-0123456789abcdef")
    server = MockServer(shape=ProviderShape(usage="deepseek"))
    server.start()
    yield server
    server.stop()


def test_a_growing_dialogue_is_billed_with_its_cached_prefix(
    tmp_path: Path, mock: MockServer
) -> None:
    """Two calls whose prompts share a long prefix, as an expert's turns do: the second reports
    the shared whole blocks as cached (DeepSeek's fields), and the ledger and the cost see it."""
    rt = runtime(tmp_path / "store")
    endpoint = rt.endpoint(
        "m", model_cfg(mock.url, price={"prompt": 1.0, "completion": 2.0, "cached_prompt": 0.1})
    )
    system = {"role": "system", "content": "律" * 100}
    turns = ["问" * 30, "问" * 30 + "答" * 50]

    async def go():
        try:
            out = []
            for t in turns:
                msgs = [system, {"role": "user", "content": t}]
                out.append(
                    await endpoint.complete(msgs, role="expert", purpose="turn", template_hash="t")
                )
            return out
        finally:
            await rt.aclose()

    first, second = asyncio.run(go())
    # prompt texts: 130 and 180 characters; the first 128 (4 whole blocks) are shared
    assert (first.prompt_tokens, first.cached_prompt_tokens) == (130, 0)
    assert (second.prompt_tokens, second.cached_prompt_tokens) == (180, 128)
    assert second.cost == pytest.approx(
        ((180 - 128) * 1.0 + 128 * 0.1 + second.completion_tokens * 2.0) / 1000
    )
    (total,) = rt.ledger.totals().values()
    assert (total.prompt_tokens, total.cached_prompt_tokens) == (310, 128)
    assert second.usage().cached_prompt_tokens == 128
