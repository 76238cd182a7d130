"""What a spec records of the prompt templates a job sends: ``{file name: digest}``."""

from __future__ import annotations

from lecode.config.models import ModelEntry
from lecode.fingerprint import digest_files


def prompt_hashes(names: tuple[str, ...]) -> dict[str, str]:
    """``{file name: digest}`` of named prompt templates (``sft/reask`` and the like)."""
    from lecode.llm.templates import PROMPTS_DIR

    base = PROMPTS_DIR.resolve()
    return {f"{n}.txt": digest_files([base / f"{n}.txt"], base) for n in names}


def template_hashes(role: str, strategy: str, entry: ModelEntry) -> dict[str, str]:
    """``{file name: digest}`` of the prompt templates ``role`` reads with ``strategy``; for an
    expert or client strategy also its declaration's code digest
    (:func:`lecode.strategies.identity`)."""
    if not entry.is_llm:
        return {}
    from lecode import strategies

    if role in strategies.ROLES:
        return strategies.identity(role, strategy)
    from lecode.strategies.templates import template_paths

    files = template_paths(role, strategy)
    return {f"{role}/{p.name}": digest_files([p], p.parent) for p in files}
