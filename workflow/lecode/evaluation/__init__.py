"""The evaluation core: shard the test set, simulate consultations, match facts, judge advice,
score each system and gather the scores. Its steps are in :mod:`lecode.evaluation.steps`; the
consultation loop with its journal is :mod:`~lecode.evaluation.consultations`, the scoring of
every dialogue :mod:`~lecode.evaluation.scoring`; its plan is :mod:`~lecode.evaluation.plan`
and its specs :mod:`~lecode.evaluation.specs`."""
