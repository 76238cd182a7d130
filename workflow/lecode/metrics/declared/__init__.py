"""The metric declarations, one module per group of metrics (see docs/extending-metrics.md).

Every module here holds ``DECLARED``, a tuple of
:class:`lecode.metrics.declaration.MetricDeclaration`. :mod:`lecode.metrics.registry` finds the
modules by listing this package, so no import statement names them; ``DISCOVERY = "all"`` tells
:mod:`lecode.fingerprint` to count every module here in the code of any step that imports the
registry.
"""

DISCOVERY = "all"
