"""Dry run: forecast LLM calls, tokens and cost of a configuration before spending anything.

The forecast is analytic: every test case (read by the workflow's loader; after
``dataset.limit``, chosen as the workflow chooses them, :func:`lecode.shards.select`) is
simulated on paper with ``questions`` clarifying questions (default: ``simulation.max_turns``,
the upper bound), using the real prompt templates and case texts for prompt sizes and fixed
typical lengths for replies. Tokens are estimated as characters x ``tokens_per_char``. Requests
already in the response store are not subtracted (their keys depend on the replies), so the
forecast is an upper bound for a rerun.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lecode import strategies
from lecode.config.experiment import Settings
from lecode.config.models import OpenAIEntry, VLLMEntry
from lecode.config.roles import ExpertRole
from lecode.dataset import load_cases
from lecode.llm.spec import ModelSpec
from lecode.llm.templates import PromptTemplate, load_strategy
from lecode.records import Case
from lecode.shards import select
from lecode.strategies.calls import Call, Gate

QUESTION_CHARS = 40
ANSWER_CHARS = 40
ADVICE_CHARS = 400
JUDGE_REPLY_CHARS = 600  # per-dimension reasoning, then six scores as JSON
CONFIDENCE_REPLY_CHARS = 3
TEXT_REPLY_CHARS = 200  # a private plan


@dataclass
class Line:
    role: str
    model: str
    calls: int = 0
    prompt_chars: int = 0
    completion_chars: int = 0
    price: tuple[float, float] = (0.0, 0.0)

    def tokens(self, per_char: float) -> tuple[int, int]:
        return round(self.prompt_chars * per_char), round(self.completion_chars * per_char)

    def cost(self, per_char: float) -> float:
        p, c = self.tokens(per_char)
        return (p * self.price[0] + c * self.price[1]) / 1000.0


@dataclass
class Forecast:
    cases: int
    questions: int
    tokens_per_char: float
    lines: dict[tuple[str, str], Line] = field(default_factory=dict)

    def add(self, role: str, spec: ModelSpec, prompt: int, completion: int, calls: int = 1) -> None:
        line = self.lines.get((role, spec.name))
        if line is None:
            price = (spec.price.prompt, spec.price.completion)
            line = self.lines[(role, spec.name)] = Line(role, spec.name, price=price)
        line.calls += calls
        line.prompt_chars += prompt
        line.completion_chars += completion

    def rows(self) -> list[dict[str, Any]]:
        out = []
        for (role, model), line in sorted(self.lines.items()):
            p, c = line.tokens(self.tokens_per_char)
            out.append(
                {
                    "role": role,
                    "model": model,
                    "calls": line.calls,
                    "prompt_tokens": p,
                    "completion_tokens": c,
                    "cost": round(line.cost(self.tokens_per_char), 4),
                }
            )
        return out

    def render(self) -> str:
        rows = self.rows()
        head = (
            f"forecast: {self.cases} cases, "
            f"{self.questions} questions per dialogue, {self.tokens_per_char} tokens/char"
        )
        lines = [
            head,
            f"{'role':8s} {'model':24s} {'calls':>8s} {'prompt':>12s} "
            f"{'completion':>12s} {'cost':>10s}",
        ]
        total = 0.0
        for r in rows:
            total += r["cost"]
            lines.append(
                f"{r['role']:8s} {r['model']:24s} {r['calls']:8d} {r['prompt_tokens']:12d} "
                f"{r['completion_tokens']:12d} {r['cost']:10.4f}"
            )
        lines.append(f"total cost {total:.4f} (upper bound: store hits not subtracted)")
        return "\n".join(lines)


def _chars(template: PromptTemplate, **values: object) -> int:
    return sum(len(m["content"]) for m in template.render(**values))


def _dialogue(case: Case, k: int) -> str:
    return case.initial_query + "x" * (k * (QUESTION_CHARS + ANSWER_CHARS + 6))


def forecast(
    settings: Settings,
    *,
    questions: int | None = None,
    tokens_per_char: float = 0.75,
    cases: int | None = None,
    experts: Sequence[ExpertRole] | None = None,
) -> Forecast:
    """Calls, tokens and cost per role and model. ``cases``: forecast that many dialogues,
    cycling through the configured test cases (their lengths stand for the real set's);
    ``experts``: only these (default: every configured expert)."""
    models = settings.models
    max_turns = settings.simulation.max_turns
    q = max_turns if questions is None else min(questions, max_turns)
    chosen = select(load_cases(settings.dataset.test), settings.dataset.limit)
    if cases is not None and chosen:
        chosen = [chosen[i % len(chosen)] for i in range(cases)]
    fc = Forecast(len(chosen), q, tokens_per_char)

    def spec_of(name: str) -> ModelSpec | None:
        entry = models[name]
        return ModelSpec.of(name, entry) if isinstance(entry, (OpenAIEntry, VLLMEntry)) else None

    client_spec = spec_of(settings.client.model)
    client_calls: list[tuple[Call, PromptTemplate]] = []
    if client_spec is not None:
        client_t = load_strategy("client", settings.client.strategy)
        declared = strategies.client_strategy(settings.client.strategy)
        client_calls = [(c, client_t[c.template]) for c in declared.question_calls()]
    for expert in settings.experts if experts is None else experts:
        spec = spec_of(expert.model)
        for case in chosen:
            facts = "\n".join(case.facts)
            if spec is not None:
                _expert_calls(fc, spec, expert.strategy, case, q, max_turns)
            if client_spec is not None:
                for k in range(q):
                    for _, template in client_calls:
                        fc.add(
                            "client",
                            client_spec,
                            _chars(
                                template,
                                facts=facts,
                                dialogue=_dialogue(case, k),
                                question="x" * QUESTION_CHARS,
                            ),
                            ANSWER_CHARS,
                        )
            _scoring_calls(fc, settings, case, q, spec_of)
    return fc


def dialogue_calls(strategy: str, questions: int, max_turns: int) -> list[tuple[int, Call]]:
    """``(questions asked before it, call)`` of every expert call of a dialogue in which the
    expert asks ``questions`` questions, in order, as the strategy declares each turn
    (:meth:`~lecode.strategies.declarations.ExpertStrategy.turn_calls`); a gate is ready on
    the last turn. Re-asks after malformed replies are not counted."""
    declared = strategies.expert_strategy(strategy)
    out: list[tuple[int, Call]] = []
    for k in range(questions + 1):
        for step in declared.turn_calls(first=k == 0, forced=k >= max_turns):
            if isinstance(step, Gate):
                out += [(k, step.call), (k, step.advise if k == questions else step.ask)]
            else:
                out.append((k, step))
    return out


def _expert_calls(
    fc: Forecast,
    spec: ModelSpec,
    strategy: str,
    case: Case,
    q: int,
    max_turns: int,
) -> None:
    opening_value = strategies.expert_strategy(strategy).opening_value
    t = load_strategy("expert", strategy)
    extra: dict[str, str] = {}
    for k, call in dialogue_calls(strategy, q, max_turns):
        values: dict[str, Any] = {
            "dialogue": _dialogue(case, k),
            "asked": k,
            "remaining": max(0, max_turns - k),
            "max_turns": max_turns,
            **extra,
        }
        fc.add("expert", spec, _call_chars(t, call, values), _reply_chars(call, k == q))
        if call.reply == "text":
            extra[opening_value] = "x" * TEXT_REPLY_CHARS


def _reply_chars(call: Call, last: bool) -> int:
    if call.reply in ("yes_no", "score"):
        return CONFIDENCE_REPLY_CHARS
    if call.reply == "text":
        return TEXT_REPLY_CHARS
    if call.reply == "advice" or (call.reply == "move" and last):
        return ADVICE_CHARS
    return QUESTION_CHARS


def _call_chars(t: Mapping[str, PromptTemplate], call: Call, values: dict[str, Any]) -> int:
    """Characters of one call's prompt, rendered as the expert renders it."""
    template = t[call.template]
    if call.closing is not None:
        return _chars(template, **values, closing=template.section(call.closing, **values))
    return _chars(template, **values)


def _scoring_calls(
    fc: Forecast,
    settings: Settings,
    case: Case,
    q: int,
    spec_of: Callable[[str], ModelSpec | None],
) -> None:
    spec = spec_of(settings.matcher.model)
    if spec is not None and q > 0:
        t = load_strategy("matcher", "default")["match"]
        qa = "x" * (q * (QUESTION_CHARS + ANSWER_CHARS + 12))
        facts = "\n".join(f"{i}: {f}" for i, f in enumerate(case.facts))
        fc.add("matcher", spec, _chars(t, qa_pairs=qa, facts=facts), 12 * q)
    if settings.judge is not None:
        spec = spec_of(settings.judge.model)
        if spec is not None:
            t = load_strategy("judge", "default")["judge"]
            fc.add(
                "judge",
                spec,
                _chars(
                    t,
                    dialogue=_dialogue(case, q),
                    advice="x" * ADVICE_CHARS,
                    reference=case.suggestion,
                ),
                JUDGE_REPLY_CHARS,
            )
