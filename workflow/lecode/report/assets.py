"""Inline CSS and JavaScript of the self-contained HTML report (no external resources)."""

from __future__ import annotations

CSS = """
:root { --fg: #1d232a; --muted: #66707a; --line: #d8dde3; --bg: #f6f7f9; --accent: #2157a4;
  --w3: #c62828; --w2: #ef8a17; --w1: #8a939c; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.5 system-ui, "Noto Sans CJK SC", "WenQuanYi Micro Hei",
  "Microsoft YaHei", sans-serif; color: var(--fg); background: #fff; }
header.top { padding: 16px 24px; border-bottom: 1px solid var(--line); background: var(--bg); }
header.top h1 { margin: 0 0 4px; font-size: 20px; }
nav a { margin-right: 16px; color: var(--accent); text-decoration: none; }
main { padding: 8px 24px 48px; }
section { margin: 24px 0; }
h2 { font-size: 18px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.scroll { overflow-x: auto; max-width: 100%; }
table.metrics { border-collapse: collapse; font-size: 12.5px; }
table.metrics th, table.metrics td { padding: 3px 8px; border-bottom: 1px solid var(--line);
  white-space: nowrap; }
table.metrics tbody th { text-align: left; font-weight: 600; }
table.metrics td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.metrics tr.group th { text-align: left; background: var(--bg); font-style: italic; }
table.metrics .ci { color: var(--muted); font-size: 11px; }
table.metrics .cov { color: var(--w3); }
table.metrics .ns { color: var(--muted); font-size: 11px; }
table.metrics .second { text-decoration: underline; }
ul.notes { color: var(--muted); font-size: 12px; margin: 4px 0 0; padding-left: 18px; }
table.meta td { padding: 2px 12px 2px 0; vertical-align: top; }
table.meta td:first-child { color: var(--muted); }
figure { margin: 16px 0; }
figure img { max-width: 100%; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 12px; }
#viewer { display: grid; grid-template-columns: 260px 1fr; gap: 16px; align-items: start; }
#case-list { list-style: none; margin: 0; padding: 0; max-height: 80vh; overflow: auto;
  border: 1px solid var(--line); }
#case-list li button { display: block; width: 100%; text-align: left; border: 0;
  border-bottom: 1px solid var(--line); background: #fff; padding: 6px 8px; cursor: pointer;
  font: inherit; }
#case-list li button:hover { background: var(--bg); }
#case-list li button.active { background: #e3ecf8; }
#case-list .cid { font-weight: 600; display: block; }
#case-list .cq { color: var(--muted); font-size: 12px; display: block; overflow: hidden;
  text-overflow: ellipsis; white-space: nowrap; }
#case-filter { width: 100%; margin-bottom: 6px; padding: 4px 6px; }
#system-picker label { margin-right: 12px; white-space: nowrap; }
.case-head { background: var(--bg); border: 1px solid var(--line); padding: 10px 12px; }
.runs { display: grid; gap: 12px; margin-top: 12px; }
.run-column { border: 1px solid var(--line); padding: 8px 10px; min-width: 0; }
.run-column h3 { margin: 0 0 4px; }
.run-meta { color: var(--muted); font-size: 12px; margin-bottom: 6px; }
.turn { margin: 6px 0; padding: 6px 8px; border-radius: 6px; }
.turn.client { background: #f1f4f8; }
.turn.lawyer { background: #eef7ee; }
.turn.advice { background: #fff8e6; border: 1px solid #f0d9a0; }
.turn .who { font-size: 11px; color: var(--muted); display: block; }
.fact { display: inline-block; margin: 3px 4px 0 0; padding: 1px 6px; border-radius: 10px;
  font-size: 12px; color: #fff; }
.fact.w3 { background: var(--w3); } .fact.w2 { background: var(--w2); }
.fact.w1 { background: var(--w1); } .fact.repeat { opacity: 0.55; }
.missed li { margin: 2px 0; }
.scores { font-size: 12px; border-collapse: collapse; margin: 6px 0; }
.scores td { padding: 1px 8px 1px 0; }
.rationale { font-size: 12.5px; background: var(--bg); padding: 6px 8px; white-space: pre-wrap; }
.warn { color: var(--w3); font-size: 12px; }
.turn.flagged { border-left: 4px solid var(--w3); }
.audit-flag { display: inline-block; margin: 3px 4px 0 0; padding: 1px 6px; border-radius: 10px;
  font-size: 11px; background: #fdecea; color: #a12622; border: 1px solid #f3b7b2; }
.muted { color: var(--muted); }
"""

