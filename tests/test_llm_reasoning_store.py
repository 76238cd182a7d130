"""A reasoning model's separate reasoning is stored raw and its tokens counted, once."""

from __future__ import annotations

import json

from lecode.llm.endpoint import parse_completion
from lecode.llm.store import StoredResponse


def _body(**message: object) -> str:
    usage = {
        "prompt_tokens": 10,
        "completion_tokens": 50,
        "completion_tokens_details": {"reasoning_tokens": 42},
    }
    return json.dumps(
        {"model": "deepseek-reasoner", "choices": [{"message": message}], "usage": usage}
    )


def test_reasoning_content_is_kept_raw_and_the_reported_count_read() -> None:
    r = parse_completion(_body(content="提问：对方是否签了合同？", reasoning_content="先想想……"))
    assert r.text == "提问：对方是否签了合同？"
    assert r.reasoning == "先想想……"
    assert r.reasoning_tokens == 42
    again = StoredResponse.from_dict(r.as_dict())
    assert again == r


def test_responses_without_reasoning_are_stored_as_before() -> None:
    r = parse_completion(
        json.dumps({"choices": [{"message": {"content": "建议：起诉。"}}], "usage": {}})
    )
    assert set(r.as_dict()) == {
        "text",
        "model",
        "system_fingerprint",
        "finish_reason",
        "prompt_tokens",
        "completion_tokens",
    }
