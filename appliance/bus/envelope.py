"""The envelope: one typed message on the bus.

Wire shape (JSON, one object; this is also one line of the JSONL log)::

    {"id": "<UUIDv7>", "ts": <int ms since the Unix epoch, UTC>, "sender": "phone",
     "recipient": "computer" | "P3" | "*", "type": "info_collected",
     "payload": {...validated by the type's model...}, "task_id": "<str>" | null,
     "reply_to": "<envelope id>" | null}

An :class:`Envelope` is validated when it is built (its payload becomes the type's
pydantic model instance) and is immutable afterwards, so the bus never validates it again.
"""

from __future__ import annotations

import json
import random
import threading
import time
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

import appliance.protocol  # noqa: F401  registers the project's envelope types
from appliance.protocol.registry import EnvelopeError, type_name, type_spec

_UUID7 = r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
_RAND_B_MASK = (1 << 62) - 1
_TAIL_MAX = (1 << 74) - 1

_id_lock = threading.Lock()
_last_ms = 0
_last_tail = 0


def now_ms() -> int:
    """Wall-clock time in integer milliseconds since the Unix epoch (UTC)."""
    return time.time_ns() // 1_000_000


def uuid7(ms: int | None = None) -> str:
    """A new UUIDv7 string (RFC 9562): 48-bit ms timestamp, then 74 random bits.

    Ids from one process are strictly increasing (within one millisecond the 74-bit tail
    counts up from a random start), so sorting ids sorts by creation. About 1 µs.
    """
    global _last_ms, _last_tail
    if ms is None:
        ms = time.time_ns() // 1_000_000
    with _id_lock:
        if ms > _last_ms:
            tail = random.getrandbits(73)  # top bit clear: room to count up within the ms
        else:
            ms = _last_ms
            tail = _last_tail + 1
            if tail > _TAIL_MAX:
                ms += 1
                tail = random.getrandbits(73)
        _last_ms, _last_tail = ms, tail
    n = (ms << 80) | (0x7 << 76) | ((tail >> 62) << 64) | (0b10 << 62) | (tail & _RAND_B_MASK)
    h = "%032x" % n
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


Address = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^\S+$")]
EnvelopeId = Annotated[str, Field(pattern=_UUID7)]


def _explain(err: ValidationError, prefix: str = "") -> str:
    parts = []
    for e in err.errors():
        cause = (e.get("ctx") or {}).get("error")
        if isinstance(cause, EnvelopeError):
            parts.append(str(cause))
            continue
        loc = prefix + ".".join(str(p) for p in e["loc"])
        got = e.get("input")
        shown = "" if isinstance(got, dict) or e["type"] == "missing" else f" (got {got!r:.60})"
        parts.append(f"{loc or '(envelope)'}: {e['msg']}{shown}")
    return "; ".join(parts)


