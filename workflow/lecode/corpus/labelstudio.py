"""The review round trip through Label Studio (the CSV sheets stay the other way).

Export (:func:`tasks`): one task per dialogue and stage, its pre-annotation as a *prediction*
the annotator accepts or corrects, under the labelling configurations shipped here
(:data:`STAGE1_CONFIG`, :data:`STAGE2_CONFIG`):

- stage 1: per utterance its speaker (用户/律师), intent (1-10), corrected text, a delete box,
  an insertion box (``speaker|intent|text`` lines: utterances to add after it) and a comment;
- stage 2: the initial query, per key fact its corrected text, importance (1-3) and a delete
  box, new facts (``importance|text`` lines), the advice summary, case and charge types (``;``
  separated) and a comment.

Import (:func:`read_export`): Label Studio's JSON export becomes, per annotator, the rows of
the review sheets (``row`` ties an utterance or fact to the pre-annotated one), validated and
turned into change records by the same code as the sheets (:mod:`lecode.corpus.review`);
:func:`write_sheets` writes them as ``<review_dir>/<annotator>/<id>.stage{1,2}.csv`` so that
the build, the agreement table and the adjudication read them like any review. Every problem
names the file, the task and the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lecode.corpus.annotations import SPEAKER_ZH, Stage1Annotation, Stage2Annotation
from lecode.corpus.review import (
    COMMENT,
    STAGE1_COLUMNS,
    STAGE2_COLUMNS,
    ReviewError,
    stage1_from_rows,
    stage2_from_rows,
)
from lecode.corpus.roles_review import bom_csv
from lecode.recordio import atomic_write_text
from lecode.records import INTENT_LABELS

#: Marks the tasks of this project (a task without it, or with another, is refused).
PROJECT_KEY = "lecode_project"
SPEAKERS = ("用户", "律师")
INTENTS = tuple(f"{k} {v}" for k, v in sorted(INTENT_LABELS.items()))
IMPORTANCE = ("1", "2", "3")
DELETE = "delete"


def _choices(name: str, to: str, values: Sequence[str]) -> str:
    inner = "".join(f'<Choice value="{v}"/>' for v in values)
    return (
        f'<Choices name="{name}" toName="{to}" choice="single" showInline="true">{inner}</Choices>'
    )


STAGE1_CONFIG = f"""<View>
  <Header value="$lecode_id"/>
  <Repeater on="$utterances" indexFlag="{{{{idx}}}}">
    <View>
      <Text name="utt_{{{{idx}}}}" value="$utterances[{{{{idx}}}}].text"/>
      {_choices("speaker_{{idx}}", "utt_{{idx}}", SPEAKERS)}
      {_choices("intent_{{idx}}", "utt_{{idx}}", INTENTS)}
      <TextArea name="text_{{{{idx}}}}" toName="utt_{{{{idx}}}}" editable="true"
        maxSubmissions="1" rows="2"/>
      {_choices("delete_{{idx}}", "utt_{{idx}}", (DELETE,))}
      <TextArea name="insert_{{{{idx}}}}" toName="utt_{{{{idx}}}}"
        placeholder="用户|3|补充的话" rows="1"/>
      <TextArea name="comment_{{{{idx}}}}" toName="utt_{{{{idx}}}}" placeholder="备注" rows="1"/>
    </View>
  </Repeater>
</View>
"""

STAGE2_CONFIG = f"""<View>
  <Header value="$lecode_id"/>
  <Paragraphs name="dialogue" value="$dialogue" layout="dialogue" nameKey="speaker"
    textKey="text"/>
  <TextArea name="initial_query" toName="dialogue" editable="true" maxSubmissions="1" rows="2"/>
  <Repeater on="$facts" indexFlag="{{{{idx}}}}">
    <View>
      <Text name="fact_{{{{idx}}}}" value="$facts[{{{{idx}}}}].text"/>
      <TextArea name="fact_text_{{{{idx}}}}" toName="fact_{{{{idx}}}}" editable="true"
        maxSubmissions="1" rows="1"/>
      {_choices("importance_{{idx}}", "fact_{{idx}}", IMPORTANCE)}
      {_choices("fact_delete_{{idx}}", "fact_{{idx}}", (DELETE,))}
    </View>
  </Repeater>
  <TextArea name="new_facts" toName="dialogue" placeholder="2|新的关键事实（每行一条）" rows="3"/>
  <TextArea name="suggestion" toName="dialogue" editable="true" maxSubmissions="1" rows="4"/>
  <TextArea name="case_type" toName="dialogue" editable="true" maxSubmissions="1" rows="1"/>
  <TextArea name="charge_type" toName="dialogue" editable="true" maxSubmissions="1" rows="1"/>
  <TextArea name="comment" toName="dialogue" placeholder="备注" rows="1"/>
