"""Synthetic consultation transcripts for benchmarks: seeded, in every accepted shape (.txt,
.srt, .vtt, .json, .jsonl), from a few case templates with varied slots. Not data to train or
evaluate on: their only use is to measure the dataset build at corpus size."""

from __future__ import annotations

import json
import random
from pathlib import Path

_CASES = (
    (
        "我在{place}干了{years}年，老板拖欠我{months}个月工资，一共{amount}元，我该怎么办？",
        [
            ("你跟公司签劳动合同了吗？", "签了，合同在我手里。"),
            ("公司给你交社保了吗？", "没有。"),
            ("工资平时怎么发的？", "一直是银行转账，每个月{day}号发。"),
        ],
        "建议你保存劳动合同和银行流水，向劳动监察大队投诉或者申请劳动仲裁，要求支付拖欠的工资。",
    ),
    (
        "我{rel}借给朋友{amount}元，说好{months}个月还，现在他不还了，怎么办？",
        [
            ("有没有借条？", "有借条，是他亲手写的。"),
            ("借款是怎么给他的？", "微信转账给他的，有记录。"),
            ("你催过他吗？", "催过好几次，他一直拖。"),
        ],
        "可以带着借条和转账记录向法院起诉，要求还款并支付逾期利息，诉讼时效是三年。",
    ),
    (
        "我骑电动车在{place}被一辆小轿车撞了，腿骨折了，对方保险只愿意赔{amount}元，够吗？",
        [
            ("交警出事故认定书了吗？", "出了，对方全责。"),
            ("做伤残鉴定了吗？", "还没有，医生说要等{months}个月。"),
        ],
        "建议治疗终结后做伤残鉴定，再按医疗费、误工费、护理费和伤残赔偿金向保险公司主张赔偿。",
    ),
    (
        "我租的房子到期退租，房东扣着我{amount}元押金不退，说墙上有划痕，我该怎么要回来？",
        [
            ("合同里对押金怎么约定的？", "合同写的是正常使用的损耗不扣押金。"),
            ("退租的时候拍照了吗？", "拍了，还有视频。"),
        ],
        "正常使用的损耗不能扣押金，建议先发书面催告，房东仍不退的可以向法院起诉要求返还押金。",
    ),
)
_PLACES = ("装修公司", "物流公司", "餐馆", "工厂", "超市", "路口", "小区门口", "学校附近")
_RELS = ("", "和我老公一起", "替我妈")


def _dialogue(rng: random.Random) -> list[tuple[str, str]]:
    query, qa, advice = rng.choice(_CASES)
    slots = {
        "place": rng.choice(_PLACES),
        "years": rng.randint(1, 9),
        "months": rng.randint(1, 12),
        "amount": rng.randrange(2000, 200000, 100),
        "day": rng.randint(1, 28),
        "rel": rng.choice(_RELS),
    }
    turns = [("client", "律师您好"), ("lawyer", "你好，请说。"), ("client", query.format(**slots))]
    for q, a in rng.sample(qa, k=rng.randint(1, len(qa))):
        turns += [("lawyer", q.format(**slots)), ("client", a.format(**slots))]
    turns += [("lawyer", "别着急。" + advice), ("client", "好的，谢谢律师。")]
    return turns


def _stamp(seconds: int, sep: str) -> str:
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}000"


def write_synthetic(out_dir: str | Path, n: int, seed: int = 0) -> list[Path]:
    """``n`` transcripts ``syn-00000...`` under ``out_dir``: shapes in turn (.txt, .srt, .vtt,
    .json; every fifth goes into one .jsonl)."""
    rng = random.Random(seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    names = {"client": "说话人1", "lawyer": "说话人2"}
    written: list[Path] = []
    jsonl: list[str] = []
    for k in range(n):
        tid = f"syn-{k:05d}"
        turns = _dialogue(rng)
        if rng.random() < 0.5:  # the lawyer is speaker 1 in half of them
            names = {"client": "说话人2", "lawyer": "说话人1"}
        else:
            names = {"client": "说话人1", "lawyer": "说话人2"}
        shape = k % 5
        if shape == 0:
            text = "".join(f"{names[r]}：{t}\n" for r, t in turns)
            path = out / f"{tid}.txt"
        elif shape in (1, 2):
            sep = "," if shape == 1 else "."
            cues = [
                f"{i + 1}\n{_stamp(3 * i, sep)} --> {_stamp(3 * i + 2, sep)}\n{names[r]}：{t}\n"
                for i, (r, t) in enumerate(turns)
            ]
            text = ("WEBVTT\n\n" if shape == 2 else "") + "\n".join(cues)
            path = out / f"{tid}.{'srt' if shape == 1 else 'vtt'}"
        else:
            record = {"id": tid, "turns": [[names[r], t] for r, t in turns]}
            if shape == 4:
                jsonl.append(json.dumps(record, ensure_ascii=False))
                continue
            text = json.dumps(record, ensure_ascii=False)
            path = out / f"{tid}.json"
        path.write_text(text, encoding="utf-8")
        written.append(path)
    if jsonl:
        path = out / "syn-batch.jsonl"
        path.write_text("\n".join(jsonl) + "\n", encoding="utf-8")
        written.append(path)
    return written
