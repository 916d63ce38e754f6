"""The computer agent's field book: what it knows about each field, as pure functions over a
frozen :class:`FieldBook`.

A field on the page is known by its *key*, ``(ident, label)`` (the control's name or id, and
its label). Each key is named once (:func:`name`: a unique spec name, ``email``, ``email_2``
…), and from then on its :class:`Entry` holds the latest reading of it, what the phone agent
sent for it and what the page did with it. The loop (:mod:`appliance.computer_agent.agent`)
reads the page and acts; it changes the book only through these functions, which return the
new book and, where the phone agent must hear of it, the payload to send:

- :func:`unnamed` / :func:`start_naming` / :func:`name` / :func:`done_naming`: live fields
  not named yet are named by one background task at a time; each named field waits in
  ``announce`` (in page order, once the phone call is on) until :func:`take_announcements`
  hands them to one ``need_info``.
- :func:`collect`: ``info_collected`` sets a field's value and whether the person confirmed
  it (and when: the envelope's ``ts``, for ``fill_lag_ms``).
- :func:`refused` / :func:`read_back`: the page's answer to putting the value in. The
  browser's validation message → ``format_invalid{expected, got}`` (``expected``: the field's
  format hint, else the message; ``candidates``: the page's close choices when several fit);
  the page holding something else → ``fill_error``; the page holding the value → filled,
  and ``field_filled`` when the value is confirmed. A phone field holding "+0…" (what a
  "+__" mask makes of a national number) is ``format_invalid`` too.
- :func:`hand_over`: the agent could not operate the field (every strategy tried); it is
  the person's to set, in the preview or by typing a value. It keeps the agent on the page
  only while it is required and the page shows it empty; a new value (:func:`collect`)
  takes it back.
- :func:`reopened`: the form was opened again in a new browser (Chromium died): names and
  values stay, and every value is put in again. :func:`inherit`: a task taken over from an
  agent that died with its worker names the fields as that agent announced them.
- :func:`pressed` / :func:`see`: after a button press, the next reading of the page reports
  each error it shows for a value we entered, once per (error, value), as ``fill_error``;
  that field is then neither filled nor confirmed.
- A field is *done* when its value is confirmed, filled and, for a required field, not
  empty; the page may be left when every live field is named (:func:`name_of`), filled as
  it should be (:func:`needs_fill`), not :func:`pending`, and no field waits to be announced.

Asking about or changing a field that was never named raises :class:`FieldBookError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from appliance.computer_agent import localised, page, verdict, widgets
from appliance.protocol import (
    ONE_TIME_CODE,
    FieldFilled,
    FieldSpec,
    FieldValue,
    FillError,
    FormatInvalid,
    InfoCollected,
)

Key = tuple[str, str]  # (ident, label) of a field on the page


class FieldBookError(KeyError):
    """A field the book does not know (a bug in the loop: check :func:`get` first)."""


@dataclass(frozen=True)
class Entry:
    """One named field across readings: its announced ``spec``, its latest ``view``, what the
    phone agent sent (``value``, ``confirmed``, ``confirmed_ts`` in ms since the epoch), what
    the page did with it (``filled``: the page holds ``value`` and shows no error for it;
    ``tried``: the value last put in) and the last page error reported for it
    (``reported_error``, about the value ``error_for``); ``insisted``: the refused value the
    person confirmed again (the page judges it again at the next press: its error may be
    about another field, "Check-out must be after check-in"); ``handed_over``: why the agent
    left the field to the person ('' = it did not)."""

    spec: FieldSpec
    view: page.FieldView
    value: FieldValue | None = None
    confirmed: bool = False
    confirmed_ts: int | None = None
    filled: bool = False
    tried: FieldValue | None = None
    reported_error: str = ""
    error_for: FieldValue | None = None
    insisted: FieldValue | None = None
    handed_over: str = ""

    @property
    def key(self) -> Key:
        return key(self.view)

    @property
    def done(self) -> bool:
        if not (self.confirmed and self.filled):
            return False
        return not (self.spec.required and self.value in ("", False, (), None))

    @property
    def skipped(self) -> bool:
        """An optional field the person left empty: nothing to put in."""
        return self.value in ("", ()) and not self.spec.required


@dataclass(frozen=True)
class FieldBook:
    """Every named field (``entries``, in naming order), the keys being named now
    (``naming``), the specs waiting for ``need_info`` (``announce``, page order) and whether
    the next reading of the page is its verdict on our values (``verdict_due``)."""

    entries: tuple[Entry, ...] = ()
    naming: frozenset[Key] = frozenset()
    announce: tuple[FieldSpec, ...] = ()
    verdict_due: bool = False


def key(f: page.FieldView) -> Key:
    """A field's key on the page."""
    return (f.ident, f.label)


