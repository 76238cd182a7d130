"""Expert strategy declarations, one module per strategy (see :mod:`lecode.strategies`)."""
