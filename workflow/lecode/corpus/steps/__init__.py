"""The steps of this study, one module per Snakemake step, each exposing ``run(spec, ...)``,
called by ``workflow/scripts/<step>.py`` with the spec the rule hands it. A step's code
fingerprint is its module's import closure and its script (:mod:`lecode.fingerprint`): keep
imports that a step does not need out of its module."""
