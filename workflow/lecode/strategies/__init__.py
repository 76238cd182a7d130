"""The registry of expert and client strategies: one module per strategy.

``strategies/<role>/<name>.py`` holds strategy ``name`` of ``role`` (``expert`` or ``client``)
in its module-level constant ``STRATEGY``: an :class:`~lecode.strategies.program.ExpertProgram`
or :class:`~lecode.strategies.program.ClientProgram` (code over one dialogue's state; the
paper's strategies are declarations, :mod:`lecode.strategies.declarations`, played by the same
interface). Everything else derives from it: the template map, what the LLM agents do each
turn, the forecast's calls (counted by playing the strategy), and each simulate job's identity.
Adding a strategy means adding its template file(s), its module and its tests, nothing else.

:func:`names` lists files and imports nothing (:mod:`lecode.config.strategy_names`, which the
settings use to validate the strategies they name);
:func:`get` imports the one module asked for.
"""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from lecode.config.strategy_names import STRATEGY_ROLES, declared_strategies
from lecode.llm.errors import LLMConfigError

if TYPE_CHECKING:
    from lecode.strategies.program import ClientProgram, ExpertProgram

#: The fingerprint adds the digest of the one strategy a job uses (:func:`identity`), not all.
DISCOVERY = "per_job"
ROLES: tuple[str, ...] = STRATEGY_ROLES
PACKAGE_DIR = Path(__file__).resolve().parent


def _role_dir(role: str) -> Path:
    if role not in ROLES:
        raise LLMConfigError(f"strategies exist for roles {', '.join(ROLES)}, not {role!r}")
    return PACKAGE_DIR / role


def names(role: str) -> tuple[str, ...]:
    """The declared strategy names of ``role``, sorted (file names; nothing is imported)."""
    _role_dir(role)
    return declared_strategies(role)


def module_name(role: str, name: str) -> str:
    """The module holding the declaration of ``role`` strategy ``name``."""
    if name not in names(role):
        raise LLMConfigError(
            f"{role} strategy {name!r} is not declared; choose one of {', '.join(names(role))} "
            f"(declarations live in {_role_dir(role)})"
        )
    return f"{__name__}.{role}.{name}"


@cache
def get(role: str, name: str) -> ExpertProgram | ClientProgram:
    """The strategy ``name`` of ``role`` (imports that one module)."""
    from lecode.strategies.program import ClientProgram, ExpertProgram

    module = importlib.import_module(module_name(role, name))
    declared = getattr(module, "STRATEGY", None)
    kind: type[ExpertProgram] | type[ClientProgram] = (
        ExpertProgram if role == "expert" else ClientProgram
    )
    if not isinstance(declared, (ExpertProgram, ClientProgram)) or not isinstance(declared, kind):
        raise LLMConfigError(
            f"{module.__name__}: STRATEGY must be a {kind.__name__}, not {type(declared).__name__}"
        )
    if getattr(declared, "name", None) != name:
        raise LLMConfigError(
            f"{module.__name__}: STRATEGY.name is {getattr(declared, 'name', None)!r}; it must "
            f"be the file name {name!r}"
        )
    return declared


def expert_strategy(name: str) -> ExpertProgram:
    """Expert strategy ``name``."""
    from lecode.strategies.program import ExpertProgram

    declared = get("expert", name)
    assert isinstance(declared, ExpertProgram)
    return declared


def client_strategy(name: str) -> ClientProgram:
    """Client strategy ``name``."""
    from lecode.strategies.program import ClientProgram

    declared = get("client", name)
    assert isinstance(declared, ClientProgram)
    return declared


def own_modules(role: str, name: str) -> list[str]:
    """The code of ``role`` strategy ``name``: its module and the modules of this package it
    imports, directly or through them (the strategy machinery it builds on, such as
    :mod:`~lecode.strategies.declarations`, and private helpers ``<role>/_<helper>.py``); not
    the registry itself, nor another strategy."""
    from lecode.fingerprint import direct_imports

    module = module_name(role, name)
    strategy_modules = {f"{__name__}.{r}.{n}" for r in ROLES for n in names(r)}
    seen, todo = {module}, [module]
    while todo:
        for m in direct_imports(todo.pop()):
            inside = m.startswith(f"{__name__}.") and m not in strategy_modules
            if inside and m not in seen and m.rsplit(".", 1)[-1] not in ROLES:
                seen.add(m)
                todo.append(m)
    return [module, *sorted(seen - {module})]


def identity(role: str, name: str) -> dict[str, str]:
    """What a job running ``role`` strategy ``name`` depends on: ``{"<role>/<file>.txt":
    digest}`` of every prompt template it reads, and ``{"strategy/<role>/<name>": digest}`` of
    its own code (:func:`own_modules`; normalised: comments and docstrings do not count)."""
    from lecode.fingerprint import code_digest, digest_files
    from lecode.paths import PROMPTS_DIR

    declared = get(role, name)
    base = PROMPTS_DIR.resolve()
    out = {}
    for template in sorted(set(declared.templates.values())):
        path = base / f"{template}.txt"
        out[f"{role}/{path.name}"] = digest_files([path], path.parent)
    out[f"strategy/{role}/{name}"] = code_digest(own_modules(role, name))
    return out
