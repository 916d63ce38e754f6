"""The person's hands: values typed on the page's box or on the terminal, taken as confirmed.

A person whose spoken value keeps being misheard types it instead. Each typed value is
published on the session's bus as ``info_collected{field, value, confirmed: true}`` to
every agent (``recipient: "*"``, ``sender``: ``page`` or ``terminal``): the computer
agent fills it like any confirmed value, and the phone agent takes the field as done (and
stops asking for it). A field is named by its spec name or its label (case ignored), among
the fields the computer agent has announced so far; the value is normalised only where
the form needs a fixed form (a date as ISO, an option by its label, yes/no as a boolean).

The terminal path (``appliance form``) reads ``=field value`` lines: ``=email
jo.m91@example.com``, ``=Family name O'Neill``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable

from appliance.bus import Bus, Envelope
from appliance.phone_agent import fields as fl
from appliance.protocol import FieldSpec, InfoCollected


class UnknownField(ValueError):
    """A typed value for a field the form has not shown (names the fields it has)."""


class TypedValues:
    """The typed values of one form session. ``put`` (from the page route or the terminal)
    queues a value; :meth:`publish` (a task of the session) sends each on the bus."""

    def __init__(self, sender: str = "page", date_order: str = "DMY") -> None:
        self.sender, self.date_order = sender, date_order
        self.fields: dict[str, FieldSpec] = {}
        self._queue: asyncio.Queue[InfoCollected] = asyncio.Queue()

    def known(self, specs: Iterable[FieldSpec]) -> None:
        """Fields the computer agent announced (``need_info``, ``initiate_phone_call_agent``)."""
        for spec in specs:
            self.fields.setdefault(spec.name, spec)

    def resolve(self, name_or_label: str) -> FieldSpec | None:
        """The announced field named ``name_or_label`` (its name, else its label; case and
        spaces ignored)."""
        key = _key(name_or_label)
        return next((s for s in self.fields.values() if _key(s.name) == key), None) or next(
            (s for s in self.fields.values() if _key(s.label) == key), None)

    def put(self, field: str, value: str) -> InfoCollected:
        """Queue ``value`` typed for ``field``; returns the payload that will be published.

        Raises:
            UnknownField: no announced field has that name or label.
            ValueError: the value is empty.
        """
        spec = self.resolve(field)
        if spec is None:
            known = ", ".join(f"{s.name} ({s.label})" for s in self.fields.values()) or "none yet"
            raise UnknownField(f"the form has no field {field!r}; its fields: {known}")
        if not value.strip():
            raise ValueError("the typed value is empty")
        payload = InfoCollected(field=spec.name, value=fl.typed_value(spec, value, self.date_order), confirmed=True)
        self._queue.put_nowait(payload)
        return payload

    def put_line(self, line: str) -> InfoCollected:
        """A terminal line ``=field value`` (the field's name, or its label up to the last
        word that names one: ``=Family name O'Neill``).

        Raises:
            UnknownField, ValueError: as :meth:`put`; ValueError too for a line without a value.
        """
        body = line.strip()[1:].strip()
        words = body.split()
        for cut in range(len(words) - 1, 0, -1):  # the longest field name or label first
            if self.resolve(" ".join(words[:cut])) is not None:
                return self.put(" ".join(words[:cut]), " ".join(words[cut:]))
        if len(words) < 2:
            raise ValueError("type =field value, e.g. =email jo@example.com")
        return self.put(words[0], " ".join(words[1:]))

    async def publish(self, bus: Bus, task_id: str | None = None) -> None:
        """Publish each queued value (runs for the session's life)."""
        while True:
            payload = await self._queue.get()
            await bus.publish(Envelope.new(payload, sender=self.sender, recipient="*", task_id=task_id))


def is_typed_line(line: str) -> bool:
    """Whether a terminal line is a typed value (``=field value``) rather than an answer."""
    return line.lstrip().startswith("=")


def _key(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text).strip().casefold()