class Envelope(BaseModel):
    """One message. Build it with :meth:`new` (fresh ``id`` and ``ts``) or :meth:`reply`.

    ``payload`` may be given as a dict or as the type's payload model; it is stored as the
    model (dispatch on it with ``match env.payload: case InfoCollected(): …``).
    ``recipient`` is an agent id, a seat id (``P1``…``P8``) or ``"*"`` (everyone).

    Raises:
        EnvelopeError: unknown ``type``, a payload that fails the type's model, or a bad
            envelope field; the message names the type, the field and why.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: EnvelopeId
    ts: int = Field(ge=0, strict=True)
    sender: Address
    recipient: Address
    type: str
    payload: Any
    task_id: str | None = None
    reply_to: EnvelopeId | None = None

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as e:
            why = _explain(e)
            t = data.get("type")
            if not why.startswith("envelope type"):
                why = (f"envelope type {t!r}: " if isinstance(t, str) else "envelope: ") + why
            raise EnvelopeError(why) from None

    @field_validator("payload")
    @classmethod
    def _typed_payload(cls, value: Any, info: ValidationInfo) -> BaseModel:
        name = info.data.get("type")
        if name is None:
            raise ValueError("no valid type to validate the payload against")
        model = type_spec(name).model  # raises EnvelopeError naming the unknown type
        if value.__class__ is model:
            return value
        if not isinstance(value, dict):
            raise EnvelopeError(f"payload: must be a JSON object or {model.__qualname__}, got {type(value).__name__}")
        try:
            return model.model_validate(value)
        except ValidationError as e:
            raise EnvelopeError(_explain(e, "payload.")) from None

    @classmethod
    def new(
        cls,
        what: BaseModel | str,
        payload: BaseModel | dict[str, Any] | None = None,
        *,
        sender: str,
        recipient: str,
        task_id: str | None = None,
        reply_to: str | None = None,
    ) -> "Envelope":
        """A fresh envelope with a new UUIDv7 ``id`` and ``ts`` = now (ms).

        ``what`` is a registered payload model instance, the type name coming from the registry
        (``Envelope.new(InfoCollected(field=…, value=…, confirmed=…), sender=…, recipient=…)``),
        or a type name with ``payload`` as a dict or the type's model (None means ``{}``).

        Raises:
            EnvelopeError: as for the constructor; an unregistered payload model; a payload
                model given together with ``payload``.
        """
        type_, body = _typed(what, payload)
        ms = time.time_ns() // 1_000_000
        return cls(
            id=uuid7(ms),
            ts=ms,
            sender=sender,
            recipient=recipient,
            type=type_,
            payload=body,
            task_id=task_id,
            reply_to=reply_to,
        )

    def reply(
        self, what: BaseModel | str, payload: BaseModel | dict[str, Any] | None = None, *, sender: str | None = None
    ) -> "Envelope":
        """A new envelope answering this one: to its sender, same ``task_id``, ``reply_to`` = this ``id``.

        ``what`` and ``payload`` as for :meth:`new`. ``sender`` defaults to this envelope's
        recipient (required when that is ``"*"``).

        Raises:
            EnvelopeError: as for :meth:`new`, or no sender for a broadcast's reply.
        """
        if sender is None:
            if self.recipient == "*":
                type_ = _typed(what, payload)[0]
                raise EnvelopeError(f"envelope type {type_!r}: a reply to a broadcast needs an explicit sender")
            sender = self.recipient
        return Envelope.new(what, payload, sender=sender, recipient=self.sender, task_id=self.task_id, reply_to=self.id)

    @classmethod
    def model_construct(cls, _fields_set: set[str] | None = None, **values: Any) -> "Envelope":
        """Validates like the constructor: no Envelope exists unvalidated, so publish need not re-check.

        Raises:
            EnvelopeError: as for the constructor.
        """
        return cls(**values)

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> "Envelope":
        """A copy; with ``update`` the copy is validated again.

        Raises:
            EnvelopeError: the updated envelope is invalid.
        """
        if update:
            return Envelope(**{**self.__dict__, **update})
        return super().model_copy(deep=deep)

    @property
    def urgent(self) -> bool:
        """Whether this envelope's type is registered as urgent."""
        return type_spec(self.type).urgent

    def to_json(self) -> bytes:
        """The wire shape as compact UTF-8 JSON (no trailing newline)."""
        return self.__pydantic_serializer__.to_json(self)

    @classmethod
    def from_json(cls, data: bytes | str) -> "Envelope":
        """Parse and validate one envelope from its wire shape.

        Raises:
            EnvelopeError: not JSON, not an object, or not a valid envelope.
        """
        try:
            obj = json.loads(data)
        except (ValueError, UnicodeDecodeError) as e:
            raise EnvelopeError(f"envelope: not JSON: {e}") from None
        if not isinstance(obj, dict):
            raise EnvelopeError(f"envelope: expected a JSON object, got {type(obj).__name__}")
        return cls(**obj)


def _typed(what: BaseModel | str, payload: BaseModel | dict[str, Any] | None) -> tuple[str, Any]:
    """``(type name, payload)`` for :meth:`Envelope.new`.

    Raises:
        EnvelopeError: an unregistered payload model, or a payload model with a second payload.
    """
    if isinstance(what, str):
        return what, {} if payload is None else payload
    if not isinstance(what, BaseModel):
        raise EnvelopeError(f"envelope: expected a type name or a payload model, got {type(what).__name__}")
    name = type_name(type(what))
    if payload is not None:
        raise EnvelopeError(f"envelope type {name!r}: the payload model is the payload; got a second one")
    return name, what


def check(env: Envelope) -> bool:
    """Check an envelope at publish time and return whether its type is urgent.

    Every :class:`Envelope` was validated when it was built (``model_construct`` and
    ``model_copy(update=...)`` validate too), so this costs one dict lookup.

    Raises:
        EnvelopeError: not an Envelope.
    """
    if env.__class__ is not Envelope:
        raise EnvelopeError(f"envelope: expected an Envelope, got {type(env).__name__}")
    return type_spec(env.type).urgent
