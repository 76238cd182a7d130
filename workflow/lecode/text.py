"""Chinese text helpers shared by the offline agents and the metrics: jieba tokenisation."""

from __future__ import annotations

import logging
import unicodedata
from functools import lru_cache

import jieba

jieba.setLogLevel(logging.WARNING)


def is_punctuation(token: str) -> bool:
    """True when every character of ``token`` is punctuation, a symbol or whitespace."""
    return all(unicodedata.category(ch)[0] in "PSZ" or ch.isspace() for ch in token)


@lru_cache(maxsize=65536)
def _cut(text: str) -> tuple[str, ...]:
    return tuple(t for t in jieba.lcut(text) if t.strip())


def tokenize(text: str, *, punctuation: bool = True) -> list[str]:
    """jieba tokens of ``text`` (whitespace dropped); punctuation tokens kept unless asked."""
    tokens = _cut(text)
    if punctuation:
        return list(tokens)
    return [t for t in tokens if not is_punctuation(t)]


class JiebaTokenizer:
    """A tokenizer object in the shape rouge-score's ``RougeScorer(tokenizer=...)`` expects."""

    def __init__(self, *, punctuation: bool = True) -> None:
        self.punctuation = punctuation

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text, punctuation=self.punctuation)
