"""The served-model record: counts per system, and the note under the table."""

from __future__ import annotations

from lecode.agents.base import UsageMeter
from lecode.records import Served, Transcript, Turn
from lecode.report.served import served_by_role, served_note


def transcript(case: str, expert: str, served: Served) -> Transcript:
    return Transcript(
        case_id=case,
        expert=expert,
        strategy="zero_shot",
        client="c",
        turns=(Turn(speaker="client", kind="query", text="q"),),
        stop_reason="advice",
        served={"expert": served},
    )


def test_the_meter_counts_every_reply_by_role() -> None:
    meter = UsageMeter()
    for model, fp in [("ds-v3", "fp1"), ("ds-v3", "fp1"), ("ds-v3.2", "fp2")]:
        meter.add_served("expert", model, fp)
    meter.add_served("client", "qwen", "")
    assert meter.served["expert"] == Served(
        models={"ds-v3": 2, "ds-v3.2": 1}, fingerprints={"fp1": 2, "fp2": 1}
    )
    assert meter.served["client"] == Served(models={"qwen": 1}, fingerprints={"": 1})


def test_counts_sum_per_role_and_the_note_names_what_answered() -> None:
    a = Served(models={"deepseek-chat": 3}, fingerprints={"fp_a": 3})
    b = Served(models={"deepseek-chat": 1, "deepseek-v3.2": 2}, fingerprints={"fp_a": 1, "fp_b": 2})
    by = served_by_role([transcript("1", "ds", a), transcript("2", "ds", b)])
    assert by == {
        "expert": Served(
            models={"deepseek-chat": 4, "deepseek-v3.2": 2}, fingerprints={"fp_a": 4, "fp_b": 2}
        )
    }
    assert served_note("DeepSeek-V3", "deepseek-chat", by["expert"]) == (
        "DeepSeek-V3: configured model id deepseek-chat, replies named deepseek-chat ×4, "
        "deepseek-v3.2 ×2; the system_fingerprint changed within the run: fp_a ×4, fp_b ×2."
    )
    # served as configured with one fingerprint: no note
    assert served_note("GPT", "deepseek-chat", a) is None


def test_a_dated_answer_to_an_alias_is_noted_and_silence_is_not() -> None:
    dated = Served(models={"gpt-4o-2024-08-06": 5}, fingerprints={"fp": 5})
    assert served_note("GPT-4o", "gpt-4o", dated) == (
        "GPT-4o: configured model id gpt-4o, replies named gpt-4o-2024-08-06 ×5."
    )
    # replies that name no model or fingerprint give no note
    assert served_note("M", "m", Served(models={"": 4}, fingerprints={"": 4})) is None
    assert served_note("M", "m", Served(models={"m": 4}, fingerprints={"x": 4})) is None