def get(book: FieldBook, name: str) -> Entry | None:
    """The entry of spec name ``name``, or None."""
    return next((e for e in book.entries if e.spec.name == name), None)


def entry(book: FieldBook, name: str) -> Entry:
    """The entry of spec name ``name``.

    Raises:
        FieldBookError: no field has that name.
    """
    e = get(book, name)
    if e is None:
        raise FieldBookError(f"no field named {name!r} (named: {', '.join(e.spec.name for e in book.entries)})")
    return e


def name_of(book: FieldBook, f: page.FieldView) -> str | None:
    """The spec name of page field ``f``, or None while it is not named."""
    k = key(f)
    return next((e.spec.name for e in book.entries if e.key == k), None)


def unnamed(book: FieldBook, fields: Iterable[page.FieldView]) -> tuple[page.FieldView, ...]:
    """The ``fields`` neither named nor being named, one per key (two controls with the same
    key are one field to the book)."""
    out: dict[Key, page.FieldView] = {}
    for f in fields:
        if name_of(book, f) is None and key(f) not in book.naming:
            out.setdefault(key(f), f)
    return tuple(out.values())


def start_naming(book: FieldBook, fields: Iterable[page.FieldView]) -> FieldBook:
    """``fields`` are being named (by one task; they are not offered for naming again)."""
    return replace(book, naming=frozenset(key(f) for f in fields))


def name(book: FieldBook, f: page.FieldView, wanted: str, instead: str = "") -> tuple[FieldBook, FieldSpec]:
    """Name page field ``f`` ``wanted`` and return its spec. When another field has that name
    already, ``f`` is named ``instead`` (its label's own name: one page never holds two copies
    of one detail, "Check-in" and "Check-out" both ``date_of_birth``), else ``wanted_2``,
    ``wanted_3`` ….

    Raises:
        FieldBookError: ``f`` is named already.
    """
    if name_of(book, f) is not None:
        raise FieldBookError(f"field {f.ident!r} ({f.label!r}) is named already")
    unique, n = wanted, 2
    if get(book, wanted) is not None and instead and get(book, instead) is None:
        unique = instead
    while get(book, unique) is not None:
        unique, n = f"{wanted}_{n}", n + 1
    spec = spec_for(unique, f)
    return replace(book, entries=book.entries + (Entry(spec, f),)), spec


def inherit(
    book: FieldBook, fields: Iterable[page.FieldView], specs: Iterable[FieldSpec]
) -> tuple[FieldBook, tuple[FieldSpec, ...]]:
    """Name each of ``fields`` that is not named yet by the name an earlier agent of this task
    announced for it (``specs``: a task taken over, :mod:`~appliance.computer_agent.takeover`):
    a field takes spec ``s`` when :func:`spec_for` under ``s.name`` gives ``s`` itself (same
    label, kind, options, group …) and no field has that name yet. Returns the book and the
    specs taken, in page order (the phone agent knows them: they are not announced again)."""
    specs = tuple(specs)
    taken = []
    for f in unnamed(book, fields):
        s = next((s for s in specs if get(book, s.name) is None and spec_for(s.name, f) == s), None)
        if s is not None:
            book = replace(book, entries=book.entries + (Entry(s, f),))
            taken.append(s)
    return book, tuple(taken)


def done_naming(book: FieldBook) -> FieldBook:
    """The naming task has finished."""
    return replace(book, naming=frozenset())


def queue_announcement(book: FieldBook, spec: FieldSpec) -> FieldBook:
    """``spec`` goes out with the next ``need_info``."""
    return replace(book, announce=book.announce + (spec,))


def take_announcements(book: FieldBook) -> tuple[FieldBook, tuple[FieldSpec, ...]]:
    """The specs to announce now (page order), and the book without them."""
    return replace(book, announce=()), book.announce


