"""The envelope type registry: which ``type`` names exist, their payload model and urgency.

The project's own vocabularies register themselves in :mod:`appliance.protocol.control`,
:mod:`~appliance.protocol.forms` and :mod:`~appliance.protocol.werewolf` (importing
:mod:`appliance.protocol` registers all three); a test or a benchmark may add its own
with :func:`register_type` before it publishes or reads envelopes of that type.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

_TYPE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.:-]{0,63}")


class EnvelopeError(ValueError):
    """An envelope (or a type registration) that the bus refuses.

    The message names the envelope type and the offending field and says why, e.g.
    ``"envelope type 'info_collected': payload.confirmed: Input should be a valid boolean"``.
    """


class Payload(BaseModel):
    """Base class for payload models: unknown keys are errors, instances are immutable.

    Payload instances are shared by every subscriber an envelope fans out to, hence frozen;
    use tuples rather than lists for sequences.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


class TypeSpec(NamedTuple):
    """A registered envelope type: its ``name``, payload ``model`` and whether it is ``urgent``."""

    name: str
    model: type[BaseModel]
    urgent: bool


_TYPES: dict[str, TypeSpec] = {}
_NAMES: dict[type[BaseModel], str] = {}  # payload model → its one type name


def register_type(name: str, model: type[BaseModel], urgent: bool = False) -> TypeSpec:
    """Register envelope type ``name`` whose payload must validate as ``model``.

    ``urgent`` types jump ahead of ordinary envelopes in every subscriber's queue and have a
    lane of their own (a full ordinary queue never holds them up). Registering the same name
    again with the same model and urgency is a no-op (modules may be imported twice). A model
    has one type name, so an envelope can be built from a payload instance alone
    (:func:`type_name`).

    Raises:
        EnvelopeError: a malformed name, a model that is not a pydantic model, a name
            already registered with a different model or urgency, or a model already
            registered under another name.
    """
    if not isinstance(name, str) or not _TYPE_NAME.fullmatch(name):
        raise EnvelopeError(f"envelope type name {name!r} must match {_TYPE_NAME.pattern}")
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise EnvelopeError(f"envelope type {name!r}: payload model must be a pydantic model class, got {model!r}")
    spec = TypeSpec(name, model, bool(urgent))
    old = _TYPES.get(name)
    if old is not None and old != spec:
        raise EnvelopeError(
            f"envelope type {name!r} is already registered with {old.model.__qualname__} (urgent={old.urgent})"
        )
    other = _NAMES.get(model)
    if other is not None and other != name:
        raise EnvelopeError(
            f"envelope type {name!r}: payload model {model.__qualname__} is already registered "
            f"as {other!r} (one type name per model)"
        )
    _TYPES[name] = spec
    _NAMES[model] = name
    return spec


def type_name(model: type[BaseModel]) -> str:
    """The envelope type name ``model`` is registered under (``InfoCollected`` → ``"info_collected"``).

    Raises:
        EnvelopeError: ``model`` is not a registered payload model.
    """
    name = _NAMES.get(model)
    if name is None:
        raise EnvelopeError(
            f"payload model {model.__qualname__} is not a registered envelope type "
            f"(register it with register_type(name, {model.__qualname__}))"
        )
    return name


def type_spec(name: str) -> TypeSpec:
    """The registration of envelope type ``name``.

    Raises:
        EnvelopeError: the type is not registered.
    """
    spec = _TYPES.get(name)
    if spec is None:
        raise EnvelopeError(f"envelope type {name!r} is not registered (known: {', '.join(sorted(_TYPES))})")
    return spec


def registered_types() -> dict[str, TypeSpec]:
    """A copy of the registry: type name -> :class:`TypeSpec`."""
    return dict(_TYPES)
