"""The one logger of the LLM layer; every record passes through secret redaction.

The HTTP libraries log one INFO line per request; they are held at WARNING (unless configured
otherwise) so that job logs show our per-retry and per-job lines instead.
"""

from __future__ import annotations

import logging

from lecode.llm.secrets import RedactingFilter

LOG = logging.getLogger("lecode.llm")
if not any(isinstance(f, RedactingFilter) for f in LOG.filters):
    LOG.addFilter(RedactingFilter())

for _name in ("httpx", "httpx2", "httpcore", "httpcore2", "openai"):
    _logger = logging.getLogger(_name)
    if _logger.level == logging.NOTSET:
        _logger.setLevel(logging.WARNING)