def see(book: FieldBook, view: page.PageView) -> tuple[FieldBook, tuple[FillError, ...]]:
    """A new reading of the page: each named field's view is updated; when a verdict is due
    (a button was pressed), every error the page shows for a value we entered goes back to
    the phone agent once per (error, value) as ``fill_error``, and that field is neither
    filled nor confirmed any more."""
    fresh = {key(f): f for f in view.fields}
    entries = tuple(replace(e, view=fresh[e.key]) if e.key in fresh else e for e in book.entries)
    book = replace(book, entries=entries)
    if not book.verdict_due:
        return book, ()
    book = replace(book, verdict_due=False)
    errors = []
    for f in view.live_fields:
        name = name_of(book, f)
        e = get(book, name) if name else None
        if e is None or e.value is None or not f.error or (f.error, e.value) == (e.reported_error, e.error_for):
            continue
        book = _put(book, e.spec.name, reported_error=f.error, error_for=e.value, filled=False, confirmed=False)
        errors.append(FillError(field=e.spec.name, reason=f.error))
    return book, tuple(errors)


def collect(book: FieldBook, p: InfoCollected, ts: int) -> FieldBook:
    """The phone agent sent ``p`` (in an envelope of ``ts`` ms): the field's value and whether
    the person confirmed it.

    Raises:
        FieldBookError: ``p.field`` is not a named field.
    """
    e = entry(book, p.field)
    insisted = p.value if p.confirmed and e.error_for is not None and p.value == e.error_for else None
    return _put(
        book,
        p.field,
        value=p.value,
        confirmed=p.confirmed,
        confirmed_ts=ts if p.confirmed else None,
        insisted=insisted,
        handed_over="",
    )


def refused(book: FieldBook, name: str, problem: page.FillProblem) -> tuple[FieldBook, FormatInvalid | FillError]:
    """The value of ``name`` could not be put in (:class:`~appliance.computer_agent.page.FillProblem`):
    ``format_invalid`` (a value of the wrong shape; ``expected`` from the problem) or ``fill_error``.

    Raises:
        FieldBookError: ``name`` is not a named field.
    """
    value = entry(book, name).value
    book = _put(book, name, tried=value, filled=False)
    if problem.kind == "format":
        return book, FormatInvalid(
            field=name, expected=problem.expected, got=str(value), candidates=tuple(problem.candidates)
        )
    return book, FillError(field=name, reason=problem.reason)


def hand_over(book: FieldBook, name: str, reason: str) -> FieldBook:
    """The agent could not operate field ``name`` (``reason``: why, not empty): the person sets it.

    Raises:
        FieldBookError: ``name`` is not a named field.
    """
    e = entry(book, name)
    return _put(book, name, handed_over=reason or "the agent could not operate it", tried=e.value, filled=False)


def read_back(
    book: FieldBook, name: str, f: page.FieldView, got: object, invalid: str
) -> tuple[FieldBook, FieldFilled | FormatInvalid | FillError | None]:
    """The value of ``name`` was put into page field ``f``, which now holds ``got`` with the
    browser's validation message ``invalid`` ('' = valid). Returns the book and the message
    for the phone agent: ``format_invalid`` (invalid), ``fill_error`` (the page holds something
    else), ``field_filled`` (it holds the confirmed value) or None (it holds an unconfirmed value).

    Raises:
        FieldBookError: ``name`` is not a named field.
    """
    e = entry(book, name)
    value = e.value
    if not invalid and f.kind == "tel" and _NOT_E164.match(str(got)):
        invalid = "an international number: + and the country code (no number has a 0 right after the +)"
    if invalid:
        return (
            _put(book, name, tried=value, filled=False),
            FormatInvalid(field=name, expected=e.spec.format_hint or invalid, got=str(value)),
        )
    if not page.same_value(f, value, got):
        return (
            _put(book, name, tried=value, filled=False),
            FillError(field=name, reason=f"the page holds {got!r} after entering {value!r}"),
        )
    book = _put(book, name, tried=value, filled=True)
    return book, FieldFilled(field=name, value_read_back=got) if e.confirmed else None


def reopened(book: FieldBook) -> FieldBook:
    """The form was opened again in a new browser, its pages empty: every field keeps its name
    (a field is known by its key) and what the phone agent sent for it, confirmed or not, and
    needs putting in again (:func:`needs_fill`); the errors the old page showed are gone, and
    so are a naming in progress and a due verdict."""
    entries = tuple(replace(e, filled=False, tried=None, reported_error="", error_for=None) for e in book.entries)
    return replace(book, entries=entries, naming=frozenset(), verdict_due=False)


