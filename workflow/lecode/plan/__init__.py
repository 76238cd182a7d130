"""The experiment's jobs: every step's spec and every path, derived once from the settings.

The Snakefile builds one :class:`Plan` and asks it for paths and specs; the library asks the
same object, so what the DAG schedules and what provenance records cannot disagree. Each study
has its own module: :mod:`~lecode.plan.core` (shards, simulation, scoring, reports),
:mod:`~lecode.plan.adapters` (LoRA adapters served by vLLM), :mod:`~lecode.plan.sft`,
:mod:`~lecode.plan.reliability` (Table 4), :mod:`~lecode.plan.replicates` (measured noise) and
:mod:`~lecode.plan.sentinel` (judge drift).
"""

from __future__ import annotations

from lecode.plan.adapters import AdapterPlan, tree_sha256
from lecode.plan.core import PAPER_NUMBERS, CorePlan, prompt_hashes, template_hashes
from lecode.plan.reliability import ReliabilityPlan
from lecode.plan.replicates import ReplicatePlan
from lecode.plan.sentinel import SentinelPlan
from lecode.plan.sft import SFTPlan


class Plan(CorePlan, AdapterPlan, SFTPlan, ReliabilityPlan, ReplicatePlan, SentinelPlan):
    """All specs and paths of one configured experiment."""


__all__ = ["PAPER_NUMBERS", "Plan", "prompt_hashes", "template_hashes", "tree_sha256"]
