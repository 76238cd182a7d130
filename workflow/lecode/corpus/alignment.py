"""Utterances of two versions of one dialogue aligned by their texts, tolerating edits,
merges and splits.

A dynamic programme over the two utterance sequences (in order) maximises the summed text
similarity of aligned groups: one to one, one to two (a reviewer split an utterance) and two to
one (a reviewer merged two), with unaligned utterances (added, deleted) scoring 0. Similarity
is :class:`difflib.SequenceMatcher`'s ratio of the characters (2 x matched / total); a group
below ``min_similarity`` is not aligned. Each group yields one index pair, its most similar
members, so that every utterance counts at most once in the agreement.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher
from functools import cache

#: Below this similarity two texts are different utterances.
MIN_SIMILARITY = 0.5


def similarity(a: str, b: str) -> float:
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


def align_texts(
    a: Sequence[str], b: Sequence[str], min_similarity: float = MIN_SIMILARITY
) -> list[tuple[int, int]]:
    """Index pairs (in ``a``, in ``b``) of the aligned utterances, in dialogue order."""
    n, m = len(a), len(b)

    @cache
    def sim(i0: int, i1: int, j0: int, j1: int) -> float:
        s = similarity("".join(a[i0:i1]), "".join(b[j0:j1]))
        return s if s >= min_similarity else -1.0

    # best[i][j]: the best score aligning a[i:] with b[j:]; move[i][j]: (di, dj, aligned?)
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    move: list[list[tuple[int, int, bool]]] = [[(0, 0, False)] * (m + 1) for _ in range(n + 1)]
    for i in range(n, -1, -1):
        for j in range(m, -1, -1):
            if i == n and j == m:
                continue
            options: list[tuple[float, int, int, bool]] = []
            if i < n:
                options.append((best[i + 1][j], 1, 0, False))
            if j < m:
                options.append((best[i][j + 1], 0, 1, False))
            for di, dj in ((1, 1), (1, 2), (2, 1)):
                if i + di <= n and j + dj <= m:
                    s = sim(i, i + di, j, j + dj)
                    if s >= 0:
                        # a merge or split must beat the one-to-one pair it extends
                        bonus = s if (di, dj) == (1, 1) else s - 1e-9
                        options.append((best[i + di][j + dj] + bonus, di, dj, True))
            score, di, dj, aligned = max(options, key=lambda o: (o[0], o[3], -o[1] - o[2]))
            best[i][j], move[i][j] = score, (di, dj, aligned)
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < n or j < m:
        di, dj, aligned = move[i][j]
        if aligned:
            members = [(x, y) for x in range(i, i + di) for y in range(j, j + dj)]
            pairs.append(max(members, key=lambda p: (similarity(a[p[0]], b[p[1]]), -p[0] - p[1])))
        i, j = i + di, j + dj
    return pairs