#: what a "+__ …" mask makes of a national number ("07700 900123" → "+07 7009 00123"): never a
#: real one, since no country code starts with 0 (ITU-T E.164)
_NOT_E164 = re.compile(r"^\s*\+[\s()-]*0")


def pressed(book: FieldBook) -> FieldBook:
    """A button was pressed: the next reading of the page is its verdict on the values."""
    return replace(book, verdict_due=True)


def needs_fill(book: FieldBook, name: str, f: page.FieldView) -> bool:
    """Whether ``name``'s value must be put into ``f`` (again): it arrived while the field
    was hidden, or a re-rendered page lost it.

    Raises:
        FieldBookError: ``name`` is not a named field.
    """
    e = entry(book, name)
    return e.value is not None and (e.value != e.tried or (e.filled and not page.same_value(f, e.value, f.value)))


def pending(book: FieldBook, name: str, f: page.FieldView) -> bool:
    """Whether ``name`` keeps the agent on this page: not done, or ``f`` shows the error
    reported for its current value; a field handed over to the person, while it is required
    and empty on the page.

    Raises:
        FieldBookError: ``name`` is not a named field.
    """
    e = entry(book, name)
    if e.handed_over:
        return e.spec.required and f.empty
    return not e.done or bool(f.error and e.value == e.error_for and e.value != e.insisted)


def refused_again(book: FieldBook, fields: list[page.FieldView]) -> bool:
    """Whether every error on ``fields`` is one the page already gave for a value the person
    insisted on (nothing new to ask: the page and the person disagree)."""
    entries = [get(book, n) for n in (name_of(book, f) for f in fields) if n]
    return bool(entries) and all(
        e is not None and e.insisted is not None and e.value == e.insisted and e.view.error == e.reported_error
        for e in entries
    )


def summary(book: FieldBook) -> str:
    """ "Label: value; …" of every field with a value, as the person would hear it."""
    return "; ".join(f"{e.spec.label}: {spoken(e.value)}" for e in book.entries if e.value not in (None, "", ()))


def spec_for(name: str, f: page.FieldView) -> FieldSpec:
    """The spec announced for page field ``f`` named ``name`` (a date's hint says its range)."""
    hint = f.hint
    if not hint and f.kind == "date":
        hint = "a date, YYYY-MM-DD" + (f" from {f.min}" if f.min else "") + (f" until {f.max}" if f.max else "")
    english = localised.is_english(f.lang)
    return FieldSpec(
        name=name,
        # a page in another language is asked about from the field's meaning ("Vorname" → "Given name"),
        # its named options in English (CLDR), never read out in a language the person did not choose
        label=(f.label or f.key) if english else _meaning_label(name, verdict.consent(f)),
        type=f.kind,
        required=f.required,
        pattern=f.pattern,
        # a time as the person says it on a 24-hour clock ("2:30pm" → "14:30"); a name in English
        options=tuple(widgets.read_time(o.label) or o.english or o.label for o in f.options) if f.options else None,
        format_hint=(hint or None) if english else None,
        meaning=ONE_TIME_CODE if "one-time-code" in f.autocomplete.split() else name,
        consent=verdict.consent(f),
        section=f.section or None,
        group=(f.group or None) if f.group_index else None,
        group_index=f.group_index or None,
    )


#: what a terms box on a page in another language is asked as (its own sentence is never read out)
FOREIGN_TERMS = "I accept the terms and the privacy notice of this form"


def _meaning_label(name: str, consent: str) -> str:
    """A field's meaning as an English label: ``date_of_birth`` → "Date of birth" (``email_2`` →
    "Email"); a required consent → :data:`FOREIGN_TERMS`."""
    if consent == "required":
        return FOREIGN_TERMS
    words = re.sub(r"_\d+$", "", name).replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def spoken(v: FieldValue | None) -> str:
    """A value in words: yes / no, a list joined with commas, else the text."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, tuple):
        return ", ".join(v)
    return str(v)


def _put(book: FieldBook, name: str, **changes: object) -> FieldBook:
    return replace(book, entries=tuple(replace(e, **changes) if e.spec.name == name else e for e in book.entries))
