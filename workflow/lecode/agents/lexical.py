"""Lexical features shared by the offline agents: keywords and character bigrams.

Both features ignore punctuation and a short list of Chinese function words, pronouns and
question words (``STOPWORDS``), so that "你们签劳动合同了吗" and "双方签订了劳动合同" are
compared on what they are about ("劳动合同") rather than on "了", "你们" or "吗".
"""

from __future__ import annotations

from functools import lru_cache

from lecode.text import is_punctuation, tokenize

_STOPWORD_TEXT = """
    的 了 吗 呢 吧 啊 呀 嘛 哦 哈 么 着 过 得 地 是 不是 不 没 有 没有 有没有 是否
    在 和 与 跟 及 或 或者 还是 就 都 也 还 又 才 再 很 太 把 被 给 对 向 从 到 让 要 会 能
    可以 想 请问 请 一下 一个 这个 那个 这 那 这些 那些 这样 那样 这种 那种 什么 怎么
    怎么样 怎样 为什么 多少 几 哪 哪里 哪个 哪些 谁 你 您 你们 我 我们 他 她 它 他们 她们
    咱们 自己 现在 当时 时候 事情 情况 问题 知道 然后 因为 所以 如果 的话 就是 已经 具体
    一些 之前 之后 后来 说 告诉 嗯 好 好的 对吧 那么 这么 于 将 等 其 并 而 且 以
"""
#: Tokens that carry no case content: particles, pronouns, question words, fillers.
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())


def _segments(text: str) -> list[str]:
    """Runs of consecutive kept tokens, each run joined into one string.

    A punctuation or stopword token ends a run, so bigrams never bridge a removed word.
    """
    runs: list[str] = []
    current: list[str] = []
    for token in tokenize(text):
        lowered = token.lower()
        if is_punctuation(token) or lowered in STOPWORDS:
            if current:
                runs.append("".join(current))
                current = []
        else:
            current.append(lowered)
    if current:
        runs.append("".join(current))
    return runs


@lru_cache(maxsize=65536)
def keywords(text: str) -> frozenset[str]:
    """jieba tokens of ``text`` without punctuation and stopwords (ASCII lower-cased)."""
    return frozenset(
        t.lower() for t in tokenize(text, punctuation=False) if t.lower() not in STOPWORDS
    )


@lru_cache(maxsize=65536)
def bigrams(text: str) -> frozenset[str]:
    """Character bigrams inside each run of kept tokens (see :func:`_segments`)."""
    return frozenset(run[i : i + 2] for run in _segments(text) for i in range(len(run) - 1))


def found_in(words: frozenset[str], text: str) -> int:
    """How many of ``words`` occur in ``text`` as substrings (case-insensitive).

    Substring search makes keyword overlap independent of how jieba happens to segment the
    other text ("入职" is found in "3月入职某公司" although jieba cuts it "月入|职某").
    """
    lowered = text.lower()
    return sum(1 for w in words if w in lowered)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a & b| / |a | b|, and 0.0 when both are empty."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0
