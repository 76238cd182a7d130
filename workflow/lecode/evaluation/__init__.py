"""The evaluation core: shard the test set, simulate consultations, match facts, judge advice,
score each system and gather the scores. Its steps are in :mod:`lecode.evaluation.steps`; the
consultation loop, shards and scoring it runs are :mod:`lecode.simulate`, :mod:`lecode.shards`
and :mod:`lecode.scoring`."""
