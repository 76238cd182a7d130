"""The declared metrics tables, one module each (see :mod:`lecode.report.table_registry`)."""
