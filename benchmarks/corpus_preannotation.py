"""How much reviewers change of the offline rules' pre-annotation, on the shipped transcripts
and reviews (data/transcripts, data/review): the share of fields whose final value differs
from the pre-annotation (lecode.corpus.effort). Lower is better. Ends with ratio=<changed
share>.

    .venv/bin/python benchmarks/corpus_preannotation.py
"""

from __future__ import annotations

from pathlib import Path

from lecode.corpus import rules
from lecode.corpus.effort import review_effort
from lecode.corpus.transcripts import read_transcripts, transcript_files

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    pre1, pre2 = {}, {}
    for t in read_transcripts(transcript_files(REPO / "data" / "transcripts")):
        pre1[t.id] = rules.stage1(rules.identify_roles(t))
        pre2[t.id] = rules.stage2(pre1[t.id])
    got = review_effort(pre1, pre2, REPO / "data" / "review")
    total = got["stage1"] + got["stage2"]
    for name, e in (*got.items(), ("both", total)):
        print(f"{name}: {e.changed} of {e.fields} fields changed ({100 * e.share:.1f}%)")
    print(f"ratio={total.share:.3f}")


if __name__ == "__main__":
    main()
