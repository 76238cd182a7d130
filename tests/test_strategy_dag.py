"""Strategies added to a finished run schedule only their own jobs.

A copy of the project runs ``all_tables`` with one LLM expert (``zero_shot``) against the mock
endpoint; then two strategies are added to the copy, each as its template files and one module:
"plan first" (a declaration, :mod:`tests.support.plan_first`) and "recap each turn" (a program
with a private call every turn and its own rendering, :mod:`tests.support.recap_each_turn`),
and the configuration names them. A dry run must schedule each new system's simulate jobs and
what follows from them (matching, judging, scoring, then the tables), and no job of the
existing system.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.support import plan_first, recap_each_turn
from tests.test_llm_dag import Mock, job_env, new_project, run_ok, snakemake

#: rules whose jobs belong to one system (their outputs name its expert and strategy)
PER_SYSTEM = ("simulate", "match_facts", "judge_advice", "score_system")
JOB = re.compile(r"^(?:local)?rule (\w+):\n((?:    .*\n)+)", re.M)


def scheduled(dry_run: str) -> list[tuple[str, str]]:
    """(rule, output) of every job a dry run lists."""
    out = []
    for m in JOB.finditer(dry_run):
        output = next(
            (ln.split(":", 1)[1].strip() for ln in m.group(2).splitlines() if "output:" in ln), ""
        )
        out.append((m.group(1), output))
    return out


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_new_strategy_schedules_only_its_own_jobs(tmp_path: Path) -> None:
    mock = Mock.spawn()
    try:
        project = new_project(tmp_path, mock)
        cfg_path = project / "llm.yaml"
        cfg = yaml.safe_load(cfg_path.read_text(encoding="utf-8"))
        cfg["experts"] = [{"model": "mock", "strategy": "zero_shot"}]
        cfg["judge"] = None
        cfg_path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
        run_ok(project, env=job_env())
    finally:
        mock.stop()

    added = [plan_first.NAME, recap_each_turn.NAME]
    plan_first.add_to(project)
    recap_each_turn.add_to(project)
    cfg["experts"] += [{"model": "mock", "strategy": name} for name in added]
    cfg_path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    run = snakemake(project, "all_tables", "-n", env=job_env())
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-6000:]
    jobs = scheduled(run.stdout)
    own = [(rule, o) for rule, o in jobs if rule in PER_SYSTEM]
    assert not [j for j in jobs if "/zero_shot/" in j[1]], jobs
    n_shards = cfg["dataset"]["n_shards"]
    for name in added:
        mine = [(rule, o) for rule, o in own if f"/mock/{name}/" in o]
        assert {rule for rule, _ in mine} >= {"simulate", "match_facts", "score_system"}, jobs
        assert sum(rule == "simulate" for rule, _ in mine) == n_shards, (name, jobs)
    assert all(any(f"/mock/{name}/" in o for name in added) for _, o in own), own
