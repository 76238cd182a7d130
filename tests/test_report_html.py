"""The self-contained HTML report, checked as text and in headless Chromium."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lecode.records import Case, Judgement, Matches, Transcript, Turn, Utterance
from lecode.report.document import load_all
from lecode.report.html import render_html, write_html
from lecode.report.outputs import write_tables
from lecode.report.spec import ReportedSystem
from lecode.report.viewer import viewer_data
from lecode.score_io import scores_frame
from lecode.score_records import DialogueScores
from tests.support.report_demo import Demo, make_demo, write_demo_report

ARTIFACTS_ENV = "LECODE_TEST_ARTIFACTS"


@pytest.fixture(scope="module")
def demo() -> Demo:
    return make_demo(n_train=6, n_test=8)


@pytest.fixture(scope="module")
def report(demo: Demo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    return write_demo_report(
        out,
        demo,
        paper_numbers=Path(__file__).resolve().parents[1] / "data" / "paper_numbers.csv",
        metadata={"commit": "abc123", "params": {"seed": 0}},
    )


def test_report_is_self_contained(report: Path) -> None:
    html = report.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and not re.search(r"<script[^>]+src=", html)
    assert "@import" not in html and "url(http" not in html
    for name in ("figure3", "figure5", "figure6", "figure7", "recall_by_turn"):
        assert f'id="fig-{name}"' in html
    assert html.count('src="data:image/png;base64,') == 5
    for table in ("table2", "table3", "paired", "table6", "table7", "comparison", "usage"):
        assert f'id="tbl-{table}"' in html
    assert "abc123" in html and "{&quot;seed&quot;: 0}" in html
    assert (report.parent / "tables" / "table3.md").is_file()
    assert (report.parent / "figures" / "figure3.pdf").is_file()


def test_viewer_data_facts_and_missed() -> None:
    case = Case(
        id="k1",
        initial_query="问",
        dialogue=(Utterance(speaker="client", text="问"),),
        facts=("甲", "乙", "丙"),
        importance=(3, 2, 1),
        suggestion="建议",
    )
    turns = (
        Turn(speaker="client", kind="query", text="问"),
        Turn(speaker="lawyer", kind="question", text="q1"),
        Turn(speaker="client", kind="answer", text="a1"),
        Turn(speaker="lawyer", kind="question", text="q2"),
        Turn(speaker="client", kind="answer", text="不知道"),
        Turn(speaker="lawyer", kind="question", text="q3"),
        Turn(speaker="client", kind="answer", text="a3"),
        Turn(speaker="lawyer", kind="advice", text="advice"),
    )
    s = ReportedSystem("m", "zero_shot", "M")
    t = Transcript(
        case_id="k1",
        expert="m",
        strategy="zero_shot",
        client="c",
        turns=turns,
        stop_reason="advice",
    )
    m = Matches(
        case_id="k1",
        expert="m",
        strategy="zero_shot",
        matcher="x",
        n_facts=3,
        per_question=((2,), (), (0, 2)),
    )
    j = Judgement(
        case_id="k1", expert="m", strategy="zero_shot", judge="j", status="error", error="bad reply"
    )
    sc = scores_frame(
        [
            DialogueScores(
                case_id="k1",
                expert="m",
                strategy="zero_shot",
                n_facts=3,
                stop_reason="advice",
                turns=3,
                recall=2 / 3,
            )
        ]
    )
    data = viewer_data([case], [s], transcripts=[t], matches=[m], judgements=[j], scores=sc)
    run = data["runs"]["M"]["k1"]
    assert run["matched"] == [0, 2] and run["missed"] == [1]
    answers = [x for x in run["turns"] if x["kind"] == "answer"]
    assert answers[0]["facts"] == [{"i": 2, "first": True}]
    assert answers[1]["facts"] == []
    assert answers[2]["facts"] == [{"i": 0, "first": True}, {"i": 2, "first": False}]
    assert run["scores"]["recall"] == pytest.approx(66.666666, rel=1e-5)
    assert run["scores"]["overall"] is None
    assert run["judge"] == {
        "status": "error",
        "error": "bad reply",
        "scores": None,
        "rationale": "",
    }
    failed = m.model_copy(update={"status": "error", "per_question": ()})
    run = viewer_data([case], [s], transcripts=[t], matches=[failed])["runs"]["M"]["k1"]
    assert run["missed"] is None and run["match_status"] == "error"


def test_script_breaking_text_is_escaped() -> None:
    viewer = {
        "cases": [{"id": "x", "query": "</script><script>alert(1)</script><!--"}],
        "systems": [],
        "runs": {},
    }
    html = render_html(viewer=viewer, metadata={"<b>": "</td>"})
    body = html.split('id="viewer-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(body)["cases"][0]["query"].startswith("</script>")
    assert "<b>" not in html.split('id="metadata"', 1)[1]


def test_write_html_without_viewer_or_figures_dir(demo: Demo, tmp_path: Path) -> None:
    write_tables(demo.scores, demo.systems, demo.n_expected, tmp_path / "tables")
    path = write_html(
        tmp_path / "index.html",
        tables_dir=tmp_path / "tables",
        scores=demo.scores,
        systems=demo.systems,
    )
    html = path.read_text(encoding="utf-8")
    assert 'id="tbl-table3"' in html and 'id="transcripts"' not in html
    assert 'id="fig-figure6"' in html


def test_the_page_shows_the_tables_as_written(report: Path) -> None:
    """Every number of the page is a cell of a written document, shown with its id."""
    html = report.read_text(encoding="utf-8")
    docs = load_all(report.parent / "tables")
    ids = {i.replace("&amp;", "&") for i in re.findall(r'data-cell="([^"]+)"', html)}
    assert ids == {c.id for d in docs.values() for _, c in d.cells()}
    usage = docs["usage"]
    row = usage.rows[0]
    assert f'data-cell="{row.cells[1].id}">{row.cells[1].display}</td>' in html


# --------------------------------------------------------------------------- browser


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """A minimal DevTools-protocol client over ``--remote-debugging-pipe`` (fds 3 and 4)."""

    def __init__(self, binary: str, profile: Path, size: tuple[int, int] = (1500, 1000)):
        to_browser_r, self._w = os.pipe()
        self._r, from_browser_w = os.pipe()

        def wire() -> None:
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.proc = subprocess.Popen(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                f"--window-size={size[0]},{size[1]}",
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=wire,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]

    def _next(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("no reply from the browser")
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise RuntimeError("browser closed the pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        msg: dict[str, Any] = json.loads(raw)
        if "method" in msg:
            self.events.append(msg)
        return msg

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        page: bool = False,
        timeout: float = 20.0,
    ) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if page:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._next(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply["result"]
                return result

    def wait_event(self, method: str, timeout: float = 20.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for e in self.events:
            if e["method"] == method:
                return e
        while True:
            msg = self._next(deadline)
            if msg.get("method") == method:
                return msg

    def js(self, expression: str) -> Any:
        res = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            page=True,
        )
        if "exceptionDetails" in res:
            raise RuntimeError(res["exceptionDetails"])
        return res["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click at the centre of the element (scrolled into view first)."""
        rect = self.js(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()"
        )
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": rect["x"], "y": rect["y"], "button": "left", "clickCount": 1},
                page=True,
            )

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", {"format": "png"}, page=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.close(self._w)
        os.close(self._r)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    binary = _chromium()
    if binary is None:
        pytest.skip("headless Chromium not installed: apt-get install -y chromium")
    b = Browser(binary, tmp_path / "profile")
    try:
        yield b
    finally:
        b.close()


