"""The strategy registry: every declared strategy has its templates, the forecast counts the
calls a dialogue against the mock endpoint really makes, and a strategy added as template files
plus one declaration module (in a copy of the package) runs with per-dialogue state."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lecode import strategies
from lecode.forecast import dialogue_calls
from lecode.llm.errors import LLMConfigError
from lecode.llm.templates import PROMPTS_DIR, load_template
from lecode.strategies.calls import Call, Gate
from lecode.strategies.declarations import ClientStrategy, ExpertStrategy
from lecode.strategies.program import ClientProgram, ExpertProgram
from tests.support import plan_first, recap_each_turn
from tests.support.cases import synthetic_cases, write_jsonl
from tests.support.strategy_run import report

REPO = Path(__file__).resolve().parent.parent
PAPER_STRATEGIES = {"zero_shot", "zero_shot_json", "few_shot", "mediq", "mediq_threshold"}


@pytest.fixture(scope="module")
def cases_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_jsonl(tmp_path_factory.mktemp("cases") / "cases.jsonl", synthetic_cases(6))


def test_names_list_the_declaration_files_without_importing_them() -> None:
    assert set(strategies.names("expert")) >= PAPER_STRATEGIES
    assert {"first_person_dialogue", "instruct_dialogue", "instruct_question"} <= set(
        strategies.names("client")
    )
    code = (
        "import sys; from lecode import strategies; strategies.names('expert'); "
        "strategies.names('client'); "
        "print([m for m in sys.modules if m.startswith('lecode.strategies.')])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", strategies.names("expert"))
def test_every_expert_strategy_declares_existing_templates(name: str) -> None:
    declared = strategies.get("expert", name)
    assert isinstance(declared, ExpertProgram) and declared.name == name
    for key, template in declared.templates.items():
        assert (PROMPTS_DIR / f"{template}.txt").is_file(), (name, key)
        load_template(template)  # parses
    # every placeholder of every call is given: playing it renders every call it makes
    assert dialogue_calls(name, 2, 3) and dialogue_calls(name, 3, 3)
    if isinstance(declared, ExpertStrategy):  # and every call a declaration can make
        values = {"dialogue": "d", "asked": 1, "remaining": 2, "max_turns": 3}
        values[declared.opening_value] = "p"
        for call in declared.calls():
            template = load_template(declared.templates[call.template])
            if call.closing is not None:
                template.render(**values, closing=template.section(call.closing, **values))
            else:
                template.render(**values)
    ident = strategies.identity("expert", name)
    expected = {f"expert/{Path(t).name}.txt" for t in declared.templates.values()}
    assert set(ident) == expected | {f"strategy/expert/{name}"}


@pytest.mark.parametrize("name", strategies.names("client"))
def test_every_client_strategy_declares_existing_templates(name: str) -> None:
    declared = strategies.get("client", name)
    assert isinstance(declared, ClientProgram) and declared.name == name
    if isinstance(declared, ClientStrategy):
        assert [c.purpose for c in declared.question_calls()] == ["answer"]
    assert set(strategies.identity("client", name)) == {
        f"client/{name}.txt",
        f"strategy/client/{name}",
    }


def test_identity_of_zero_shot() -> None:
    """Template digests as before (file bytes), plus the declaration's code digest."""
    ident = strategies.identity("expert", "zero_shot")
    assert sorted(ident) == [
        "expert/advise_only.txt",
        "expert/reask.txt",
        "expert/zero_shot.txt",
        "strategy/expert/zero_shot",
    ]
    raw = (PROMPTS_DIR / "expert" / "zero_shot.txt").read_bytes()
    # digest_files hashes (relative name, bytes): a different template digest than the file's
    assert ident["expert/zero_shot.txt"] != hashlib.sha256(raw).hexdigest()[:16]
    assert len(ident["strategy/expert/zero_shot"]) == 16


