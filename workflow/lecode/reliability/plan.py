"""The client-simulator reliability study (paper appendix C, Table 4): the sample, one answer
job per client model x strategy, and the table."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from pathlib import Path

from lecode import paths
from lecode.config.experiment import Settings, strategy_names
from lecode.config.sections import ReliabilityClient
from lecode.fingerprint import step_code
from lecode.plan.hashes import prompt_hashes, template_hashes
from lecode.plan.jobs import Job
from lecode.plan.roles import Roles
from lecode.reliability.specs import (
    ReliabilityRun,
    ReliabilitySampleSpec,
    ReliabilitySpec,
    Table4Spec,
)
from lecode.specs import FileRef, LLMRuntimeSpec, Role

#: Templates of the reliability study's question writer and judge (Table 4).
RELIABILITY_WRITER_TEMPLATES = ("reliability/questions", "reliability/questions_reask")
RELIABILITY_JUDGE_TEMPLATES = ("reliability/judge", "reliability/reask")
#: Table 4's column order (the paper's); other declared client strategies follow by name.
TABLE4_ORDER = ("instruct_dialogue", "instruct_question", "first_person_dialogue")


def client_strategies(client: ReliabilityClient) -> tuple[str, ...]:
    """The strategies a studied client plays: its own, or every declared client strategy."""
    if client.strategies:
        return client.strategies
    names = strategy_names("client")
    order = {n: i for i, n in enumerate(TABLE4_ORDER)}
    return tuple(sorted(names, key=lambda n: (order.get(n, len(order)), n)))


class ReliabilityPlan:
    """Specs, paths and jobs of the reliability study (none unless ``reliability.enabled``)."""

    def __init__(self, settings: Settings, roles: Roles, *, paper: str | Path) -> None:
        self.settings = settings
        self.roles = roles
        self.paper = str(paper)

    @property
    def reliability_enabled(self) -> bool:
        return self.settings.reliability.enabled

    def reliability_clients(self) -> list[ReliabilityClient]:
        """The studied client models: ``reliability.clients``, or the experiment's client."""
        r = self.settings.reliability
        return list(r.clients) or [ReliabilityClient(model=self.settings.client.model)]

    @cached_property
    def reliability_sample_spec(self) -> ReliabilitySampleSpec:
        s = self.settings
        r = s.reliability
        writer = self.roles.role(r.question_writer) if r.question_writer else None
        return ReliabilitySampleSpec(
            train=FileRef.of(s.dataset.train),
            n_cases=r.n_cases,
            seed=r.seed,
            context_rounds=r.context_rounds,
            questions=r.questions,
            writer=writer,
            questions_file=FileRef.of(r.questions_file) if r.questions_file else None,
            templates=prompt_hashes(RELIABILITY_WRITER_TEMPLATES) if writer else {},
            code=step_code(ReliabilitySampleSpec.step),
            runtime=self.roles.runtime(writer.name) if writer else LLMRuntimeSpec(),
        )

    @cached_property
    def reliability_items_file(self) -> str:
        return paths.format(paths.RELIABILITY_ITEMS, rsmp=self.reliability_sample_spec.digest())

    def reliability_runs(self) -> list[tuple[str, str]]:
        """(client model, client strategy) of every answer job, in table order."""
        return [(c.model, st) for c in self.reliability_clients() for st in client_strategies(c)]

    @cached_property
    def _reliability(self) -> dict[tuple[str, str], ReliabilitySpec]:
        r = self.settings.reliability
        judge = self.roles.role(r.judge) if r.judge else None
        judge_templates = prompt_hashes(RELIABILITY_JUDGE_TEMPLATES) if judge else {}
        sample = self.reliability_sample_spec.digest()
        out = {}
        for model, strategy in self.reliability_runs():
            client = self.roles.role(model)
            out[(model, strategy)] = ReliabilitySpec(
                sample=sample,
                client=client,
                client_strategy=strategy,
                judge=judge,
                templates={
                    **template_hashes("client", strategy, client.entry),
                    **judge_templates,
                },
                code=step_code(ReliabilitySpec.step),
                runtime=self.roles.runtime(*(x.name for x in (client, judge) if x is not None)),
            )
        return out

    def reliability_spec(self, client: str, strategy: str) -> ReliabilitySpec:
        try:
            return self._reliability[(client, strategy)]
        except KeyError:
            raise KeyError(f"{client}/{strategy}: not a client of the reliability study") from None

    def reliability_file(self, client: str, strategy: str) -> str:
        return paths.format(
            paths.RELIABILITY,
            rsmp=self.reliability_sample_spec.digest(),
            rclient=client,
            cstrategy=strategy,
            rcfg=self.reliability_spec(client, strategy).digest(),
        )

    def reliability_files(self) -> list[str]:
        return [self.reliability_file(c, st) for c, st in self.reliability_runs()]

    @cached_property
    def table4_spec(self) -> Table4Spec:
        s = self.settings
        r = s.reliability
        runs = []
        roles: dict[str, Role] = {}
        for c in self.reliability_clients():
            entry = s.models[c.model]
            roles[f"client:{c.model}"] = self.roles.role(c.model)
            for st in client_strategies(c):
                runs.append(
                    ReliabilityRun(
                        client=c.model,
                        label=c.label or entry.label or c.model,
                        paper_label=c.paper_label or entry.paper_label,
                        strategy=st,
                        digest=self.reliability_spec(c.model, st).digest(),
                        file=self.reliability_file(c.model, st),
                    )
                )
        for key, name in (("judge", r.judge), ("writer", r.question_writer)):
            if name:
                roles[key] = self.roles.role(name)
        return Table4Spec(
            items=self.reliability_items_file,
            sample=self.reliability_sample_spec.digest(),
            runs=tuple(runs),
            roles=roles,
            paper=FileRef.of(self.paper),
            settings=s.report,
            code=step_code(Table4Spec.step),
        )

    @cached_property
    def table4_dir(self) -> str:
        return paths.format(paths.TABLE4, t4cfg=self.table4_spec.digest())

    # -- jobs ----------------------------------------------------------------------------------

    def jobs(self) -> Iterator[Job]:
        if not self.reliability_enabled:
            return
        sample = self.reliability_sample_spec
        inputs: dict[str, str | tuple[str, ...]] = {"train": sample.train.path}
        if sample.questions_file is not None:
            inputs["questions"] = sample.questions_file.path
        writer = sample.writer.name if sample.writer else None
        inputs |= self.roles.adapter_files(writer)
        yield Job(sample, self.reliability_items_file, inputs)
        for client, strategy in self.reliability_runs():
            spec = self.reliability_spec(client, strategy)
            at = {
                "rsmp": sample.digest(),
                "rclient": client,
                "cstrategy": strategy,
                "rcfg": spec.digest(),
            }
            names = (spec.client.name, spec.judge.name if spec.judge else None)
            yield Job(
                spec,
                self.reliability_file(client, strategy),
                {"sample": self.reliability_items_file, **self.roles.adapter_files(*names)},
                at,
                f"{client}/{strategy}",
            )
        table4 = self.table4_spec
        yield Job(
            table4,
            self.table4_dir,
            {
                "sample": self.reliability_items_file,
                "answers": tuple(self.reliability_files()),
                "paper": table4.paper.path,
            },
        )
