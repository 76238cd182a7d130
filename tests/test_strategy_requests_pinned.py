"""The requests the paper's strategies send are pinned: every stored response stays valid.

Each strategy plays six synthetic cases against the mock endpoint (with the ``no_marker``
fault on part of the replies, so re-asks are sent too); the digest covers, for every request
stored, what its request key is computed from apart from the endpoint's address (the mock's
port changes from run to run): the messages, the decoding, the template hash and the
replicate. A change in how a strategy renders or re-asks changes the digest.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import pytest

from lecode.dataset import load_cases
from lecode.mock import MockServer
from tests.support.cases import synthetic_cases, write_jsonl
from tests.support.mock_llm import KEY_ENV, TEST_KEY, model_cfg, runtime, simulate
from tests.support.strategy_run import stored_requests

#: (expert strategy, client strategy) -> digest of the requests of its dialogues
PINNED = {
    ("zero_shot", "first_person_dialogue"): "9eefe53a87cffb6a",
    ("zero_shot_json", "first_person_dialogue"): "61dc88d1bae926a5",
    ("few_shot", "first_person_dialogue"): "2c0f5a3c0070478e",
    ("mediq", "first_person_dialogue"): "c127386dd0e4bcd4",
    ("mediq_threshold", "first_person_dialogue"): "9c9de69f6cf82598",
    ("zero_shot", "instruct_dialogue"): "b7bba668f35c101e",
    ("zero_shot", "instruct_question"): "d37c7f117f79e52d",
}


def requests_digest(store: Path) -> str:
    rows = sorted(  # a set: two dialogues racing to the same request may both store it
        {
            json.dumps(
                [r["role"], r["template"], r["replicate"], r["request"]],
                ensure_ascii=False,
                sort_keys=True,
            )
            for r in stored_requests(store)
        }
    )
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]


@pytest.mark.parametrize(("expert", "client"), sorted(PINNED))
def test_the_requests_of_the_paper_strategies_are_unchanged(
    expert: str, client: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, TEST_KEY)
    cases_file = write_jsonl(tmp_path / "cases.jsonl", synthetic_cases(6))
    cases = load_cases(cases_file)
    with MockServer(case_files=[cases_file], faults={"no_marker": 0.3}) as mock:
        rt = runtime(tmp_path / "store")
        try:
            asyncio.run(
                simulate(
                    cases,
                    rt,
                    model_cfg(mock.url),
                    strategy=expert,
                    client_strategy=client,
                    max_turns=4,
                )
            )
        finally:
            rt.close()
    assert requests_digest(tmp_path / "store") == PINNED[(expert, client)]
