"""Dry run: forecast LLM calls, tokens and cost of a configuration before spending anything.

The forecast is analytic: every test case (read by the workflow's loader; after
``dataset.limit``, chosen as the workflow chooses them, :func:`lecode.shards.select`) is
simulated on paper with ``questions`` clarifying questions (default: ``simulation.max_turns``,
the upper bound), using the real prompt templates and case texts for prompt sizes and fixed
typical lengths for replies. The expert's and the client's calls are counted by playing their
strategies against a counting stand-in for the model (:mod:`lecode.strategies.counting`), so a
strategy is forecast with exactly the calls it makes, whatever they are. Tokens are estimated
as characters x ``tokens_per_char``. Requests already in the response store are not subtracted
(their keys depend on the replies), so the forecast is an upper bound for a rerun.

Prompt caching: each expert and client call resends the growing dialogue, so most of its prompt
is a prefix the provider has seen, billed at ``price.cached_prompt``. The share of prompt tokens
read from the provider's cache is taken from the model's earlier runs (its stored responses
that report cached tokens, :func:`measured_cached_share`); a model without such responses uses
the stated assumption ``cached_share`` (default 0: every prompt token at the full price), and
the forecast says which it used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lecode import strategies
from lecode.config.experiment import Settings
from lecode.config.models import OpenAIEntry, Price, VLLMEntry
from lecode.config.roles import ExpertRole
from lecode.dataset import load_cases
from lecode.llm.spec import ModelSpec
from lecode.llm.templates import PromptTemplate
from lecode.records import Case
from lecode.shards import select
from lecode.strategies.calls import Call
from lecode.strategies.counting import (
    ADVICE_CHARS,
    ANSWER_CHARS,
    QUESTION_CHARS,
    client_calls,
    expert_calls,
)
from lecode.strategies.templates import load_strategy

JUDGE_REPLY_CHARS = 600  # per-dimension reasoning, then six scores as JSON


@dataclass(frozen=True)
class CachedShare:
    """The share of prompt tokens a model's provider reads from its prompt cache, and where
    that number comes from."""

    share: float
    responses: int = 0  # stored responses that reported cached tokens; 0: an assumption

    @property
    def source(self) -> str:
        if self.responses:
            return f"measured over {self.responses} stored responses"
        return "assumed"


def measured_cached_share(store_dir: str | Path, spec: ModelSpec) -> CachedShare | None:
    """The cached share of prompt tokens over ``spec``'s stored responses that report cached
    tokens (earlier runs of this model entry at this endpoint), or None when none does."""
    from lecode.llm.keys import model_identity, partition_name
    from lecode.llm.store import partition_records

    identity = model_identity(spec.name, spec.identity_url, spec.served_model)
    prompt = cached = responses = 0
    for record in partition_records(store_dir, partition_name(identity)):
        response = record.get("response") or {}
        if response.get("cached_prompt_tokens") is None:
            continue
        responses += 1
        prompt += int(response.get("prompt_tokens") or 0)
        cached += int(response["cached_prompt_tokens"])
    if not responses or not prompt:
        return None
    return CachedShare(min(1.0, cached / prompt), responses)


@dataclass
class Line:
    role: str
    model: str
    calls: int = 0
    prompt_chars: int = 0
    completion_chars: int = 0
    price: Price = field(default_factory=Price)
    cached: CachedShare = field(default_factory=lambda: CachedShare(0.0))

    def tokens(self, per_char: float) -> tuple[int, int]:
        return round(self.prompt_chars * per_char), round(self.completion_chars * per_char)

    def cached_tokens(self, per_char: float) -> int:
        """Prompt tokens expected from the provider's cache (only where caching is priced
        apart or measured)."""
        return round(self.tokens(per_char)[0] * self.cached.share)

    def cost(self, per_char: float) -> float:
        p, c = self.tokens(per_char)
        return self.price.cost(p, c, cached_prompt=self.cached_tokens(per_char))


@dataclass
class Forecast:
    cases: int
    questions: int
    tokens_per_char: float
    lines: dict[tuple[str, str], Line] = field(default_factory=dict)
    #: the cached share of each model (by entry name), measured or assumed
    cached: dict[str, CachedShare] = field(default_factory=dict)
    #: experts whose rows this run does not run (untrained SFT adapters), with the reason
    not_run: dict[str, str] = field(default_factory=dict)

    def add(self, role: str, spec: ModelSpec, prompt: int, completion: int, calls: int = 1) -> None:
        line = self.lines.get((role, spec.name))
        if line is None:
            cached = self.cached.get(spec.name, CachedShare(0.0))
            line = Line(role, spec.name, price=spec.price, cached=cached)
            self.lines[(role, spec.name)] = line
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
                    "cached_prompt_tokens": line.cached_tokens(self.tokens_per_char),
                    "cached_share": round(line.cached.share, 4),
                    "cached_share_source": line.cached.source,
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
            f"{'role':8s} {'model':24s} {'calls':>8s} {'prompt':>12s} {'cached':>10s} "
            f"{'completion':>12s} {'cost':>10s}",
        ]
        total = 0.0
        for r in rows:
            total += r["cost"]
            lines.append(
                f"{r['role']:8s} {r['model']:24s} {r['calls']:8d} {r['prompt_tokens']:12d} "
                f"{r['cached_prompt_tokens']:10d} {r['completion_tokens']:12d} {r['cost']:10.4f}"
            )
        lines.append(f"total cost {total:.4f} (upper bound: store hits not subtracted)")
        for name, why in sorted(self.not_run.items()):
            lines.append(f"not forecast: the rows of {name}, not run ({why})")
        for name, c in sorted(self.cached.items()):
            lines.append(
                f"cached prompt share of {name}: {c.share:.0%} ({c.source}; billed at "
                "price.cached_prompt, else at the prompt price)"
            )
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
    cached_share: float = 0.0,
) -> Forecast:
    """Calls, tokens and cost per role and model. ``cases``: forecast that many dialogues,
    cycling through the configured test cases (their lengths stand for the real set's);
    ``experts``: only these (default: every configured expert); ``cached_share``: the share of
    prompt tokens assumed cached by the provider for models with no measured share."""
    models = settings.models
    max_turns = settings.simulation.max_turns
    q = max_turns if questions is None else min(questions, max_turns)
    chosen = select(load_cases(settings.dataset.test), settings.dataset.limit)
    if cases is not None and chosen:
        chosen = [chosen[i % len(chosen)] for i in range(cases)]
    fc = Forecast(len(chosen), q, tokens_per_char)
    if experts is None:  # the rows this run runs (not those of untrained SFT adapters)
        from lecode.plan.roles import Roles

        roles = Roles(settings)
        fc.not_run = {
            e.model: why for e in settings.experts if (why := roles.not_run(e.model)) is not None
        }
        experts = [e for e in settings.experts if e.model not in fc.not_run]

    def spec_of(name: str) -> ModelSpec | None:
        entry = models[name]
        if not isinstance(entry, (OpenAIEntry, VLLMEntry)):
            return None
        spec = ModelSpec.of(name, entry)
        if name not in fc.cached:
            measured = measured_cached_share(settings.llm.store_dir, spec)
            fc.cached[name] = measured or CachedShare(cached_share)
        return spec

    client_spec = spec_of(settings.client.model)
    client_t = load_strategy("client", settings.client.strategy) if client_spec else {}
    client = strategies.client_strategy(settings.client.strategy) if client_spec else None
    for expert in experts:
        spec = spec_of(expert.model)
        expert_t = load_strategy("expert", expert.strategy) if spec else {}
        for case in chosen:
            if spec is not None:
                program = strategies.expert_strategy(expert.strategy)
                for c in expert_calls(program, expert_t, case, q, max_turns):
                    fc.add("expert", spec, c.prompt_chars, c.reply_chars)
            if client_spec is not None and client is not None:
                for c in client_calls(client, client_t, case, q):
                    fc.add("client", client_spec, c.prompt_chars, c.reply_chars)
            _scoring_calls(fc, settings, case, q, spec_of)
    return fc


def dialogue_calls(
    strategy: str, questions: int, max_turns: int, case: Case | None = None
) -> list[tuple[int, Call]]:
    """``(questions asked before it, call)`` of every expert call of a dialogue in which the
    expert asks ``questions`` questions, in order, as playing the strategy makes them
    (:func:`lecode.strategies.counting.expert_calls`; ``case``: the dialogue's case, default a
    placeholder); a gate is ready on the last turn. Re-asks after malformed replies are not
    counted."""
    program = strategies.expert_strategy(strategy)
    templates = load_strategy("expert", strategy)
    counted = expert_calls(program, templates, case or PLACEHOLDER_CASE, questions, max_turns)
    return [(c.turn, c.call) for c in counted]


#: The case of :func:`dialogue_calls` when none is given.
PLACEHOLDER_CASE = Case(
    id="forecast",
    initial_query="x" * 40,
    dialogue=(),
    facts=("x" * 20,),
    importance=(1,),
    suggestion="x" * ADVICE_CHARS,
)


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
