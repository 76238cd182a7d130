"""What every configuration section and job spec shares: frozen, unknown keys refused, and one
way of saying that a field never changes outputs (:data:`RUNTIME_ONLY`).

A field annotated ``Annotated[T, RUNTIME_ONLY]`` is left out of :func:`identity` (the form that
enters every job digest) wherever the model appears, nested or not; nothing else is.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Final

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from pydantic.fields import FieldInfo

Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]
EnvName = Annotated[str, Field(pattern=r"^[A-Z_][A-Z0-9_]*$")]


class SettingsError(ValueError):
    """The configuration is invalid; the message names each offending setting."""


class ParamsFileError(SettingsError):
    """A configuration file cannot be read or is no YAML mapping (the command line exits 2)."""


class _RuntimeOnly:
    """Marker: the field never changes a job's outputs (labels, limits, prices, places)."""

    def __repr__(self) -> str:
        return "RUNTIME_ONLY"


RUNTIME_ONLY: Final = _RuntimeOnly()
#: ``model_dump(context=IDENTITY)``: the dump without runtime-only fields, at every depth.
IDENTITY: Final = {"identity": True}


def is_runtime_only(info: FieldInfo) -> bool:
    return any(m is RUNTIME_ONLY for m in info.metadata)


@cache
def runtime_only_fields(model: type[BaseModel]) -> frozenset[str]:
    """The names of ``model``'s fields marked :data:`RUNTIME_ONLY`."""
    return frozenset(n for n, info in model.model_fields.items() if is_runtime_only(info))


class Section(BaseModel):
    """Base of every configuration section and job spec."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_serializer(mode="wrap")
    def _identity(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        if isinstance(data, dict) and (info.context or {}).get("identity"):
            dropped = runtime_only_fields(type(self))
            return {k: v for k, v in data.items() if k not in dropped}
        return data


def identity(model: BaseModel) -> dict[str, Any]:
    """``model`` as JSON data without its runtime-only fields (nested ones included)."""
    data = model.model_dump(mode="json", context=IDENTITY)
    assert isinstance(data, dict)
    return data
