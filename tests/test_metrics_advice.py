"""Advice metrics: ROUGE-L worked by hand, BERTScore settings and (slow) the real model."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import jieba  # type: ignore[import-untyped]
import pytest
from rouge_score import rouge_scorer  # type: ignore[import-untyped]

from lecode.metrics.advice import (
    PACKAGED_MODEL,
    BertScorer,
    RougeL,
    fingerprint_model_dir,
    metric_stack_versions,
    resolve_model,
)
from lecode.text import tokenize

CAND_A = "建议先协商；不行就起诉！"
REF_A = "先协商，再起诉。"
CAND_B = "您应当先收集证据。"
REF_B = "建议您收集证据，然后起诉。"


def test_segmentation_assumed_below() -> None:
    # The hand-worked LCS below rests on this jieba segmentation.
    assert tokenize(CAND_A) == ["建议", "先", "协商", "；", "不行", "就", "起诉", "！"]
    assert tokenize(REF_A) == ["先", "协商", "，", "再", "起诉", "。"]
    assert tokenize(CAND_B) == ["您", "应当", "先", "收集", "证据", "。"]
    assert tokenize(REF_B) == ["建议您", "收集", "证据", "，", "然后", "起诉", "。"]


def test_rouge_l_pair_a_by_hand() -> None:
    # keep punctuation: candidate 8 tokens, reference 6 tokens.
    #   LCS = 先 协商 起诉 = 3 (；/， and ！/。 differ)
    #   P = 3/8, R = 3/6, F1 = 2PR/(P+R) = 2*0.375*0.5/0.875 = 0.428571
    assert RougeL(punctuation=True).score(CAND_A, REF_A) == pytest.approx(3 / 7)
    # drop punctuation: candidate 6 tokens, reference 4 tokens, LCS still 3
    #   P = 3/6, R = 3/4, F1 = 2*0.5*0.75/1.25 = 0.6
    assert RougeL(punctuation=False).score(CAND_A, REF_A) == pytest.approx(0.6)


def test_rouge_l_pair_b_by_hand() -> None:
    # keep punctuation: candidate 6 tokens, reference 7 tokens.
    #   LCS = 收集 证据 。 = 3
    #   P = 3/6, R = 3/7, F1 = 2*(1/2)*(3/7)/(1/2 + 3/7) = (3/7)/(13/14) = 6/13 = 0.461538
    assert RougeL(punctuation=True).score(CAND_B, REF_B) == pytest.approx(6 / 13)
    # drop punctuation: 5 and 5 tokens, LCS = 收集 证据 = 2
    #   P = R = 2/5, F1 = 0.4
    assert RougeL(punctuation=False).score(CAND_B, REF_B) == pytest.approx(0.4)


def test_rouge_l_identical_empty_and_symmetric() -> None:
    rouge = RougeL(punctuation=True)
    assert rouge.score(REF_B, REF_B) == pytest.approx(1.0)
    assert RougeL(punctuation=False).score(REF_B, REF_B) == pytest.approx(1.0)
    assert rouge.score("", REF_B) == 0.0
    assert rouge.score("。", REF_B) == pytest.approx(2 * (1 / 1) * (1 / 7) / (1 + 1 / 7))
    assert RougeL(punctuation=False).score("。！", REF_B) == 0.0
    assert rouge.score(CAND_A, REF_A) == pytest.approx(rouge.score(REF_A, CAND_A))


def test_rouge_score_default_tokenizer_trap() -> None:
    # rouge-score's default tokenizer keeps only [a-z0-9] runs: Chinese text has no tokens
    # and even identical strings score 0, with or without spaces between jieba tokens.
    default = rouge_scorer.RougeScorer(["rougeL"])
    assert default.score(REF_B, REF_B)["rougeL"].fmeasure == 0.0
    spaced = " ".join(jieba.cut(REF_B))
    assert default.score(spaced, spaced)["rougeL"].fmeasure == 0.0
    # ours tokenises with jieba
    assert RougeL(punctuation=True).score(REF_B, REF_B) == pytest.approx(1.0)
    assert RougeL(punctuation=True).score(CAND_B, REF_B) > 0.0


def test_rouge_settings() -> None:
    assert RougeL(punctuation=True).settings() == {"tokenizer": "jieba", "punctuation": "keep"}
    assert RougeL(punctuation=False).settings()["punctuation"] == "drop"


# --- BERTScore: settings and provenance, without loading the model -----------------------


def test_packaged_model_resolves() -> None:
    path = resolve_model(PACKAGED_MODEL)
    assert path.name == "m3e-small"
    assert (path / "config.json").is_file()


def test_bad_model_spec_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"metrics\.bertscore\.model"):
        resolve_model(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match=r"metrics\.bertscore\.model"):
        resolve_model("bert-base-chinese")  # a hub name: not downloadable here
    with pytest.raises(ValueError, match="config.json"):
        resolve_model(str(tmp_path))  # a directory, but no model in it
    with pytest.raises(ValueError, match=r"metrics\.bertscore\.model"):
        BertScorer(str(tmp_path / "missing"), num_layers=4, batch_size=8, threads=1)


def test_num_layers_checked() -> None:
    with pytest.raises(ValueError, match=r"metrics\.bertscore\.num_layers"):
        BertScorer(PACKAGED_MODEL, num_layers=5, batch_size=8, threads=1)  # m3e-small has 4
    with pytest.raises(ValueError, match=r"metrics\.bertscore\.num_layers"):
        BertScorer(PACKAGED_MODEL, num_layers=0, batch_size=8, threads=1)


def test_score_without_model_work_does_not_load() -> None:
    bert = BertScorer(PACKAGED_MODEL, num_layers=4, batch_size=8, threads=1)
    assert bert.score([], []) == []
    # an empty side scores 0.0, as in bert-score, without reaching the model
    assert bert.score(["", "建议"], ["参考", "  "]) == [0.0, 0.0]
    assert bert._scorer is None
    with pytest.raises(ValueError):
        bert.score(["a"], [])


def test_model_fingerprint(tmp_path: Path) -> None:
    for name, text in {"config.json": "{}", "vocab.txt": "[PAD]\n", "README.md": "x"}.items():
        (tmp_path / name).write_text(text)
    first = fingerprint_model_dir(tmp_path)
    assert len(first) == 64
    (tmp_path / "README.md").write_text("changed docs")  # not part of the identity
    assert fingerprint_model_dir(tmp_path) == first
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n")
    assert fingerprint_model_dir(tmp_path) != first

    bert = BertScorer(PACKAGED_MODEL, num_layers=4, batch_size=8, threads=1)
    assert bert.model_fingerprint() == fingerprint_model_dir(resolve_model(PACKAGED_MODEL))
    assert bert.settings()["model_sha256"] == bert.model_fingerprint()


def test_metric_stack_versions() -> None:
    versions = metric_stack_versions()
    assert set(versions) == {
        "jieba",
        "rouge-score",
        "bert-score",
        "transformers",
        "torch",
        "jieba_dict_sha256",
    }
    assert versions["jieba"] == "0.42.1"
    dict_file = Path(os.path.dirname(jieba.__file__)) / "dict.txt"
    assert versions["jieba_dict_sha256"] == hashlib.sha256(dict_file.read_bytes()).hexdigest()


# --- BERTScore with the real packaged model ----------------------------------------------


@pytest.mark.slow
def test_bertscore_real_model() -> None:
    # about 10-15 s on two CPU threads: most of it is loading torch and the model
    started = time.perf_counter()
    bert = BertScorer(PACKAGED_MODEL, num_layers=4, batch_size=4, threads=2)
    advice = "建议您先与公司协商，协商不成再申请劳动仲裁，要求支付经济补偿。"
    paraphrase = "您可以先和公司沟通协商，如果协商不成，可以申请劳动仲裁要求经济补偿。"
    unrelated = "今天天气很好，我们去公园散步吧。"
    long_text = "根据劳动合同法的规定，用人单位应当支付经济补偿。" * 60  # about 1,400 characters
    candidates = [advice, advice, advice, long_text, "", advice]
    references = [advice, paraphrase, unrelated, advice, advice, long_text]
    scores = bert.score(candidates, references)
    assert len(scores) == 6
    assert scores[0] == pytest.approx(1.0, abs=1e-5)
    assert scores[1] > scores[2] > 0.0
    assert scores[4] == 0.0
    assert 0.0 < scores[3] < 1.0 and 0.0 < scores[5] < 1.0  # truncated, not crashed
    assert bert.max_tokens == 512
    # chunking and length ordering do not change a pair's score
    for i in (1, 2, 3):
        assert bert.score([candidates[i]], [references[i]])[0] == pytest.approx(scores[i], abs=1e-5)
    assert time.perf_counter() - started < 120
