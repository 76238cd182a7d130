"""The skeleton every study's plan builds on, below all studies: the roles of a configuration
and their adapters (:mod:`~lecode.plan.roles`), what a spec records of its prompt templates
(:mod:`~lecode.plan.hashes`), and steps and jobs (:mod:`~lecode.plan.jobs`). Each study plans
its own jobs in ``lecode/<study>/plan.py``; :mod:`lecode.pipeline` composes them."""
