"""SFT training dialogues: labelling of the real dialogues (Direct SFT), the offline question
writer, validation, the rendered chat samples, determinism, and the LLM writer through the
response store (replayable offline)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from lecode.agents.base import UsageMeter
from lecode.agents.lexical_matcher import LexicalMatcher
from lecode.config.base import SettingsError
from lecode.config.experiment import Settings
from lecode.config.sections import LLMSettings
from lecode.dataset import load_cases
from lecode.llm.templates import load_template
from lecode.pipeline import Plan
from lecode.preflight import json_schema
from lecode.records import Case
from lecode.sft import dialogues as dlg
from lecode.sft.build import direct_dialogues
from lecode.sft.questions import (
    TargetQuestion,
    TemplateWriter,
    form_problem,
    group_facts,
    leaks,
    parse_questions,
    validate,
)
from lecode.sft.specs import SFTDataSpec
from lecode.sft.steps.sft_data import run as run_data
from lecode.sft.voice import client_voice, fact_question
from lecode.specs import FileRef, LLMRuntimeSpec, Role
from tests.conftest import raw_case, write_jsonl

REPO = Path(__file__).resolve().parent.parent
SAMPLE_TRAIN = REPO / "data/sample/sample_trainset.jsonl"
ZERO_SHOT = load_template("expert/zero_shot")
ADVISE_ONLY = load_template("expert/advise_only")

LABELLED = [
    ["用户", "我朋友打架被抓了，怎么办？", "[1] Client Initial Query"],
    ["律师", "对方伤得重吗？", "[5] Lawyer Clarifying Question"],
    ["用户", "鉴定是轻伤二级。", "[2] Client Response"],
    ["律师", "也就是说是轻伤二级，对吧", "[6] Lawyer Information Verification"],
    ["用户", "对。", "[2] Client Response"],
    ["律师", "轻伤的话一般可以和解。", "[7] Lawyer Legal Advice"],
    ["用户", "他以前也打过架。", "[3] Client Information Addition"],
    ["律师", "您别太担心。", "[8] Lawyer Emotional Support"],
    ["用户", "好的。", "[2] Client Response"],
    ["律师", "有没有赔偿对方？", "[5] Lawyer Clarifying Question"],
    ["用户", "还没有。", "[2] Client Response"],
    ["律师", "您那边信号不好吗", "[9] Invalid Exchange"],
    ["用户", "能听到。", "[9] Invalid Exchange"],
    ["律师", "建议尽快赔偿取得谅解。", "[7] Lawyer Legal Advice"],
    ["用户", "那要赔多少？", "[4] Client Need Extension"],
    ["律师", "一般按医药费和误工费算。", "[7] Lawyer Legal Advice"],
]


def case_from(tmp_path: Path, **overrides: Any) -> Case:
    (case,) = load_cases(write_jsonl(tmp_path / "c.jsonl", [raw_case("c1", **overrides)]))
    return case


def labelled_case(tmp_path: Path) -> Case:
    return case_from(
        tmp_path,
        dialogue=[u[:2] for u in LABELLED],
        intention_annotation=LABELLED,
        initial_query=LABELLED[0][1],
    )


def sample_cases() -> list[Case]:
    return sorted(load_cases(SAMPLE_TRAIN), key=lambda c: c.id)


# -- Direct SFT ------------------------------------------------------------------------------


def test_direct_labels_follow_the_intents(tmp_path: Path) -> None:
    d = dlg.direct_dialogue(labelled_case(tmp_path))
    assert d is not None
    lawyer = [(t.kind, t.text) for t in d.turns if t.speaker == "lawyer"]
    assert lawyer == [
        ("question", "对方伤得重吗？"),
        ("question", "也就是说是轻伤二级，对吧"),
        ("question", "轻伤的话一般可以和解。"),  # advice before a later question: history
        ("question", "您别太担心。"),  # emotional support: history
        ("question", "有没有赔偿对方？"),
        ("advice", "建议尽快赔偿取得谅解。\n一般按医药费和误工费算。"),
    ]
    targets = [d.turns[i].text for i in d.targets]
    assert targets == [
        "对方伤得重吗？",
        "也就是说是轻伤二级，对吧",
        "有没有赔偿对方？",
        "建议尽快赔偿取得谅解。\n一般按医药费和误工费算。",
    ]
    texts = [t.text for t in d.turns]
    assert "您那边信号不好吗" not in texts and "能听到。" not in texts  # invalid exchange
    assert "那要赔多少？" not in texts  # need extension after the advice started
    assert d.labels == Counter(question=3, context=2, advice=2, dropped=1)
    assert not d.advice_from_suggestion


def test_direct_samples_are_the_zero_shot_prompt_with_markers(tmp_path: Path) -> None:
    d = dlg.direct_dialogue(labelled_case(tmp_path))
    assert d is not None
    out = dlg.samples(d, dlg.expert_templates(), 10)
    assert len(out) == 4
    for messages, forced in out:
        assert [m["role"] for m in messages] == ["system", "user", "assistant"]
        assert not forced
    first, _ = out[0]
    assert first[:2] == ZERO_SHOT.render(
        dialogue="用户：我朋友打架被抓了，怎么办？", asked=0, remaining=10, max_turns=10
    )
    assert first[2]["content"] == "提问：对方伤得重吗？"
    last, _ = out[-1]
    assert last[2]["content"].startswith("建议：建议尽快赔偿")
    history = last[1]["content"]
    assert "律师：轻伤的话一般可以和解。" in history  # history lines carry no marker
    assert "提问" not in history.split("【对话记录】")[1].split("你已经提问")[0]
    assert "你已经提问 5 次" in history  # every lawyer line of the history counts


def test_unlabelled_lawyer_lines_are_questions_by_their_question_mark(tmp_path: Path) -> None:
    case = case_from(
        tmp_path,
        dialogue=[
            ["用户", "被辞退了怎么办？"],
            ["律师", "签合同了吗？"],
            ["用户", "签了。"],
            ["律师", "可以申请劳动仲裁。"],
        ],
        intention_annotation=None,
        initial_query="被辞退了怎么办？",
    )
    d = dlg.direct_dialogue(case)
    assert d is not None
    assert [(d.turns[i].kind, d.turns[i].text) for i in d.targets] == [
        ("question", "签合同了吗？"),
        ("advice", "可以申请劳动仲裁。"),
    ]


def test_a_dialogue_ending_in_a_question_ends_with_the_reference_advice(tmp_path: Path) -> None:
    case = case_from(
        tmp_path,
        dialogue=[["用户", "被辞退了怎么办？"], ["律师", "签合同了吗？"], ["用户", "签了。"]],
        intention_annotation=None,
        initial_query="被辞退了怎么办？",
    )
    d = dlg.direct_dialogue(case)
    assert d is not None and d.advice_from_suggestion
    assert d.turns[-1].text == case.suggestion


def test_the_turn_cap_forces_advice_with_the_advice_only_prompt(tmp_path: Path) -> None:
    d = dlg.direct_dialogue(labelled_case(tmp_path))
    assert d is not None
    capped = dlg.cap(d, 2)
    assert sum(1 for t in capped.turns if t.speaker == "lawyer") == 3
    out = dlg.samples(capped, dlg.expert_templates(), 2)
    assert [m[-1]["content"][:3] for m, _ in out] == ["提问：", "提问：", "建议："]
    messages, forced = out[-1]
    assert forced
    assert messages[0]["content"] == ADVISE_ONLY.system
    assert "律师：轻伤的话" not in messages[1]["content"]  # cut after the second answer


# -- the offline writer ------------------------------------------------------------------------


def test_offline_rules_ask_without_stating_the_fact() -> None:
    assert client_voice("用户没有前科") == "我没有前科。"
    assert fact_question("用户没有前科") == "您有没有前科？"
    assert fact_question("双方因在工地抢活发生冲突，对方三人，用户一方四人") == (
        "双方因为什么发生冲突，对方几人，您一方几人？"
    )
    assert fact_question("伤情鉴定为重伤二级，依据是多发肋骨骨折") == "伤情鉴定是什么，依据是什么？"
    assert fact_question("被害人的肋骨伤是用户表哥踢的") == "被害人的肋骨伤是谁踢的？"
    money = fact_question("用户与表哥两家赔偿对方十二万元")
    assert "多少钱" in money and "十二万" not in money


def test_keyfact_dialogues_from_the_template_writer() -> None:
    writer = TemplateWriter(max_leak=1.0)
    for case in sample_cases()[:10]:
        qs = asyncio.run(writer.write(case, "single", meter=UsageMeter()))
        assert [q.facts for q in qs] == [(i,) for i in range(case.n_facts)]
        d = dlg.keyfact_dialogue(case, qs)
        answers = [t.text for t in d.turns if t.kind == "answer"]
        assert answers == [client_voice(f) for f in case.facts]
        assert all("用户" not in a for a in answers)
        assert d.turns[-1].text == case.suggestion.strip()
        for q in qs:
            assert q.text.endswith("？") and not leaks(q.text, case.facts[q.facts[0]], 1.0)


def test_keyfact_e_groups_partition_the_facts() -> None:
    sizes = []
    for case in sample_cases():
        groups = group_facts(case.facts)
        assert sorted(i for g in groups for i in g) == list(range(case.n_facts))
        assert all(1 <= len(g) <= 3 for g in groups)
        assert all(list(g) == sorted(g) for g in groups)
        sizes += [len(g) for g in groups]
    assert sum(sizes) / len(sizes) > 1.2  # the point of Key-fact-e: fewer questions


# -- validation --------------------------------------------------------------------------------


class NoMatch:
    name = "none"

    async def match(self, case: Case, pairs: Any, *, meter: UsageMeter) -> list[list[int]]:
        return [[] for _ in pairs]


def test_validation_rejects_leaks_bad_form_and_questions_that_elicit_nothing() -> None:
    case = sample_cases()[0]
    lexical = LexicalMatcher("lexical")
    n = case.n_facts
    writer = TemplateWriter(max_leak=1.0)
    good = [TargetQuestion((i,), writer.question(case, (i,))) for i in range(n)]

    def problems(qs: list[TargetQuestion], matcher: Any = lexical) -> list[str]:
        found = asyncio.run(
            validate(case, qs, "single", matcher=matcher, max_leak=1.0, meter=UsageMeter())
        )
        return [p.kind for p in found]

    assert problems(good) == []
    long = max(range(n), key=lambda i: len(case.facts[i]))
    leaking = list(good)
    leaking[long] = TargetQuestion(
        (long,), "是不是" + case.facts[long].replace("用户", "您") + "？"
    )
    assert problems(leaking) == ["leak"]
    assert problems(good[:-1]) == ["structure"]
    unmarked = list(good)
    unmarked[0] = TargetQuestion((0,), "提问：" + good[0].text)
    assert problems(unmarked) == ["form"]
    assert problems(good, NoMatch()) == ["elicitation"] * n
    assert form_problem("把所有情况都告诉我？") == "asks for everything at once"
    assert form_problem("您签合同了") == "does not end with a question mark"
    assert not leaks("您有没有前科？", "用户没有前科", 1.0)  # a yes/no check of a short fact


def test_writer_replies_are_parsed_strictly() -> None:
    qs = parse_questions(
        '{"questions": [{"facts": [1, 2], "question": "b？"}, {"facts": [0], "question": "a？"}]}',
        3,
        "multi",
    )
    assert [q.facts for q in qs] == [(0,), (1, 2)]
    for bad, mode in [
        ('{"questions": [{"fact": 0, "question": "a？"}]}', "single"),  # fact 1 missing
        ('{"questions": [{"facts": [0, 1], "question": "a？"}]}', "single"),
        (
            '{"questions": [{"facts": [0, 0], "question": "a？"}, {"fact": 0, "question": "b？"}]}',
            "multi",
        ),
        (
            '{"questions": [{"fact": 5, "question": "a？"}, {"fact": 1, "question": "b？"}]}',
            "single",
        ),
        ("我来写问题", "single"),
    ]:
        with pytest.raises(ValueError):
            parse_questions(bad, 2, mode)  # type: ignore[arg-type]


# -- the data step -----------------------------------------------------------------------------


def default_plan() -> Plan:
    return Plan(Settings.load(REPO / "params.yaml"))


def test_the_data_step_is_deterministic_chat_jsonl(tmp_path: Path) -> None:
    plan = default_plan()
    for variant in ("direct", "keyfact-e"):
        spec = plan.sft.sft_data_spec(variant)
        a, b = tmp_path / f"{variant}-a", tmp_path / f"{variant}-b"
        stats = run_data(spec, out_dir=str(a))
        run_data(spec, out_dir=str(b))
        for name in ("train.jsonl", "dialogues.jsonl", "stats.json"):
            assert (a / name).read_bytes() == (b / name).read_bytes(), name
        lines = (a / "train.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(lines) == stats["samples"] > 0
        for line in lines:
            messages = json.loads(line)["messages"]
            assert [m["role"] for m in messages] == ["system", "user", "assistant"]
            assert messages[-1]["content"][:3] in ("提问：", "建议：")
        assert stats["question_samples"] + stats["advice_samples"] == stats["samples"]
        assert stats["dialogues"] + stats["rejected"] == stats["cases"] == 45
        assert stats["turns"]["max"] <= stats["max_turns"]
        info = json.loads((a / "dataset_info.json").read_text(encoding="utf-8"))
        (entry,) = info.values()
        assert entry["file_name"] == "train.jsonl" and entry["formatting"] == "sharegpt"


def test_direct_covers_every_sample_dialogue() -> None:
    dialogues, rejected = direct_dialogues(sample_cases())
    assert not rejected and len(dialogues) == 45
    assert all(
        d.turns[-1].kind == "advice" and d.targets[-1] == len(d.turns) - 1 for d in dialogues
    )


def test_sft_settings_are_typed_and_checked() -> None:
    base = Settings.load(REPO / "params.yaml").model_dump(mode="json")
    assert base["sft"]["train"]["lora_r"] == 8 and base["sft"]["writer"] is None
    assert "SFTSettings" in json.dumps(json_schema())
    with pytest.raises(SettingsError, match="sft.train.lora_rank"):
        Settings.parse({**base, "sft": {"train": {"lora_rank": 8}}})
    for writer, message in [("nope", "not defined"), ("lexical", "offline agent")]:
        with pytest.raises(SettingsError, match=rf"sft\.writer: .*{message}"):
            Settings.parse({**base, "sft": {"writer": writer}})  # refused before any plan
    with pytest.raises(SettingsError, match="base_model"):
        default_plan().sft.sft_train_spec("direct")


def test_data_digests_follow_what_decides_the_data() -> None:
    base = Settings.load(REPO / "params.yaml").model_dump(mode="json")
    plan = Plan(Settings.parse(base))
    d = {v: plan.sft.sft_data_spec(v).digest() for v in plan.sft.sft_variants}
    other = Plan(Settings.parse({**base, "sft": {"max_leak": 0.9}}))
    assert other.sft.sft_data_spec("direct").digest() == d["direct"]  # no writer, no leak check
    assert other.sft.sft_data_spec("keyfact").digest() != d["keyfact"]
    trained = Plan(Settings.parse({**base, "sft": {"train": {"base_model": "m", "epochs": 1}}}))
    assert trained.sft.sft_data_spec("keyfact").digest() == d["keyfact"]  # training: not the data
    assert trained.sft.sft_train_spec("keyfact").data == d["keyfact"]


# -- the LLM writer through the response store ---------------------------------------------------


class WriterStub(BaseHTTPRequestHandler):
    """An OpenAI-compatible writer: one question per fact (or per pair of facts). A case whose
    query holds 〔格式〕 first gets prose (re-asked), one with 〔泄露〕 a question restating a
    fact."""

    calls: Counter[str] = Counter()

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        purpose = self.headers.get("X-Lecode-Purpose", "")
        facts = []
        for line in user.split("【关键事实】", 1)[1].splitlines()[1:]:
            if not line.strip():
                break
            idx, text = line.split(": ", 1)
            facts.append((int(idx), text))
        WriterStub.calls[purpose] += 1
        if "〔格式〕" in user and self.headers.get("X-Lecode-Reask") != "1":
            reply = "好的，下面是问题。"
        else:
            size = 1 if purpose == "single" else 2
            qs = []
            for k in range(0, len(facts), size):
                group = facts[k : k + size]
                text = "关于这方面，您能具体说一说吗？"
                if "〔泄露〕" in user:
                    text = "是不是" + group[0][1].replace("用户", "您") + "？"
                qs.append({"facts": [i for i, _ in group], "question": text})
            reply = json.dumps({"questions": qs}, ensure_ascii=False)
        out = json.dumps(
            {
                "id": "x",
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
            },
            ensure_ascii=False,
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


@pytest.fixture
def stub_url() -> Any:
    WriterStub.calls = Counter()
    server = ThreadingHTTPServer(("127.0.0.1", 0), WriterStub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", server
    server.shutdown()


def llm_spec(variant: str, url: str, store: Path, train: Path, *, replay: bool) -> SFTDataSpec:
    from lecode.config.models import Lexical, OpenAIEntry

    writer = OpenAIEntry(
        backend="openai",
        base_url=url,
        model="stub",
        temperature=0.0,
        seed=1,
        max_retries=0,
        timeout=10,
    )
    matcher = Lexical(backend="offline", agent="lexical")
    return SFTDataSpec(
        variant=variant,
        train=FileRef.of(train),
        max_turns=10,
        writer=Role(name="writer-llm", entry=writer),
        matcher=Role(name="lexical", entry=matcher),
        max_leak=1.0,
        code="test",
        runtime=LLMRuntimeSpec(
            llm=LLMSettings(store_dir=str(store), replay=replay), models={"writer-llm": writer}
        ),
    )


def test_llm_writer_goes_through_the_store_and_replays_offline(
    tmp_path: Path, stub_url: Any
) -> None:
    url, server = stub_url
    cases = sample_cases()[:4]
    raw = [json.loads(line) for line in SAMPLE_TRAIN.read_text(encoding="utf-8").splitlines()]
    raw = sorted((r for r in raw if r["id"] in {c.id for c in cases}), key=lambda r: r["id"])
    raw[1]["initial_query"] += "〔格式〕"
    raw[1]["dialogue"][0][1] = raw[1]["initial_query"]
    raw[2]["initial_query"] += "〔泄露〕"
    raw[2]["dialogue"][0][1] = raw[2]["initial_query"]
    for r in raw:
        r.pop("intention_annotation", None)
    train = write_jsonl(tmp_path / "train.jsonl", raw)
    store = tmp_path / "store"
    live = {}
    for variant in ("keyfact", "keyfact-e"):
        stats = run_data(
            llm_spec(variant, url, store, train, replay=False),
            out_dir=str(tmp_path / "live" / variant),
        )
        live[variant] = stats
        assert stats["rejected_by_kind"] == {"leak": 1}, stats
        assert stats["dialogues"] == 3
        assert stats["usage"]["writer"]["calls"] == 5  # 4 cases + one re-ask
    assert WriterStub.calls == Counter(single=5, multi=5)
    e = live["keyfact-e"]
    assert (
        e["facts"]["facts_per_question"] > 1.5
        and e["turns"]["mean"] < live["keyfact"]["turns"]["mean"]
    )
    server.shutdown()  # nothing answers any more: replay must come from the store
    for variant in ("keyfact", "keyfact-e"):
        out = tmp_path / "replay" / variant
        run_data(llm_spec(variant, url, store, train, replay=True), out_dir=str(out))
        for name in ("train.jsonl", "dialogues.jsonl"):
            assert (out / name).read_bytes() == (tmp_path / "live" / variant / name).read_bytes()
    record = json.loads((tmp_path / "live/keyfact/dialogues.jsonl").read_text().splitlines()[0])
    assert record["status"] == "ok" and record["question_facts"][0] == [0]
