"""The person's hands: a value typed on the page or on the terminal, taken as confirmed.

A person whose spoken value keeps being misheard types it instead (the page's list of
values has a box per field; the terminal takes ``=field value`` lines). Each typed value
becomes ``info_collected{field, value, confirmed: true}`` to every agent (``recipient:
"*"``, ``sender``: ``page`` or ``terminal``; published by the session's
:class:`~appliance.forms.session.PageSide`): the computer agent fills it like any confirmed
value, and the phone agent takes the field as done (and stops asking for it). A field is
named by its spec name or its label (case ignored), among the fields the computer agent has
announced so far (:class:`TypedValues`); the value is normalised only where the form needs
a fixed form (a date as ISO, an option by its label, yes/no as a boolean). A yes/no may come
as a boolean and a field of several choices as a list (the page's box sends them so).

The terminal path (``appliance form``) reads ``=field value`` lines: ``=email
jo.m91@example.com``, ``=Family name O'Neill``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from appliance.phone_agent import fields
from appliance.protocol import FieldSpec, InfoCollected

#: the longest value a person may type for one field (a long message fits; a 900 KB paste kept the
#: browser typing for seconds, then failed)
MAX_TYPED_CHARS = 5000


class UnknownField(ValueError):
    """A typed value for a field the form has not shown (names the fields it has)."""


class TypedValues:
    """The fields of one form session a person may type a value for, and what a typed value
    becomes (:meth:`payload`)."""

    def __init__(self, date_order: str = "DMY") -> None:
        self.date_order = date_order
        self.fields: dict[str, FieldSpec] = {}

    def known(self, specs: Iterable[FieldSpec]) -> None:
        """Fields the computer agent announced (``need_info``, ``initiate_phone_call_agent``)."""
        for spec in specs:
            self.fields.setdefault(spec.name, spec)

    def resolve(self, name_or_label: str) -> FieldSpec | None:
        """The announced field named ``name_or_label`` (its name, else its label; case and
        spaces ignored)."""
        key = _key(name_or_label)
        return next((s for s in self.fields.values() if _key(s.name) == key), None) or next(
            (s for s in self.fields.values() if _key(s.label) == key), None
        )

    def payload(self, field: str, value: object) -> InfoCollected:
        """The confirmed value ``value`` typed for ``field`` makes (text normalised as the form
        takes it, a boolean as is, a list as the tuple of its non-empty items).

        Raises:
            UnknownField: no announced field has that name or label.
            ValueError: the value is empty or longer than :data:`MAX_TYPED_CHARS` (pydantic's
                ValidationError, a ValueError too: it is not a field value at all).
        """
        spec = self.resolve(field)
        if spec is None:
            known = ", ".join(f"{s.name} ({s.label})" for s in self.fields.values()) or "none yet"
            raise UnknownField(f"the form has no field {field!r}; its fields: {known}")
        if isinstance(value, str):
            if not value.strip():
                raise ValueError("the typed value is empty")
            if len(value) > MAX_TYPED_CHARS:
                raise ValueError(
                    f"the typed value has {len(value):,} characters; a field takes at most {MAX_TYPED_CHARS:,} here"
                )
            value = fields.typed_value(spec, value, self.date_order)
        elif isinstance(value, (list, tuple)):
            value = tuple(v.strip() if isinstance(v, str) else v for v in value)
            if not value or any(v == "" for v in value):
                raise ValueError("the typed value is empty")
        return InfoCollected(field=spec.name, value=value, confirmed=True)

    def payload_line(self, line: str) -> InfoCollected:
        """A terminal line ``=field value`` (the field's name, or its label up to the last
        word that names one: ``=Family name O'Neill``): as :meth:`payload`.

        Raises:
            UnknownField, ValueError: as :meth:`payload`; ValueError too for a line without a value.
        """
        body = line.strip()[1:].strip()
        words = body.split()
        for cut in range(len(words) - 1, 0, -1):  # the longest field name or label first
            if self.resolve(" ".join(words[:cut])) is not None:
                return self.payload(" ".join(words[:cut]), " ".join(words[cut:]))
        if len(words) < 2:
            raise ValueError("type =field value, e.g. =email jo@example.com")
        return self.payload(words[0], " ".join(words[1:]))


def is_typed_line(line: str) -> bool:
    """Whether a terminal line is a typed value (``=field value``) rather than an answer."""
    return line.lstrip().startswith("=")


def _key(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text).strip().casefold()