</View>
"""


def _choice(name: str, to: str, value: str) -> dict[str, Any]:
    return {"from_name": name, "to_name": to, "type": "choices", "value": {"choices": [value]}}


def _text(name: str, to: str, value: str) -> dict[str, Any]:
    return {"from_name": name, "to_name": to, "type": "textarea", "value": {"text": [value]}}


def stage1_task(s: Stage1Annotation, project: str) -> dict[str, Any]:
    result: list[dict[str, Any]] = []
    for k, u in enumerate(s.dialogue):
        to = f"utt_{k}"
        result += [
            _choice(f"speaker_{k}", to, SPEAKER_ZH[u.speaker]),
            _choice(f"intent_{k}", to, INTENTS[u.intent - 1]),
            _text(f"text_{k}", to, u.text),
        ]
    return {
        "data": {
            "lecode_id": s.id,
            "lecode_stage": 1,
            PROJECT_KEY: project,
            "utterances": [
                {"idx": k, "speaker": SPEAKER_ZH[u.speaker], "text": u.text}
                for k, u in enumerate(s.dialogue)
            ],
        },
        "predictions": [{"model_version": s.annotator, "result": result}],
    }


def stage2_task(s2: Stage2Annotation, s1: Stage1Annotation, project: str) -> dict[str, Any]:
    result = [_text("initial_query", "dialogue", s2.initial_query)]
    for k, f in enumerate(s2.facts):
        to = f"fact_{k}"
        result += [
            _text(f"fact_text_{k}", to, f.text),
            _choice(f"importance_{k}", to, str(f.importance)),
        ]
    result += [
        _text("suggestion", "dialogue", s2.suggestion),
        _text("case_type", "dialogue", ";".join(s2.case_type)),
        _text("charge_type", "dialogue", ";".join(s2.charge_type)),
    ]
    result = [r for r in result if r["value"].get("text") != [""]]
    return {
        "data": {
            "lecode_id": s2.id,
            "lecode_stage": 2,
            PROJECT_KEY: project,
            "dialogue": [{"speaker": SPEAKER_ZH[u.speaker], "text": u.text} for u in s1.dialogue],
            "facts": [{"idx": k, "text": f.text} for k, f in enumerate(s2.facts)],
        },
        "predictions": [{"model_version": s2.annotator, "result": result}],
    }


def tasks(
    stage1: Sequence[Stage1Annotation],
    stage2: Sequence[Stage2Annotation],
    project: str,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(stage-1 tasks, stage-2 tasks) with the pre-annotation as predictions."""
    by_id = {s.id: s for s in stage1}
    return (
        [stage1_task(s, project) for s in stage1],
        [stage2_task(s, by_id[s.id], project) for s in stage2 if s.id in by_id],
    )


def write_tasks(
    stage1: Sequence[Stage1Annotation],
    stage2: Sequence[Stage2Annotation],
    out_dir: str | Path,
    project: str,
) -> list[Path]:
    """``labelstudio/stage{1,2}.tasks.json`` and ``labelstudio/stage{1,2}.config.xml``."""
    t1, t2 = tasks(stage1, stage2, project)
    out = Path(out_dir)
    files = {
        "stage1.tasks.json": json.dumps(t1, ensure_ascii=False, indent=1) + "\n",
        "stage2.tasks.json": json.dumps(t2, ensure_ascii=False, indent=1) + "\n",
        "stage1.config.xml": STAGE1_CONFIG,
        "stage2.config.xml": STAGE2_CONFIG,
    }
    for name, text in files.items():
        atomic_write_text(out / name, text)
    return [out / n for n in files]


# -- import ----------------------------------------------------------------------------------


@dataclass
class Imported:
    """One annotator's reviews from a Label Studio export: sheet rows by (dialogue, stage)."""

    reviewer: str
    rows: dict[tuple[str, int], list[tuple[str, dict[str, str]]]] = field(default_factory=dict)


