"""The steps of ``scripts/gpu_sft_check.sh``: data, a small random model, a few LoRA training
steps, consultations against the served adapter, timings. Each step is a subcommand:

    python -m lecode.sft.gpucheck data --out DIR            # Key-fact-e samples (offline writer)
    python -m lecode.sft.gpucheck model --data F --out DIR  # random Qwen2 + trained tokenizer
    python -m lecode.sft.gpucheck train --base DIR --data F --out DIR --steps N
    python -m lecode.sft.gpucheck consult --base-url URL --model NAME --cases N
    python -m lecode.sft.gpucheck local --base DIR --adapter DIR   # PEFT generation (dry run)

Every step prints one line ``@gpucheck <JSON>`` (the script collects them into its summary).
The data step uses the workflow's builder when its dependencies (jieba) are installed, else a
stdlib rendering of the sample's lawyer questions (the GPU environment is vLLM's, not the
workflow's). The consultations use the zero-shot expert prompt, parse 提问/建议 replies, and
answer with the sample case's facts that share the most characters with a question.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "data/sample/sample_trainset.jsonl"
#: Marks the result lines among the libraries' own output.
PREFIX = "@gpucheck "


def _emit(step: str, **data: Any) -> dict[str, Any]:
    line = {"step": step, **data}
    print(PREFIX + json.dumps(line, ensure_ascii=False), flush=True)
    return line


def _raw_cases() -> list[dict[str, Any]]:
    rows = [json.loads(x) for x in SAMPLE.read_text(encoding="utf-8").splitlines() if x.strip()]
    return sorted(rows, key=lambda r: r["id"])


def make_data(out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    try:
        from lecode.config.experiment import Settings
        from lecode.plan.roles import Roles
        from lecode.sft.plan import SFTPlan
        from lecode.sft.steps.sft_data import run

        settings = Settings.load(ROOT / "params.yaml")
        spec = SFTPlan(settings, Roles(settings)).sft_data_spec("keyfact-e")
        stats = run(spec, out_dir=str(out))
        _emit("data", builder="lecode.sft", samples=stats["samples"], file=str(out / "train.jsonl"))
        return out / "train.jsonl"
    except ImportError as exc:
        from lecode.llm.render import format_dialogue
        from lecode.llm.templates import load_template
        from lecode.records import Turn

        template = load_template("expert/zero_shot")
        lines = []
        for case in _raw_cases():
            turns = [Turn(speaker="client", kind="query", text=case["initial_query"])]
            for speaker, text in (u[:2] for u in case["dialogue"][1:]):
                if speaker == "律师":
                    messages = template.render(
                        dialogue=format_dialogue(turns),
                        asked=len(turns) // 2,
                        remaining=max(0, 10 - len(turns) // 2),
                        max_turns=10,
                    )
                    messages.append({"role": "assistant", "content": "提问：" + text})
                    lines.append(json.dumps({"messages": messages}, ensure_ascii=False))
                    turns.append(Turn(speaker="lawyer", kind="question", text=text))
                else:
                    turns.append(Turn(speaker="client", kind="answer", text=text))
        (out / "train.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        _emit("data", builder=f"stdlib ({exc})", samples=len(lines), file=str(out / "train.jsonl"))
        return out / "train.jsonl"


def make_model(data: Path, out: Path, *, hidden: int, layers: int) -> Path:
    from lecode.sft.tiny import tiny_model

    texts = [
        m["content"]
        for line in data.read_text(encoding="utf-8").splitlines()
        for m in json.loads(line)["messages"]
    ]
    started = time.time()
    path = tiny_model(
        out,
        texts,
        hidden=hidden,
        layers=layers,
        heads=max(1, hidden // 64),
        kv_heads=1,
        intermediate=hidden * 2,
    )
    _emit(
        "model",
        path=str(path),
        hidden=hidden,
        layers=layers,
        seconds=round(time.time() - started, 1),
    )
    return path


def train_steps(base: Path, data: Path, out: Path, *, steps: int, batch: int, accum: int) -> None:
    from lecode.config.sections import SFTTrainSettings
    from lecode.sft.specs import SFTTrainSpec
    from lecode.sft.train import train

    hyper = SFTTrainSettings(
        base_model=str(base),
        devices=1,
        per_device_batch_size=batch,
        gradient_accumulation_steps=accum,
        max_steps=steps,
        learning_rate=1e-4,
        max_length=2048,
    )
    spec = SFTTrainSpec(
        variant="keyfact-e", data="gpucheck", base_model=str(base), hyper=hyper, code="gpucheck"
    )
    prov = train(spec, data=str(data), out_dir=str(out))
    _emit(
        "train",
        steps=prov["global_steps"],
        seconds=prov["seconds"],
        seconds_per_step=prov["seconds_per_step"],
        final_loss=prov["final_loss"],
        device=prov["device"],
        bf16=prov["bf16"],
        adapter=str(out / "adapter"),
    )


def _post(base_url: str, body: dict[str, Any], timeout: float = 120.0) -> dict[str, Any]:
    req = urllib.request.Request(
        base_url.rstrip("/") + "/chat/completions",
        data=json.dumps(body, ensure_ascii=False).encode("utf-8"),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def _answer(question: str, facts: list[str]) -> str:
    scored = sorted(((len(set(question) & set(f)), f) for f in facts), reverse=True)
    return scored[0][1] if scored and scored[0][0] >= 3 else "不知道"


def consult(base_url: str, model: str, *, cases: int, max_turns: int, max_tokens: int) -> None:
    from lecode.llm.parsing import ReplyFormatError, parse_marked_reply
    from lecode.llm.render import count_questions, turn_values
    from lecode.llm.templates import load_template
    from lecode.records import Turn

    turn_t, advise_t = load_template("expert/zero_shot"), load_template("expert/advise_only")
    tokens = 0
    started = time.time()
    transcripts = []
    for case in _raw_cases()[:cases]:
        facts = list(case["key_fact_dict_hard_version"]["原子事实"].values())
        history = [Turn(speaker="client", kind="query", text=case["initial_query"])]
        stop = "max_turns"
        while True:
            asked = count_questions(history)
            values = turn_values(history, max_turns)
            template = advise_t if asked >= max_turns else turn_t
            reply = _post(
                base_url,
                {
                    "model": model,
                    "messages": template.render(**values),
                    "max_tokens": max_tokens,
                    "temperature": 0.7,
                    "seed": 0,
                },
            )
            tokens += int(reply.get("usage", {}).get("completion_tokens") or 0)
            text = reply["choices"][0]["message"]["content"] or ""
            try:
                move = parse_marked_reply(text)
                kind, content = move.kind, move.text
            except ReplyFormatError:  # a random model rarely follows the format
                kind, content = ("advice" if asked >= max_turns else "question"), text.strip()
            if kind == "advice" or asked >= max_turns:
                history.append(Turn(speaker="lawyer", kind="advice", text=content))
                stop = "advice" if asked < max_turns else stop
                break
            history.append(Turn(speaker="lawyer", kind="question", text=content))
            history.append(Turn(speaker="client", kind="answer", text=_answer(content, facts)))
        transcripts.append({"case_id": case["id"], "turns": len(history), "stop": stop})
    seconds = time.time() - started
    _emit(
        "consult",
        consultations=len(transcripts),
        completion_tokens=tokens,
        seconds=round(seconds, 2),
        tokens_per_s=round(tokens / seconds, 1) if seconds else 0,
        transcripts=transcripts,
    )


def local(base: Path, adapter: Path, data: Path, *, max_new_tokens: int) -> None:
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(base))
    model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(str(base)), str(adapter))
    model.eval()
    prompt = json.loads(data.read_text(encoding="utf-8").splitlines()[0])["messages"][:-1]
    encoded: Any = tok.apply_chat_template(prompt, add_generation_prompt=True, return_tensors="pt")
    ids: torch.Tensor = encoded if isinstance(encoded, torch.Tensor) else encoded["input_ids"]
    started = time.time()
    with torch.no_grad():
        out = model.generate(
            ids, max_new_tokens=max_new_tokens, min_new_tokens=max_new_tokens, do_sample=False
        )
    seconds = time.time() - started
    new = int(out.shape[1] - ids.shape[1])
    _emit(
        "local",
        generated_tokens=new,
        seconds=round(seconds, 2),
        tokens_per_s=round(new / seconds, 1) if seconds else 0,
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lecode.sft.gpucheck")
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("data")
    d.add_argument("--out", type=Path, required=True)
    m = sub.add_parser("model")
    m.add_argument("--data", type=Path, required=True)
    m.add_argument("--out", type=Path, required=True)
    m.add_argument("--hidden", type=int, default=256)
    m.add_argument("--layers", type=int, default=4)
    t = sub.add_parser("train")
    t.add_argument("--base", type=Path, required=True)
    t.add_argument("--data", type=Path, required=True)
    t.add_argument("--out", type=Path, required=True)
    t.add_argument("--steps", type=int, default=20)
    t.add_argument("--batch", type=int, default=4)
    t.add_argument("--accum", type=int, default=4)
    c = sub.add_parser("consult")
    c.add_argument("--base-url", required=True)
    c.add_argument("--model", required=True)
    c.add_argument("--cases", type=int, default=2)
    c.add_argument("--max-turns", type=int, default=3)
    c.add_argument("--max-tokens", type=int, default=128)
    lo = sub.add_parser("local")
    lo.add_argument("--base", type=Path, required=True)
    lo.add_argument("--adapter", type=Path, required=True)
    lo.add_argument("--data", type=Path, required=True)
    lo.add_argument("--max-new-tokens", type=int, default=16)
    a = p.parse_args(argv)
    if a.cmd == "data":
        make_data(a.out)
    elif a.cmd == "model":
        make_model(a.data, a.out, hidden=a.hidden, layers=a.layers)
    elif a.cmd == "train":
        train_steps(a.base, a.data, a.out, steps=a.steps, batch=a.batch, accum=a.accum)
    elif a.cmd == "consult":
        consult(a.base_url, a.model, cases=a.cases, max_turns=a.max_turns, max_tokens=a.max_tokens)
    else:
        local(a.base, a.adapter, a.data, max_new_tokens=a.max_new_tokens)
    return 0


if __name__ == "__main__":
    sys.exit(main())
