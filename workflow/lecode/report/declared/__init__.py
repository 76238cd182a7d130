"""The metrics table declarations, one module per table (see docs/extending-tables.md).

Every module here holds ``DECLARED``, a tuple of
:class:`lecode.report.tabledecl.TableDeclaration`. :mod:`lecode.report.table_registry` finds
the modules by listing this package, so no import statement names them; ``DISCOVERY = "all"``
tells :mod:`lecode.fingerprint` to count every module here in the code of any step that
imports the registry.
"""

DISCOVERY = "all"