class _Task:
    def __init__(self, path: Path, k: int, raw: Any, problems: list[str]) -> None:
        self.where = f"{path}: task {raw.get('id', k) if isinstance(raw, dict) else k}"
        self.problems = problems
        self.raw = raw if isinstance(raw, dict) else {}

    def bad(self, fieldname: str, message: str) -> None:
        self.problems.append(f"{self.where}: field {fieldname!r}: {message}")


def _values(result: Sequence[Any], task: _Task) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for r in result:
        if not isinstance(r, dict) or "from_name" not in r or not isinstance(r.get("value"), dict):
            task.bad("result", f"not a Label Studio result: {str(r)[:60]}")
            continue
        v = r["value"]
        if "choices" in v:
            out[r["from_name"]] = list(v["choices"])
        elif "text" in v:
            texts = v["text"] if isinstance(v["text"], list) else [v["text"]]
            out[r["from_name"]] = "\n".join(str(t) for t in texts).strip()
        else:
            task.bad(r["from_name"], f"unsupported value {sorted(v)}")
    return out


def _one(values: dict[str, Any], name: str, allowed: Sequence[str], task: _Task) -> str | None:
    got = values.get(name)
    if not got:
        task.bad(name, "missing")
        return None
    if len(got) != 1 or got[0] not in allowed:
        task.bad(name, f"unknown label {got!r}; the configuration has {list(allowed)[:4]}...")
        return None
    return str(got[0])


def _stage1_rows(
    data: dict[str, Any], values: dict[str, Any], task: _Task
) -> list[tuple[str, dict[str, str]]]:
    utts = data.get("utterances")
    if not isinstance(utts, list) or not utts:
        task.bad("data.utterances", "missing or empty")
        return []
    rows: list[tuple[str, dict[str, str]]] = []
    for k, u in enumerate(utts):
        where = f"{task.where}: utterance {k}"
        if values.get(f"delete_{k}") == [DELETE]:
            continue
        speaker = _one(values, f"speaker_{k}", SPEAKERS, task)
        intent = _one(values, f"intent_{k}", INTENTS, task)
        text = values.get(f"text_{k}") or str(u.get("text", "") if isinstance(u, dict) else "")
        if speaker is None or intent is None:
            continue
        rows.append(
            (
                where,
                {
                    "row": str(k),
                    "speaker": speaker,
                    "text": text,
                    "intent": intent,
                    COMMENT: values.get(f"comment_{k}", ""),
                },
            )
        )
        for line in (values.get(f"insert_{k}") or "").splitlines():
            parts = [p.strip() for p in line.split("|", 2)]
            if not line.strip():
                continue
            if len(parts) != 3 or parts[0] not in SPEAKERS:
                task.bad(f"insert_{k}", f"{line[:30]!r} is not 'speaker|intent|text'")
                continue
            rows.append(
                (
                    f"{where} (inserted)",
                    {
                        "row": "",
                        "speaker": parts[0],
                        "intent": parts[1],
                        "text": parts[2],
                        COMMENT: "",
                    },
                )
            )
    return rows


def _stage2_rows(
    data: dict[str, Any], values: dict[str, Any], task: _Task
) -> list[tuple[str, dict[str, str]]]:
    facts = data.get("facts")
    if not isinstance(facts, list):
        task.bad("data.facts", "missing")
        return []
    note = values.get("comment", "")
    rows: list[tuple[str, dict[str, str]]] = []

    def row(fieldname: str, text: str, r: str = "", importance: str = "", c: str = "") -> None:
        rows.append(
            (
                f"{task.where}: {fieldname}",
                {
                    "field": fieldname.split("[")[0],
                    "row": r,
                    "text": text,
                    "importance": importance,
                    COMMENT: c,
                },
            )
        )

    for name in ("initial_query", "suggestion"):
        if name not in values:
            task.bad(name, "missing")
    row("initial_query", values.get("initial_query", ""), c=note)
    for k, f in enumerate(facts):
        if values.get(f"fact_delete_{k}") == [DELETE]:
            continue
        imp = _one(values, f"importance_{k}", IMPORTANCE, task)
        if imp is None:
            continue
        text = values.get(f"fact_text_{k}") or str(f.get("text", "") if isinstance(f, dict) else "")
        row(f"fact[{k}]", text, str(k), imp)
    for line in (values.get("new_facts") or "").splitlines():
        if not line.strip():
            continue
        imp, _, text = (p.strip() for p in line.partition("|"))
        if imp not in IMPORTANCE or not text:
            task.bad("new_facts", f"{line[:30]!r} is not 'importance|fact' (importance 1-3)")
            continue
        row("fact[new]", text, "", imp)
    row("suggestion", values.get("suggestion", ""))
    for name in ("case_type", "charge_type"):
        if name in values:
            row(name, values[name])
    return rows


