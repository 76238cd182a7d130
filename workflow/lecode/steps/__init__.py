"""One module per pipeline step; each exposes ``run(spec, ...)``, called by the step's
Snakemake script in ``workflow/scripts/<step>.py`` with the spec the rule hands it.

A step module's import closure is its code fingerprint (:mod:`lecode.fingerprint`): keep
imports that a step does not need out of its module.
"""
