"""What enters a digest: every field except those marked runtime-only, at any depth."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from lecode.config.base import identity, runtime_only_fields
from lecode.config.models import OpenAIEntry, Price
from lecode.config.sections import BertScoreSettings, LLMSettings, SFTTrainSettings
from lecode.evaluation.specs import SimulateSpec
from lecode.fingerprint import closure
from lecode.specs import LLMRuntimeSpec, Role, stable_hash

ENTRY = OpenAIEntry(backend="openai", base_url="http://127.0.0.1:9/v1", model="m")


def _simulate(**expert: Any) -> SimulateSpec:
    role = Role(name="e", entry=ENTRY.model_copy(update=expert))
    return SimulateSpec(
        expert=role,
        strategy="zero_shot",
        client=role,
        client_strategy="first_person_dialogue",
        max_turns=10,
        code="c",
    )


BASE = _simulate()
CASES: list[tuple[str, BaseModel, bool]] = [
    # (what changed, the changed spec, whether the digest must change)
    ("entry label", _simulate(label="X {y}"), False),
    ("entry group", _simulate(group="G"), False),
    ("entry paper_label", _simulate(paper_label="P"), False),
    ("entry api_key_env", _simulate(api_key_env="KEY"), False),
    ("entry timeout", _simulate(timeout=5.0), False),
    ("entry max_retries", _simulate(max_retries=0), False),
    ("entry concurrency", _simulate(concurrency=64), False),
    ("entry price", _simulate(price=Price(prompt=1.0)), False),
    ("spec fail_on_error", BASE.model_copy(update={"fail_on_error": 0.5}), False),
    (
        "spec runtime",
        BASE.model_copy(update={"runtime": LLMRuntimeSpec(llm=LLMSettings(store_dir="x"))}),
        False,
    ),
    ("entry temperature", _simulate(temperature=0.7), True),
    ("entry seed", _simulate(seed=3), True),
    ("entry model", _simulate(model="other"), True),
    ("entry json_mode", _simulate(json_mode=True), True),
    ("entry threshold_confidence", _simulate(threshold_confidence=0.5), True),
    ("spec max_turns", BASE.model_copy(update={"max_turns": 3}), True),
    ("spec replicate", BASE.model_copy(update={"replicate": 1}), True),
]


@pytest.mark.parametrize(("what", "spec", "changes"), CASES, ids=[c[0] for c in CASES])
def test_a_digest_ignores_exactly_the_runtime_only_fields(
    what: str, spec: SimulateSpec, changes: bool
) -> None:
    assert (spec.digest() != BASE.digest()) is changes, what


def test_the_marked_fields_are_the_runtime_only_settings() -> None:
    assert runtime_only_fields(OpenAIEntry) == {
        "label",
        "group",
        "paper_label",
        "api_key_env",
        "timeout",
        "max_retries",
        "concurrency",
        "price",
    }
    assert runtime_only_fields(BertScoreSettings) == {"threads", "mem_mb"}
    assert runtime_only_fields(SFTTrainSettings) == {"logging_steps", "publish_dir", "enabled"}
    assert runtime_only_fields(SimulateSpec) == {"fail_on_error", "runtime"}


def test_nested_sections_drop_their_runtime_only_fields() -> None:
    b = BertScoreSettings(model="m", num_layers=4)
    assert identity(b) == {"model": "m", "num_layers": 4, "batch_size": 32, "enabled": True}
    assert identity(b.model_copy(update={"threads": 8})) == identity(b)
    assert stable_hash(identity(b)) != stable_hash(identity(b.model_copy(update={"num_layers": 5})))


def test_steps_do_not_import_the_checks() -> None:
    from lecode.fingerprint import steps

    assert "lecode.config.models" in closure("lecode.evaluation.steps.simulate")
    # the planning code (the composed plan, every study's plan, roles and the job index) is no
    # part of any step: a step imports only the skeleton it is declared with (lecode.plan.jobs)
    checks = {"lecode.preflight", "lecode.config.experiment", "lecode.pipeline"}
    checks |= {"lecode.plan.roles", "lecode.plan.hashes", "lecode.plan.index"}
    assert len(steps()) >= 20
    for step, module in steps().items():
        found = set(closure(module))
        assert "lecode.plan.jobs" in found, step
        assert not checks & found, (step, checks & found)
        assert not [m for m in found if m.endswith(".plan") and m != "lecode.plan"], step
    # strategy names are checked with the experiment: a job digests only the strategy it runs
    assert "lecode.strategies" not in closure("lecode.evaluation.steps.shard_dataset")


def test_the_endpoint_spec_has_no_defaults_of_its_own() -> None:
    from lecode.llm.spec import ModelSpec

    raw = {"backend": "openai", "base_url": "http://x/v1/", "model": "m"}
    spec = ModelSpec.from_config("m", raw)
    assert spec == ModelSpec.of("m", OpenAIEntry.model_validate(raw))
    assert (spec.concurrency, spec.timeout, spec.max_retries) == (4, 120.0, 6)
    assert (spec.threshold_confidence, spec.json_mode, spec.base_url) == (0.8, False, "http://x/v1")
    changed = ModelSpec.of("m", OpenAIEntry.model_validate({**raw, "concurrency": 2}))
    assert changed.concurrency == 2 and changed.price == Price()