def test_calls_per_turn_of_the_gate_and_the_forced_advice() -> None:
    mediq = strategies.expert_strategy("mediq_threshold")
    (gate,) = mediq.turn_calls(first=True, forced=False)
    assert isinstance(gate, Gate) and gate.call.purpose == "confidence_score" and mediq.scored
    assert [c.purpose for c in mediq.turn_calls(first=False, forced=True)] == ["advise"]  # type: ignore[union-attr]
    # 2 questions, max 10: (gate + ask) x 2, then gate + advise
    calls = [c.purpose for _, c in dialogue_calls("mediq_threshold", 2, 10)]
    assert calls == ["confidence_score", "ask"] * 2 + ["confidence_score", "advise"]
    # 3 questions, max 3: the fourth turn is forced advice without a gate
    calls = [c.purpose for _, c in dialogue_calls("mediq", 3, 3)]
    assert calls == ["confidence", "ask"] * 3 + ["advise"]
    assert [c.purpose for _, c in dialogue_calls("few_shot", 2, 5)] == ["turn"] * 3


def test_unknown_strategies_and_bad_declarations_are_named() -> None:
    with pytest.raises(LLMConfigError, match="'nope' is not declared; choose one of .*zero_shot"):
        strategies.get("expert", "nope")
    with pytest.raises(LLMConfigError, match="not 'judge'"):
        strategies.names("judge")
    with pytest.raises(LLMConfigError, match=r"template keys \['ask'\]"):
        ExpertStrategy(
            name="x",
            templates={"advise": "expert/advise_only", "reask": "expert/reask"},
            turn=Call("ask", "ask", "question"),
            forced=Call("advise", "advise", "advice"),
        )
    with pytest.raises(LLMConfigError, match="call 'advise' replies 'move'; it must reply advice"):
        ExpertStrategy(
            name="x",
            templates={"advise": "expert/advise_only", "reask": "expert/reask"},
            turn=Call("turn", "advise", "move"),
            forced=Call("advise", "advise", "move"),
        )
    with pytest.raises(LLMConfigError, match="either a turn call or a gate"):
        ExpertStrategy(
            name="x",
            templates={"advise": "expert/advise_only", "reask": "expert/reask"},
            forced=Call("advise", "advise", "advice"),
        )


@pytest.mark.parametrize("name", strategies.names("expert"))
def test_forecast_counts_the_calls_the_mock_dialogues_make(
    name: str, cases_file: Path, tmp_path: Path
) -> None:
    rep = report(cases_file, name, 4, tmp_path / "store")
    stops = set()
    for case_id, r in rep["cases"].items():
        stops.add(r["stop_reason"])
        assert r["stored"] == r["forecast"], case_id
        assert r["expert_calls"] == len(r["forecast"]), case_id
        assert r["client_calls"] == r["questions"] > 0, case_id
    # the six cases end both ways: advice chosen, and advice forced after 4 questions
    assert stops == {"advice", "max_turns"}


