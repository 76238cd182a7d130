"""Steps declared once, jobs planned by each study: every job of every study has the form its
step declares, is found again from its wildcards, and a step runs only under a rule whose
outputs have that form."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pytest

from lecode import fingerprint as fp
from lecode import paths
from lecode.config.experiment import Settings
from lecode.pipeline import Plan
from lecode.plan.index import JobIndex, study_of
from lecode.plan.jobs import Job, Step
from lecode.specs import JobSpec

REPO = Path(__file__).resolve().parent.parent


def declared_output(step: str) -> str:
    """The ``output=paths.X`` of the step's ``STEP = Step(...)``, read from its syntax tree."""
    path = fp.module_file(fp.step_module(step))
    assert path is not None
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "STEP":
            assert isinstance(node.value, ast.Call)
            out = next(k.value for k in node.value.keywords if k.arg == "output")
            assert isinstance(out, ast.Attribute) and ast.unparse(out.value) == "paths"
            return str(getattr(paths, out.attr))
    raise AssertionError(f"{path}: no STEP")


@pytest.fixture(scope="module")
def every_study(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plan]:
    """The mock-LLM configuration with every study on: Table 4, replicates, the sentinel (with
    the judge), the dataset build with its reviewers."""
    settings = Settings.load(REPO / "params.yaml", REPO / "configs" / "mock-llm.yaml")
    data = settings.model_dump(mode="json")
    data["replicates"] = {**data["replicates"], "n": 2, "cases": 2}
    data["reliability"] = {**data["reliability"], "enabled": True}
    data["corpus"] = {**data["corpus"], "reviewers": ["ann_a", "ann_b"]}
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        yield Plan(Settings.parse(data))


def test_every_job_has_the_form_its_step_declares(every_study: Plan) -> None:
    seen = set()
    for study in every_study.studies():
        for job in every_study.study_jobs(study):
            assert study_of(job.step) == study, job.step
            pattern = declared_output(job.step)
            assert paths.matches(pattern, job.output), (job.step, job.output, pattern)
            if job.wildcards:  # a pattern rule: its wildcards name exactly this output
                assert paths.format(pattern, **job.wildcards) == job.output
            assert every_study.job(job.step, job.wildcards) is job
            seen.add(job.step)
    # every declared step has jobs in this configuration except LoRA training (no base model)
    assert seen == set(fp.steps()) - {"sft_train"}


def test_a_path_of_another_configuration_finds_no_job(every_study: Plan) -> None:
    sim = next(every_study.jobs("simulate"))
    assert every_study.job("simulate", {**sim.wildcards, "sim": "0" * 10}) is None


def test_the_planned_inputs_are_what_each_job_reads(every_study: Plan) -> None:
    ev = every_study.evaluation
    job = next(every_study.jobs("score_system"))
    assert job.inputs["shards"] == tuple(ev.shard_files())
    assert len(job.inputs["transcripts"]) == len(ev.shards)
    html = next(every_study.jobs("html_report"))
    assert {"tables", "figures"} <= html.ancient  # digest-named folders: existence decides
    tables = next(every_study.jobs("tables"))
    assert set(tables.inputs["extra_tables"]) == set(every_study.extra_tables())
    assert len(every_study.extra_tables()) == 4  # Table 4, noise, sentinel, agreement
    assert job.calls_llms is False and next(every_study.jobs("simulate")).calls_llms is True


class _Spec(JobSpec):
    step: ClassVar[str] = "probe"
    n: int


def test_a_step_runs_only_under_a_rule_with_its_output_form() -> None:
    ran: list[int] = []
    step = Step(spec=_Spec, run=lambda spec, job: ran.append(spec.n), output=paths.AGGREGATE)
    spec = _Spec(n=3, code="x").to_json()
    step.execute(
        spec, SimpleNamespace(input=[], output=["results/aggregate/0123456789/scores.csv"])
    )
    assert ran == [3]
    with pytest.raises(ValueError, match="the rule and the step disagree"):
        step.execute(spec, SimpleNamespace(input=[], output=["results/other/scores.csv"]))
    assert ran == [3]


def test_a_step_guard_reports_what_it_catches() -> None:
    from contextlib import contextmanager

    caught: list[str] = []

    @contextmanager
    def guard(name: str) -> Iterator[None]:
        try:
            yield
        except KeyError as exc:
            caught.append(f"{name}: {exc}")

    def fail(spec: _Spec, job: object) -> None:
        raise KeyError("field")

    step = Step(spec=_Spec, run=fail, output=paths.AGGREGATE, guard=guard)
    out = SimpleNamespace(input=[], output=["results/aggregate/0123456789/scores.csv"])
    step.execute(_Spec(n=1, code="x").to_json(), out)
    assert caught == ["probe: 'field'"]


def test_a_study_is_listed_only_when_one_of_its_jobs_is_asked_for() -> None:
    listed: list[str] = []

    class Broken:
        def jobs(self) -> Iterator[Job]:
            listed.append("corpus")
            raise RuntimeError("the dataset build reads transcripts that do not exist")

    class One:
        def jobs(self) -> Iterator[Job]:
            listed.append("evaluation")
            spec = _Spec(n=1, code="x")
            yield Job(spec, "a", wildcards={"shard": "000"})

    index = JobIndex({"evaluation": One, "corpus": Broken})
    assert index.of_study("evaluation")[("probe", (("shard", "000"),))].output == "a"
    assert listed == ["evaluation"]
    index.of_study("evaluation")
    assert listed == ["evaluation"]  # listed once
    with pytest.raises(RuntimeError, match="transcripts"):
        index.of_study("corpus")


def test_two_jobs_at_one_path_are_refused() -> None:
    class Twice:
        def jobs(self) -> Iterator[Job]:
            spec = _Spec(n=1, code="x")
            yield Job(spec, "a", wildcards={"shard": "000"})
            yield Job(spec, "b", wildcards={"shard": "000"})

    with pytest.raises(ValueError, match="two jobs of step probe"):
        JobIndex({"evaluation": Twice}).of_study("evaluation")


def rule_blocks() -> dict[str, str]:
    """``{rule name: its text}`` of every rule in ``workflow/rules/*.smk``."""
    blocks: dict[str, str] = {}
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        text = smk.read_text(encoding="utf-8")
        starts = [(m.start(), m.group(1)) for m in re.finditer(r"^\s*rule (\w+):", text, re.M)]
        ends = [start for start, _ in starts[1:]] + [len(text)] if starts else []
        for (start, name), end in zip(starts, ends, strict=True):
            blocks[name] = text[start:end]
    return blocks


def test_each_step_has_one_rule_that_runs_it_through_its_declaration() -> None:
    """A rule that runs code is a step's: it runs the one step script, names its step, and
    takes its inputs and spec from the step's helpers (no helper written for one rule)."""
    ran: dict[str, str] = {}
    for name, block in rule_blocks().items():
        if "script:" not in block:
            continue
        assert '"../scripts/step.py"' in block, name
        steps = set(re.findall(r"STEPS\.(\w+)\.", block))
        assert len(steps) == 1, (name, steps)
        step = steps.pop()
        assert f"step=STEPS.{step}.name" in block and f"spec=STEPS.{step}.spec" in block, name
        assert f"STEPS.{step}.inputs" in block, name
        assert step not in ran, (step, ran.get(step), name)
        ran[step] = name
    assert set(ran) == set(fp.steps())
    scripts = sorted(p.name for p in (REPO / "workflow" / "scripts").iterdir())
    assert scripts == ["step.py"]
