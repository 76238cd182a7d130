"""``lecode corpus ...``: checks for the people building a dataset, before a build.

- ``lecode corpus check``: reads every transcript of ``corpus.transcripts`` and every
  reviewed file of every reviewer and adjudicator (against the pre-annotation the last
  ``dataset`` build made), listing each problem with file, line and field, and how many fields
  each reviewer changed.
- ``lecode corpus assign``: gives each dialogue its reviewers per stage (``corpus.assign``),
  writes ``assignments.csv`` and ``progress.csv`` and prints the progress per annotator.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def _cmd_check(args: argparse.Namespace) -> int:
    from lecode.config.base import SettingsError
    from lecode.config.experiment import Settings
    from lecode.corpus.inputs import load_pre
    from lecode.corpus.plan import CorpusPlan
    from lecode.corpus.review import ReviewError, import_review
    from lecode.corpus.transcripts import TranscriptError, read_transcripts

    try:
        plan = CorpusPlan(Settings.load(*args.params))
        plan.check()
    except SettingsError as exc:
        print(exc)
        return 1
    status = 0
    try:
        found = read_transcripts(plan.files)
        print(f"transcripts: {len(found)} in {len(plan.files)} file(s), valid")
    except TranscriptError as exc:
        print(exc)
        status = 1
    if not plan.reviewers and not plan.adjudicators:
        return status
    stage1, stage2 = plan.annotation_files("stage1"), plan.annotation_files("stage2")
    if not all(Path(p).is_file() for p in [*stage1, *stage2]):
        print(
            f"reviews by {[*plan.reviewers, *plan.adjudicators]}: not checked, the "
            "pre-annotation of these settings is not built; run the target dataset"
        )
        return status
    pre1, pre2 = load_pre(stage1, stage2)
    for reviewer in [*plan.reviewers, *plan.adjudicators]:
        files = plan.reviews_of(reviewer)
        try:
            review = import_review(files, reviewer, pre1, pre2)
        except ReviewError as exc:
            print(f"reviewer {reviewer}: {exc}")
            status = 1
            continue
        changed = sum(c.changed for c in review.changes)
        print(
            f"reviewer {reviewer}: {len(review.stage1)} stage-1 and {len(review.stage2)} stage-2 "
            f"file(s), valid; {changed} of {len(review.changes)} fields changed"
        )
    return status


def _cmd_assign(args: argparse.Namespace) -> int:
    from lecode.config.base import SettingsError
    from lecode.config.experiment import Settings
    from lecode.corpus.assign import (
        ASSIGNMENTS_FILE,
        PROGRESS_FILE,
        assign,
        assignments_csv,
        progress,
        progress_csv,
        progress_table,
    )
    from lecode.corpus.plan import CorpusPlan
    from lecode.recordio import atomic_write_text

    try:
        plan = CorpusPlan(Settings.load(*args.params))
        plan.check()
    except SettingsError as exc:
        print(exc)
        return 1
    settings = plan.corpus.assign
    if not settings.stage1 and not settings.stage2:
        print("corpus.assign: no annotators under stage1 or stage2")
        return 1
    ids = [i for f in plan.files for i in plan.ids[f]]
    rows = assign(ids, settings)
    done = progress(rows, plan.corpus.review_dir)
    out = Path(args.out or plan.corpus.review_export)
    atomic_write_text(out / ASSIGNMENTS_FILE, assignments_csv(rows))
    atomic_write_text(out / PROGRESS_FILE, progress_csv(done))
    print(f"{len(rows)} assignment(s) of {len(ids)} dialogue(s) in {out / ASSIGNMENTS_FILE}")
    print(progress_table(done), end="")
    return 0


def _pre_of(plan: Any) -> tuple[Any, Any] | None:
    from lecode.corpus.inputs import load_pre

    stage1, stage2 = plan.annotation_files("stage1"), plan.annotation_files("stage2")
    if not all(Path(p).is_file() for p in [*stage1, *stage2]):
        return None
    return load_pre(stage1, stage2)


def _cmd_ls_import(args: argparse.Namespace) -> int:
    import json

    from lecode.config.base import SettingsError
    from lecode.config.experiment import Settings
    from lecode.corpus.labelstudio import read_export, validate, write_sheets
    from lecode.corpus.plan import CorpusPlan
    from lecode.corpus.review import ReviewError

    try:
        plan = CorpusPlan(Settings.load(*args.params))
    except SettingsError as exc:
        print(exc)
        return 1
    users: dict[str, str] = {}
    if args.users:
        users.update(json.loads(Path(args.users).read_text(encoding="utf-8")))
    for item in args.user or []:
        key, _, name = item.partition("=")
        if not name:
            print(f"--user {item!r}: expected ID=NAME")
            return 1
        users[key] = name
    pre = _pre_of(plan)
    if pre is None:
        print("the pre-annotation of these settings is not built; run the target dataset")
        return 1
    try:
        imported = read_export(args.export, plan.corpus.labelstudio_project, users)
        validate(imported, *pre)
    except ReviewError as exc:
        print(exc)
        return 1
    out = args.review_dir or plan.corpus.review_dir
    written = write_sheets(imported, out)
    for who, imp in sorted(imported.items()):
        print(f"{who}: {len(imp.rows)} reviewed dialogue stage(s) -> {Path(out) / who}")
    print(f"{len(written)} sheet(s) written")
    return 0


def _client(args: argparse.Namespace) -> Any:
    import os

    from lecode.corpus.labelstudio_client import LabelStudio

    token = args.token or os.environ.get("LABEL_STUDIO_API_KEY", "")
    return LabelStudio(args.url, token)


def _cmd_ls_push(args: argparse.Namespace) -> int:
    from lecode.config.experiment import Settings
    from lecode.corpus.labelstudio import STAGE1_CONFIG, STAGE2_CONFIG
    from lecode.corpus.labelstudio_client import LabelStudioError, push
    from lecode.corpus.plan import CorpusPlan

    plan = CorpusPlan(Settings.load(*args.params))
    tasks = Path(args.tasks_dir or Path(plan.review_export_current) / "labelstudio")
    try:
        for stage, config in ((1, STAGE1_CONFIG), (2, STAGE2_CONFIG)):
            title = f"{plan.corpus.labelstudio_project} stage {stage}"
            pid = push(_client(args), title, config, tasks / f"stage{stage}.tasks.json")
            print(f"stage {stage}: project {pid} ({title})")
    except (LabelStudioError, OSError) as exc:
        print(exc)
        return 1
    return 0


def _cmd_ls_pull(args: argparse.Namespace) -> int:
    import json

    from lecode.corpus.labelstudio_client import LabelStudioError, pull

    try:
        users = pull(_client(args), args.project, args.out)
    except (LabelStudioError, OSError) as exc:
        print(exc)
        return 1
    side = Path(args.out).with_suffix(".users.json")
    side.write_text(json.dumps(users, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"project {args.project}: export in {args.out}, users in {side}")
    return 0


def register(sub: Any) -> None:
    """Add ``corpus`` to the ``lecode`` command's subparsers."""
    p = sub.add_parser("corpus", help="building a dataset from transcripts: checks")
    commands = p.add_subparsers(dest="corpus_command", required=True)
    c = commands.add_parser("check", help="check the transcripts and the reviewed files")
    c.add_argument("--params", action="append", default=None)
    c.set_defaults(func=_cmd_check)
    a = commands.add_parser(
        "assign", help="who reviews which dialogue (corpus.assign), and each one's progress"
    )
    a.add_argument("--params", action="append", default=None)
    a.add_argument("--out", default=None, help="folder (default: corpus.review_export)")
    a.set_defaults(func=_cmd_assign)
    li = commands.add_parser(
        "ls-import", help="a Label Studio JSON export -> review sheets under corpus.review_dir"
    )
    li.add_argument("export")
    li.add_argument("--params", action="append", default=None)
    li.add_argument("--user", action="append", help="ID=NAME: a Label Studio user's reviewer name")
    li.add_argument("--users", help="JSON {user id or e-mail: name} (ls-pull writes one)")
    li.add_argument("--review-dir", default=None)
    li.set_defaults(func=_cmd_ls_import)
    for name, func, text in (
        ("ls-push", _cmd_ls_push, "create one Label Studio project per stage with the tasks"),
        ("ls-pull", _cmd_ls_pull, "a Label Studio project's JSON export and its users"),
    ):
        c2 = commands.add_parser(name, help=text)
        c2.add_argument("--url", required=True)
        c2.add_argument("--token", default=None, help="default: $LABEL_STUDIO_API_KEY")
        c2.add_argument("--params", action="append", default=None)
        if name == "ls-push":
            c2.add_argument("--tasks-dir", default=None)
        else:
            c2.add_argument("--project", type=int, required=True)
            c2.add_argument("--out", required=True)
        c2.set_defaults(func=func)
