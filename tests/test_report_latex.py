"""The LaTeX tables compile (when a TeX engine with booktabs is installed; skipped otherwise)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

from lecode.report.outputs import TableOptions, write_tables
from tests.support.report_demo import make_demo

PDFLATEX = shutil.which("pdflatex")
DOCUMENT = r"""\documentclass{article}
\usepackage[margin=1cm,landscape]{geometry}
\usepackage{booktabs}
\usepackage{xcolor}
\begin{document}
%s
\end{document}
"""


@pytest.mark.skipif(PDFLATEX is None, reason="no pdflatex (make sysdeps installs TeX Live)")
def test_every_latex_table_compiles(tmp_path: Path) -> None:
    demo = make_demo(n_train=6, n_test=8)
    # pdflatex has no CJK fonts: keep the systems with Latin labels (the demo's
    # zero-shot/few-shot pair included, so Tables 6 and 7 are built too).
    systems = [s for s in demo.systems if s.label.isascii()]
    keep = pl.Series([f"{s.expert}/{s.strategy}" for s in systems])
    scores = demo.scores.filter(pl.concat_str(["expert", "strategy"], separator="/").is_in(keep))
    written = write_tables(
        scores,
        systems,
        demo.n_expected,
        tmp_path / "tables",
        train_cases=demo.train,
        test_cases=demo.test,
        paper_numbers=Path(__file__).resolve().parents[1] / "data" / "paper_numbers.csv",
        settings=TableOptions(resamples=200, top_marked=6),
    )
    tex_files = sorted(p for paths in written.values() for p in paths if p.suffix == ".tex")
    assert {p.stem for p in tex_files} >= {"table2", "table3", "table6", "table7", "paired"}
    for tex in tex_files:
        doc = tmp_path / f"doc_{tex.stem}.tex"
        doc.write_text(DOCUMENT % tex.read_text(encoding="utf-8"), encoding="utf-8")
        run = subprocess.run(
            [str(PDFLATEX), "-interaction=nonstopmode", "-halt-on-error", doc.name],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, f"{tex.name} does not compile:\n{run.stdout[-3000:]}"
        assert (tmp_path / f"doc_{tex.stem}.pdf").stat().st_size > 0
