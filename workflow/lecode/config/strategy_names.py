"""The names of the declared expert and client strategies, read from the file names of
``lecode/strategies/<role>/`` without importing anything there: the settings validate the
strategies they name below the layer that plays them (:mod:`lecode.strategies`)."""

from __future__ import annotations

from pathlib import Path

#: The roles that have strategies, each a folder of ``lecode/strategies``.
STRATEGY_ROLES: tuple[str, ...] = ("expert", "client")
STRATEGIES_DIR = Path(__file__).resolve().parent.parent / "strategies"


def declared_strategies(role: str) -> tuple[str, ...]:
    """The declared strategy names of ``role``, sorted (``_``-prefixed files are helpers)."""
    if role not in STRATEGY_ROLES:
        raise ValueError(f"strategies exist for roles {', '.join(STRATEGY_ROLES)}, not {role!r}")
    folder = STRATEGIES_DIR / role
    return tuple(sorted(p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")))