JS = r"""
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("viewer-data").textContent);
  const HEADERS = JSON.parse(document.getElementById("metric-headers").textContent);
  const caseById = new Map(DATA.cases.map((c) => [c.id, c]));
  const listEl = document.getElementById("case-list");
  const pickerEl = document.getElementById("system-picker");
  const viewEl = document.getElementById("case-view");
  const filterEl = document.getElementById("case-filter");
  let current = null;

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else e.setAttribute(k, v);
    }
    for (const ch of children) {
      if (ch === null || ch === undefined) continue;
      e.appendChild(typeof ch === "string" ? document.createTextNode(ch) : ch);
    }
    return e;
  }
  function stars(w) { return "\u2605".repeat(Math.max(1, Math.min(3, Math.round(w)))); }
  function fmt(v) { return v === null || v === undefined ? "\u2014" : v.toFixed(1); }

  function factChip(c, i, first) {
    const f = c.facts[i];
    const w = f ? f.w : 1;
    const chip = el("span", {class: "fact w" + w + (first === false ? " repeat" : ""),
      title: "fact " + i + ", importance " + w + (first === false ? " (again)" : "")},
      "#" + i + " " + stars(w) + " " + (f ? f.text : "?"));
    chip.dataset.fact = String(i);
    return chip;
  }

  const AUDIT_NAMES = {over_limit: "more than 3 facts", unsupported: "unsupported statement",
    withheld: "withheld (\u4e0d\u77e5\u9053 though a fact answers)",
    contradicted: "contradicts a fact"};
  function auditDetail(a, name) {
    if (name === "over_limit") {
      return "facts disclosed (" + a.source + "): #" + a.disclosed.join(", #");
    }
    if (name === "unsupported") return "no fact supports: " + a.unsupported.join(" / ");
    if (name === "withheld") return "facts that answer the question: #" + a.withheld.join(", #");
    return a.contradicted.map((x) => "\u201c" + x.clause + "\u201d vs fact #" + x.fact +
      " \u201c" + x.fact_clause + "\u201d").join(" / ");
  }

  function selectedSystems() {
    return Array.from(pickerEl.querySelectorAll("input:checked")).map((x) => x.value);
  }

  function renderRun(c, label) {
    const run = (DATA.runs[label] || {})[c.id];
    const col = el("div", {class: "run-column"});
    col.dataset.system = label;
    col.appendChild(el("h3", {}, label));
    if (!run) {
      col.appendChild(el("p", {class: "muted"}, "no transcript for this case"));
      return col;
    }
    const q = run.turns.filter((t) => t.kind === "question").length;
    col.appendChild(el("div", {class: "run-meta"},
      "stop: " + run.stop_reason + " \u00b7 questions: " + q +
      " \u00b7 facts elicited: " + run.matched.length + "/" + c.facts.length +
      (run.audit ? " \u00b7 client answers flagged: " + run.audit.flagged + "/" +
        run.audit.answers : "")));
    if (run.error) col.appendChild(el("div", {class: "warn"}, "error: " + run.error));
    for (const t of run.turns) {
      const cls = "turn " + t.speaker + (t.kind === "advice" ? " advice" : "");
      const who = (t.speaker === "client" ? "client \u7528\u6237" : "lawyer \u5f8b\u5e08") +
        " \u00b7 " + t.kind + (t.q ? " " + t.q : "");
      const box = el("div", {class: cls}, el("span", {class: "who"}, who), t.text);
      box.dataset.kind = t.kind;
      if (t.facts && t.facts.length) {
        const chips = el("div", {class: "chips"});
        for (const f of t.facts) chips.appendChild(factChip(c, f.i, f.first));
        box.appendChild(chips);
      }
      if (t.audit) {
        box.classList.add("flagged");
        box.dataset.flags = t.audit.flags.join(" ");
        const flags = el("div", {class: "audit-flags"});
        for (const name of t.audit.flags) {
          flags.appendChild(el("span", {class: "audit-flag", title: auditDetail(t.audit, name)},
            "\u26a0 " + (AUDIT_NAMES[name] || name)));
        }
        box.appendChild(flags);
      }
      col.appendChild(box);
    }
    if (run.match_status !== "ok") {
      col.appendChild(el("div", {class: "warn"},
        "fact matching unavailable" + (run.match_error ? ": " + run.match_error : "")));
    }
    if (run.missed) {
      const missed = el("div", {class: "missed"}, el("strong", {}, "Missed facts (" +
        run.missed.length + ")"));
      const ul = el("ul", {});
      for (const i of run.missed) ul.appendChild(el("li", {}, factChip(c, i, true)));
      missed.appendChild(ul);
      col.appendChild(missed);
    }
    const tbl = el("table", {class: "scores"});
    for (const [k, h] of HEADERS) {
      tbl.appendChild(el("tr", {}, el("td", {}, h), el("td", {class: "num"}, fmt(run.scores[k]))));
    }
    col.appendChild(el("strong", {}, "Scores"));
    col.appendChild(tbl);
    const j = run.judge;
    if (!j) col.appendChild(el("div", {class: "muted"}, "no judgement"));
    else if (j.status !== "ok") col.appendChild(el("div", {class: "warn"},
      "judge failed" + (j.error ? ": " + j.error : "")));
    else {
      col.appendChild(el("strong", {}, "Judge rationale"));
      col.appendChild(el("div", {class: "rationale"}, j.rationale || "(none given)"));
    }
    return col;
  }

  function render(id) {
    const c = caseById.get(id);
    if (!c) return;
    current = id;
    for (const b of listEl.querySelectorAll("button")) {
      b.classList.toggle("active", b.dataset.case === id);
    }
    viewEl.textContent = "";
    const head = el("div", {class: "case-head"});
    head.appendChild(el("h3", {}, c.id + "  " + c.case_type.concat(c.charges).join(" \u00b7 ")));
    head.appendChild(el("p", {}, el("strong", {}, "Initial query: "), c.query));
    const facts = el("div", {}, el("strong", {}, "Key facts (" + c.facts.length + "): "));
    for (const f of c.facts) facts.appendChild(factChip(c, f.i, true));
    head.appendChild(facts);
    head.appendChild(el("p", {}, el("strong", {}, "Reference advice: "), c.suggestion));
    viewEl.appendChild(head);
    const chosen = selectedSystems();
    const runs = el("div", {class: "runs", id: "runs"});
    const n = Math.max(1, chosen.length);
    runs.style.gridTemplateColumns = "repeat(" + n + ", minmax(280px, 1fr))";
    for (const label of chosen) runs.appendChild(renderRun(c, label));
    viewEl.appendChild(runs);
    const hash = "#case=" + encodeURIComponent(id);
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }

  for (const c of DATA.cases) {
    const tags = c.case_type.concat(c.charges).join(" \u00b7 ");
    const b = el("button", {type: "button"}, el("span", {class: "cid"}, c.id),
      el("span", {class: "cq"}, tags + " \u2014 " + c.query));
    b.dataset.case = c.id;
    b.addEventListener("click", () => render(c.id));
    listEl.appendChild(el("li", {}, b));
  }
  DATA.systems.forEach((s, k) => {
    const box = el("input", {type: "checkbox", value: s.label});
    box.checked = k < 2;
    box.addEventListener("change", () => { if (current) render(current); });
    pickerEl.appendChild(el("label", {}, box, " " + s.label));
  });
  filterEl.addEventListener("input", () => {
    const q = filterEl.value.trim().toLowerCase();
    for (const li of listEl.children) {
      li.style.display = !q || li.textContent.toLowerCase().includes(q) ? "" : "none";
    }
  });
  const m = /case=([^&]+)/.exec(location.hash);
  const initial = m ? decodeURIComponent(m[1]) : null;
  if (initial && caseById.has(initial)) render(initial);
  else viewEl.appendChild(el("p", {class: "muted"}, "Pick a case on the left."));
  document.body.dataset.viewerReady = "1";
})();
"""
