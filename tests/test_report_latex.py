"""Every generated LaTeX table compiles with the engine the README names: XeLaTeX with xeCJK
and a CJK font (the tables hold Chinese text: labels, the audit's 不知道, Table 4's rows),
including a label full of LaTeX and HTML specials; and the Markdown tables show such a label as
text, never as HTML. Skipped without xelatex (`make sysdeps` installs it)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

from lecode.audit import AUDIT_SCHEMA
from lecode.reliability import ReliabilityAnswer, ReliabilityJudgement
from lecode.reliability.table4 import table4, table4_document
from lecode.report.document import write_document
from lecode.report.outputs import TableOptions, write_tables
from lecode.report.paper import load_paper_numbers
from lecode.stats import ResamplePlan
from tests.support.report_demo import make_demo

REPO = Path(__file__).resolve().parents[1]
XELATEX = shutil.which("xelatex")
HOSTILE = (
    r"GPT-4 <script>alert(1)</script> <img src=x onerror=alert(2)> | {y} ${z} 50% #1 a_b ~ ^ "
    r"\x & 模型"
)
DOCUMENT = r"""\documentclass{article}
\usepackage[margin=1cm,landscape]{geometry}
\usepackage{booktabs}
\usepackage{xcolor}
\usepackage{xeCJK}
\setCJKmainfont{WenQuanYi Micro Hei}
\begin{document}
%s
\end{document}
"""


def _audit(demo_scores: pl.DataFrame) -> pl.DataFrame:
    rows = []
    for i, r in enumerate(demo_scores.select("case_id", "expert", "strategy").iter_rows()):
        flagged = 0.5 if i % 3 == 0 else 0.0
        rows.append(
            {
                "case_id": r[0],
                "expert": r[1],
                "strategy": r[2],
                "answers": 2,
                "n_flagged": int(flagged * 2),
                "over_limit": 0.0,
                "unsupported": 0.0,
                "withheld": flagged,
                "contradicted": 0.0,
                "flagged": flagged,
                "behaved": float(flagged == 0.0),
            }
        )
    return pl.DataFrame(rows, schema=AUDIT_SCHEMA, orient="row")


def _table4(out: Path) -> list[Path]:
    ok = ReliabilityJudgement(relevance=1, factuality=1, reason="r")
    answers = [
        ReliabilityAnswer(
            case_id=c,
            client="c",
            strategy="instruct_dialogue",
            q=1,
            question="?",
            answer="不知道",
            audit={"flags": ["withheld"] if c == "a" else []},
            judge=ok,
            judge_status="ok",
        )
        for c in ("a", "b")
    ]
    table = table4(
        [{"client": "c", "label": "模拟客户 <C> | 50%", "strategy": "instruct_dialogue"}],
        {("c", "instruct_dialogue"): answers},
        ["a", "b"],
        plan=ResamplePlan(resamples=200),
        judged=True,
        paper=load_paper_numbers(REPO / "data" / "paper_numbers.csv"),
    )
    doc = table4_document(
        table,
        spec_digest="test",
        systems={},
        threshold=0.9,
        bootstrap={"resamples": 200, "seed": 0, "confidence": 0.95},
    )
    return write_document(doc, out)


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("tables")
    demo = make_demo(n_train=6, n_test=8)
    # every system, the Chinese-labelled baseline included; one label full of specials
    systems = [replace(demo.systems[0], label=HOSTILE), *demo.systems[1:]]
    written = write_tables(
        demo.scores,
        systems,
        demo.n_expected,
        out,
        train_cases=demo.train,
        test_cases=demo.test,
        paper_numbers=REPO / "data" / "paper_numbers.csv",
        settings=TableOptions(resamples=200, top_marked=6),
        audit=_audit(demo.scores),
    )
    files = [p for paths in written.values() for p in paths]
    return sorted(files + _table4(out))


def test_markdown_shows_html_in_labels_as_text(tables: list[Path]) -> None:
    md = {p.stem: p.read_text(encoding="utf-8") for p in tables if p.suffix == ".md"}
    assert {"table3", "audit", "robustness", "table4"} <= set(md)
    for name, text in md.items():
        assert "<script" not in text and "<img" not in text, name
    assert (
        "GPT-4 &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt;"
        in (md["table3"])
    )
    assert r"\| {y}" in md["table3"]  # a | in a label does not end its cell
    assert "模拟客户 &lt;C&gt; \\| 50%" in md["table4"]


def test_latex_escapes_every_special(tables: list[Path]) -> None:
    tex = next(p for p in tables if p.name == "table3.tex").read_text(encoding="utf-8")
    assert r"GPT-4 \textless{}script\textgreater{}alert(1)\textless{}/script\textgreater{}" in tex
    assert r"\textbar{} \{y\} \$\{z\} 50\% \#1 a\_b \textasciitilde{} \textasciicircum{} " in tex
    assert r"\textbackslash{}x \& 模型" in tex


@pytest.mark.skipif(XELATEX is None, reason="no xelatex (make sysdeps installs TeX Live XeTeX)")
def test_every_latex_table_compiles_with_xelatex(tables: list[Path], tmp_path: Path) -> None:
    tex_files = [p for p in tables if p.suffix == ".tex"]
    names = {p.stem for p in tex_files}
    assert {"table2", "table3", "table6", "table7", "paired", "audit", "table4"} <= names
    body = "\n\\clearpage\n".join(p.read_text(encoding="utf-8") for p in tex_files)
    assert "不知道" in body and "检索基线" in body  # Chinese text that stops pdflatex
    doc = tmp_path / "tables.tex"
    doc.write_text(DOCUMENT % body, encoding="utf-8")
    run = subprocess.run(
        [str(XELATEX), "-interaction=nonstopmode", "-halt-on-error", doc.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, f"the tables do not compile:\n{run.stdout[-3000:]}"
    assert (tmp_path / "tables.pdf").stat().st_size > 0
    log = (tmp_path / "tables.log").read_text(encoding="utf-8", errors="replace")
    assert "Missing character" not in log  # every glyph, the Chinese ones included, is there