# -- a strategy that exists only in this test -------------------------------------------------


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def copy_package(dest: Path) -> Path:
    """A copy of the package and prompts (what a strategy can touch)."""
    import shutil

    for name in ("lecode", "prompts"):
        shutil.copytree(
            REPO / "workflow" / name,
            dest / "workflow" / name,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    return dest


def test_a_new_strategy_is_its_templates_and_one_declaration(
    cases_file: Path, tmp_path: Path
) -> None:
    project = copy_package(tmp_path / "copy")
    before = tree(project / "workflow")
    added = plan_first.add_to(project)
    after = tree(project / "workflow")
    changed = sorted(k for k in after if before.get(k) != after[k])
    assert [f"workflow/{k}" for k in changed] == added and set(before) <= set(after)

    env = {**os.environ, "PYTHONPATH": str(project / "workflow")}
    args = ["--cases", str(cases_file), "--strategy", plan_first.NAME, "--max-turns", "4"]
    run = subprocess.run(
        [sys.executable, "-m", "tests.support.strategy_run", *args, "--store", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    rep = json.loads(run.stdout)
    assert rep["lecode"] == str((project / "workflow" / "lecode").resolve())
    plans = set()
    for case_id, r in rep["cases"].items():
        assert r["stop_reason"] in ("advice", "max_turns"), case_id
        # one private planning call, then the zero-shot turns, as the forecast counts them
        assert r["stored"] == r["forecast"] and r["stored"].count("plan") == 1, case_id
        assert r["expert_calls"] == len(r["forecast"])
        (plan,) = r["private"]
        plans.add(plan)
        # every later call of this dialogue shows this dialogue's plan in its system prompt
        turns = [s for s in r["systems"] if "咨询开始前你拟定了下面的计划" in s]
        assert turns and all(plan in s for s in turns), case_id
    assert len(plans) == len(rep["cases"])  # each dialogue kept its own plan
    # the package without the new strategy does not know it
    with pytest.raises(LLMConfigError):
        strategies.get("expert", plan_first.NAME)


def run_in_copy(project: Path, cases_file: Path, strategy: str, store: Path) -> dict:
    """:func:`tests.support.strategy_run.report` run with the package of ``project``."""
    env = {**os.environ, "PYTHONPATH": str(project / "workflow")}
    args = ["--cases", str(cases_file), "--strategy", strategy, "--max-turns", "4"]
    run = subprocess.run(
        [sys.executable, "-m", "tests.support.strategy_run", *args, "--store", str(store)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    rep: dict = json.loads(run.stdout)
    assert rep["lecode"] == str((project / "workflow" / "lecode").resolve())
    return rep


def test_a_strategy_with_a_private_call_every_turn_and_its_own_rendering(
    cases_file: Path, tmp_path: Path
) -> None:
    """ "Recap each turn" (its own files only) makes a private recap call every turn and never
    shows a call the dialogue: the mock still plays each dialogue's own case and turn (from the
    requests' metadata), so the facts it elicits are its case's, in the case's script; the
    forecast counts exactly the calls it makes."""
    from lecode.mock.casedata import read_cases
    from lecode.mock.players import LawyerScript

    project = copy_package(tmp_path / "copy")
    before = tree(project / "workflow")
    added = recap_each_turn.add_to(project)
    after = tree(project / "workflow")
    changed = sorted(k for k in after if before.get(k) != after[k])
    assert [f"workflow/{k}" for k in changed] == added and set(before) <= set(after)

    rep = run_in_copy(project, cases_file, recap_each_turn.NAME, tmp_path / "s")
    texts = {c.id: c for c in read_cases([cases_file])}
    stops = set()
    for case_id, r in rep["cases"].items():
        case = texts[case_id]
        stops.add(r["stop_reason"])
        # one private recap per turn, then the move; the forecast counts exactly these
        turns = r["questions"] + 1
        assert r["stored"].count("recap") == turns, case_id
        assert r["stored"] == r["forecast"] and r["expert_calls"] == len(r["forecast"]), case_id
        # no call but the first recap shows the initial query: the prompt cannot name the case
        shown = [purpose for purpose, text in r["prompts"] if case.initial_query in text]
        assert shown == ["recap"], case_id
        # the questions are this case's script and the answers this case's facts
        script = LawyerScript.for_case(case)
        asked = [q for q, _ in r["qa"]]
        assert asked == [script.question(case, k) for k in range(min(len(script.targets), 4))]
        answers = [a for _, a in r["qa"] if a != "不知道"]
        assert answers and set(answers) <= set(case.facts), case_id
        assert len(r["dialogues"]) == 2, case_id  # its expert's and its client's
    assert stops == {"advice", "max_turns"}


def test_the_simulate_step_covers_the_registry_machinery_but_no_declaration() -> None:
    """A strategy enters a job's digest through ``identity`` only, so a new one changes no
    step's code digest; the interface every strategy is played through is in the step's
    closure, and the declarative machinery in the identity of the strategies built on it."""
    from lecode.fingerprint import closure

    modules = set(closure("lecode.evaluation.steps.simulate"))
    assert {"lecode.strategies", "lecode.strategies.calls", "lecode.strategies.program"} <= (
        modules
    )
    assert "lecode.strategies.declarations" not in modules
    assert strategies.own_modules("expert", "mediq") == [
        "lecode.strategies.expert.mediq",
        "lecode.strategies.calls",
        "lecode.strategies.declarations",
        "lecode.strategies.program",
    ]
    declared = {
        f"lecode.strategies.{role}.{name}"
        for role in strategies.ROLES
        for name in strategies.names(role)
    }
    assert not modules & declared
