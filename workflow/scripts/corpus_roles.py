"""Snakemake script: role identification of one shard of transcripts."""

from lecode.corpus.errors import reported
from lecode.corpus.specs import RolesSpec
from lecode.corpus.steps.corpus_roles import run
from lecode.joblog import setup_logging

sm = snakemake  # type: ignore[name-defined]  # noqa: F821
setup_logging(sm.log[0])
with reported("corpus_roles"):
    run(RolesSpec.from_json(sm.params.spec), previous=None, out=str(sm.output[0]))
