"""Snakemake script of every step rule: the rule names its step (``params: step``), whose
declaration (``STEP`` in ``lecode/<study>/steps/<step>.py``) parses the job's spec and runs it
with the job's files."""

from lecode.joblog import setup_logging
from lecode.plan.index import step_of

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
step_of(sm.params.step).execute(sm.params.spec, sm)