def _wait(predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def test_viewer_in_headless_chromium(report: Path, browser: Browser, tmp_path: Path) -> None:
    browser.call("Page.enable", page=True)
    browser.call("Network.enable", page=True)
    browser.call("Page.navigate", {"url": report.resolve().as_uri()}, page=True)
    browser.wait_event("Page.loadEventFired")
    assert _wait(lambda: browser.js("document.body.dataset.viewerReady") == "1")
    case_ids = browser.js(
        "[...document.querySelectorAll('#case-list button')].map(b => b.dataset.case)"
    )
    assert len(case_ids) == 8
    target = case_ids[2]
    browser.click(f'#case-list button[data-case="{target}"]')
    assert _wait(lambda: browser.js("location.hash") == f"#case={target}")
    state = browser.js(
        "(() => { const cols = [...document.querySelectorAll('#runs .run-column')];"
        " return {systems: cols.map(c => c.dataset.system),"
        " rects: cols.map(c => { const r = c.getBoundingClientRect();"
        "   return [r.left, r.top, r.right, r.bottom]; }),"
        " turns: cols.map(c => c.querySelectorAll('.turn').length),"
        " chips: cols.map(c => c.querySelectorAll('.turn .fact').length),"
        " missed: cols.map(c => c.querySelectorAll('.missed li').length),"
        " advice: cols.map(c => c.querySelectorAll('.turn.advice').length),"
        " judged: cols.map(c => c.querySelectorAll('.rationale, .warn').length),"
        " active: document.querySelector('#case-list button.active').dataset.case,"
        " head: document.querySelector('.case-head h3').textContent}; })()"
    )
    assert state["systems"] == ["GPT-4", "GPT-4 FS"]
    (l0, t0, r0, _), (l1, t1, _, _) = state["rects"]
    assert abs(t0 - t1) < 1 and l1 >= r0 - 1  # side by side, same row
    assert all(n >= 4 for n in state["turns"])
    assert sum(state["chips"]) > 0
    assert all(a == 1 for a in state["advice"])
    assert all(j >= 1 for j in state["judged"])
    assert state["active"] == target and state["head"].startswith(target)
    n_facts = browser.js(
        f"JSON.parse(document.getElementById('viewer-data').textContent)"
        f".cases.find(c => c.id === {json.dumps(target)}).facts.length"
    )
    elicited = browser.js(
        "[...document.querySelectorAll('#runs .run-column')].map(c =>"
        " new Set([...c.querySelectorAll('.turn .fact')]"
        ".map(f => f.dataset.fact)).size)"
    )
    assert [e + m for e, m in zip(elicited, state["missed"], strict=True)] == [n_facts] * 2
    # a third system joins the comparison
    browser.click('#system-picker input[value="Qwen2.5-7B"]')
    assert _wait(lambda: browser.js("document.querySelectorAll('#runs .run-column').length") == 3)
    external = [
        e["params"]["request"]["url"]
        for e in browser.events
        if e["method"] == "Network.requestWillBeSent"
        and not e["params"]["request"]["url"].startswith(("file:", "data:", "about:"))
    ]
    assert external == []
    browser.js("document.getElementById('transcripts').scrollIntoView()")
    artifacts = Path(os.environ.get(ARTIFACTS_ENV, tmp_path))
    artifacts.mkdir(parents=True, exist_ok=True)
    shot = browser.screenshot(artifacts / "report_viewer.png")
    assert shot.stat().st_size > 10_000
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