def _reviewer(annotation: dict[str, Any], users: Mapping[str, str]) -> str:
    """The reviewer name of an annotation: ``users`` maps a user id or e-mail to a name or an
    e-mail; an e-mail gives its local part."""
    who = annotation.get("completed_by")
    key = str(who.get("email") or who.get("id")) if isinstance(who, dict) else str(who)
    name = users.get(key, key)
    if "@" in name:
        return name.split("@")[0]
    return f"ls_user_{name}" if name.isdigit() else name


def read_export(
    path: str | Path, project: str, users: Mapping[str, str] | None = None
) -> dict[str, Imported]:
    """The annotations of a Label Studio JSON export by reviewer (``users`` maps a Label
    Studio user id or e-mail to a reviewer name; default: the e-mail's local part)."""
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReviewError(
            [f"{p}:0: field '<json>': not a Label Studio JSON export ({exc})"]
        ) from None
    if not isinstance(raw, list):
        raise ReviewError([f"{p}:0: field '<json>': expected a list of tasks (export type JSON)"])
    problems: list[str] = []
    out: dict[str, Imported] = {}
    for k, item in enumerate(raw):
        task = _Task(p, k, item, problems)
        data = task.raw.get("data")
        if not isinstance(data, dict):
            task.bad("data", "missing")
            continue
        if data.get(PROJECT_KEY) != project:
            task.bad(
                f"data.{PROJECT_KEY}",
                f"{data.get(PROJECT_KEY)!r}: a task of another project (expected {project!r})",
            )
            continue
        did, stage = data.get("lecode_id"), data.get("lecode_stage")
        if not isinstance(did, str) or stage not in (1, 2):
            task.bad("data.lecode_id", "missing dialogue id or stage")
            continue
        task.where += f" ({did}, stage {stage})"
        for ann in task.raw.get("annotations") or []:
            if not isinstance(ann, dict) or ann.get("was_cancelled"):
                continue
            values = _values(ann.get("result") or [], task)
            rows = (_stage1_rows if stage == 1 else _stage2_rows)(data, values, task)
            who = _reviewer(ann, users or {})
            out.setdefault(who, Imported(who)).rows[did, stage] = rows
    if problems:
        raise ReviewError(problems)
    return out


def validate(
    imported: Mapping[str, Imported],
    pre1: Mapping[str, Stage1Annotation],
    pre2: Mapping[str, Stage2Annotation],
) -> None:
    """The same checks and change records as the sheets; every problem in one error."""
    problems: list[str] = []
    for imp in imported.values():
        for (did, stage), rows in imp.rows.items():
            pre = (pre1 if stage == 1 else pre2).get(did)
            if pre is None:
                where = rows[0][0] if rows else did
                problems.append(f"{where}: field 'lecode_id': no pre-annotated dialogue {did!r}")
                continue
            try:
                if stage == 1:
                    stage1_from_rows(rows, rows[0][0] if rows else did, pre, imp.reviewer)  # type: ignore[arg-type]
                else:
                    stage2_from_rows(rows, rows[0][0] if rows else did, pre, imp.reviewer)  # type: ignore[arg-type]
            except ReviewError as exc:
                problems.extend(exc.problems)
    if problems:
        raise ReviewError(problems)


def write_sheets(imported: Mapping[str, Imported], review_dir: str | Path) -> list[Path]:
    """Each annotator's reviews as the review sheets under ``<review_dir>/<annotator>/``."""
    written = []
    for imp in imported.values():
        for (did, stage), rows in sorted(imp.rows.items()):
            columns = (*(STAGE1_COLUMNS if stage == 1 else STAGE2_COLUMNS), COMMENT)
            path = Path(review_dir) / imp.reviewer / f"{did}.stage{stage}.csv"
            atomic_write_text(path, bom_csv([columns, *[[r[c] for c in columns] for _, r in rows]]))
            written.append(path)
    return written
