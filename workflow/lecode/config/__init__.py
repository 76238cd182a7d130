"""The experiment configuration (``params.yaml``) as typed models.

Submodules hold one kind of section each and import nothing but :mod:`lecode.config.base`,
so a step's code fingerprint covers the sections its spec holds and nothing else:
:mod:`~lecode.config.base` (the section base class and the runtime-only marker),
:mod:`~lecode.config.models` (model entries), :mod:`~lecode.config.roles` (who plays what),
:mod:`~lecode.config.sections` (dataset, metrics, report, LLM layer, SFT, reliability,
replicates, sentinel) and :mod:`~lecode.config.experiment` (the whole experiment, parsed with
the checks a schema cannot express). Checks that need the machine, and the JSON schema, are in
:mod:`lecode.preflight`.
"""
