"""The steps of this study, one module per Snakemake step, each declaring itself once as
``STEP = Step(...)`` (:mod:`lecode.plan.jobs`): its spec type, its output's path pattern and how
a job runs. ``workflow/scripts/step.py`` runs it with the spec the rule hands it. A step's code
fingerprint is its module's import closure (:mod:`lecode.fingerprint`): keep imports that a
step does not need out of its module."""
