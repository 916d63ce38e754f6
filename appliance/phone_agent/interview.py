"""The phone agent's interview as pure functions over a frozen :class:`Interview`.

The loop (:mod:`appliance.phone_agent.agent`) speaks and listens; everything it knows about
the form lives here and changes only through these functions::

    state = start(fields)
    while True:
        for payload in what arrived:          # at a safe point between utterances
            state = apply(state, payload, ts)
        step = next_step(state)               # Failed, Finished, Explain, Ask(Together), Authorise, Review or Hold
        ...                                   # speak, listen, then one of the transitions below

**Messages** (:func:`apply`):

- ``need_info{fields}`` / ``initiate_phone_call_agent{required_info}`` queue their fields in
  the order given (page order), except fields already known or confirmed; the browser is no
  longer busy and the person may be told again that the agent is waiting.
- ``format_invalid{field, expected, got, candidates}`` / ``fill_error{field, reason}`` about a
  known field put it first in the queue with its reason ("it needs …" / the page's reason),
  take back its confirmation (a typed value too) and remember the refusal (the value
  refused: ``got``; unknown for ``fill_error``). With ``candidates`` (the page offers several
  close choices) the ask carries them as ``choices``: the person picks one. About anything
  that is not a field (``page``: the form did not load) they fail the interview with that
  reason — except a ``fill_error{recovering: true}`` (the browser died and the computer
  agent opens the form again, putting back every value it has): :class:`Reopening` is told
  to the person, nothing is asked again, and the browser is busy.
- ``step_failed{problem, reason, advice, field?}`` → an :class:`Explain` waits, said before
  anything else is asked; a field it names leaves the queue and is *handed over* (the person
  sets it in the preview or types it; a hold then reminds them of the advice).
- ``info_collected{confirmed: true}`` from the person's hands (a value typed on the page or
  the terminal; the phone agent's own never come back to it) about a known field: that value
  is confirmed as typed, the field leaves the queue and is no longer handed over.
- ``status_update``: ``auth-required`` → authorisation is asked once the queue is empty;
  ``review`` → the form is filled and left unsent for the person's review (a "don't submit"
  task): the call ends with :class:`Review`; ``working`` → the browser is busy; ``failed`` /
  ``rejected`` / ``canceled`` → the interview fails with the message (or the state).
- ``submitted{confirmation}`` → finished. Any other payload changes nothing.

**Next step** (:func:`next_step`), the first that holds: failed → :class:`Failed`;
submitted → :class:`Finished`; the form being reopened, not yet told → :class:`Reopening`; an explanation due → :class:`Explain` (the first); fields
a person answers together at the head of the queue → :class:`AskTogether` (a given name
then a family name; a date's day, month and year fields), neither refused nor rejected
before; a field queued → :class:`Ask` (the first); authorisation requested →
:class:`Authorise`; review → :class:`Review`; else :class:`Hold`. A hold is a *step
boundary* (not a wait on the browser) while the browser is busy or every known field is
confirmed or handed over.

**How a field is asked** (:func:`ask_mode`): a name, code, address, user name or e-mail
is asked in ``words`` until the person rejects a read-back of it, an answer for it gave
no value (bench: a name or an e-mail that tiny.en did not get once came back no better the
second time, 8–10 s later), or the page refused its value twice (bench: "C, zero one, X,
zero zero, T, four seven" came back as C01X000T47 five times, one zero too many); then the person is asked to ``spell`` it, and
when a spelling is asked for the second time it is ``spell_or_type`` (the person may type
it in the box on the screen instead). After
:data:`REJECTION_LIMIT` rejections the field is given up (:func:`give_up`). A choice whose
answer was not understood twice (:func:`not_understood`; a long list of options is not
read out, and a word such as "Irish" may be misheard every time) is spelled the same way.
Other kinds (a date, a number, a phone) are asked in ``words``, and once an answer gave no
value or their read-backs led nowhere (:func:`not_understood`) in ``words_or_type``: the
box on the screen is offered too.

**Transitions:** :func:`begin` takes the asked field (or fields) off the queue
(:func:`requeue` puts an ask cut short back); :func:`confirm` records a value the person
accepted; :func:`rejected` counts a read-back the person said no to; :func:`spell_asked`
records that a spelling was asked for; :func:`split` puts fields asked together back at
the front of the queue, one by one, after their joint read-back was rejected;
:func:`refused` tells whether the page already refused the value being read back;
:func:`reask` drops a field's queued re-ask and refusal when it is asked again on the spot;
:func:`give_up` sends a field to the back of the queue the first time and fails the
interview the second; :func:`explained` drops the explanation just said (:func:`told_reopening`,
the reopening);
:func:`authorised` records the person's yes to submitting; :func:`withdrawn` takes it back
(the person said stop before the page answered);
:func:`hold` counts waits on the browser and says when to tell the person what is happening.

A transition that does not fit the state (asking a field that is not first in the queue,
confirming an unknown field, authorising unasked) raises :class:`InterviewError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal

from appliance.phone_agent import fields
from appliance.phone_agent.told import open_fields
from appliance.protocol import (
    ONE_TIME_CODE,
    FieldSpec,
    FieldValue,
    FillError,
    FormatInvalid,
    InfoCollected,
    InitiatePhoneCallAgent,
    ItemAddable,
    NeedInfo,
    Payload,
    StatusUpdate,
    StepFailed,
    StepProblem,
    Submitted,
)

#: A given-up field fails the interview on this give-up (the first one sends it to the back of the queue).
GIVE_UP_LIMIT = 2
#: Read-backs of one field the person may reject before it is given up (the first ones lead to spelling).
REJECTION_LIMIT = 3
#: Questions for one field in one call (re-asks included) before it is handed to the person to set
#: in the preview or the box (issue 26: a phone number the page kept regrouping was asked 11,866 times).
MAX_ASKS = 4
#: Questions for a one-time code the site sent the person: the first, then at most two more after the
#: page refused it (issue 26: "a wrong code is asked again at most twice").
MAX_CODE_ASKS = 3
#: corrections taken at the summary in one call; after them a value is changed in the preview (a person
#: correcting the same details again and again would otherwise never reach the submit: bench, a
#: simulated person took "your passport number … as you confirmed them" for a wrong passport number 1,000 times)
MAX_REOPENS = 4

#: How a field is asked: in words, to be spelled, or either with the offer to type it on the screen.
AskMode = Literal["words", "words_or_type", "spell", "spell_or_type"]


class InterviewError(ValueError):
    """A transition the interview's state does not allow (a bug in the loop, never the person's doing)."""


@dataclass(frozen=True)
class Ask:
    """Ask for ``spec``; ``reason``: why the form refused the last value ('' = a first ask);
    ``choices``: the page's close choices for that value, one of which the person picks."""

    spec: FieldSpec
    reason: str = ""
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class AskTogether:
    """Ask ``asks`` in one question, as a person answers them together: ``what`` is
    ``name`` (a given name, then a family name) or ``date`` (a date's day, month and year
    fields, in page order); ``several``: fields the person answered in one breath, unasked
    but the first (:func:`taken`), read back together."""

    asks: tuple[Ask, ...]
    what: Literal["name", "date", "several"]


@dataclass(frozen=True)
class Refusal:
    """The page refused a value: ``value`` as the page reported it (``format_invalid.got``;
    None when unknown: ``fill_error``) and ``reason``, as the person is told."""

    value: str | None
    reason: str
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True)
class Failed:
    """The form cannot be done: ``reason`` is said to the person."""

    reason: str


@dataclass(frozen=True)
class Finished:
    """The form was submitted; ``confirmation``: what the page said ('' = nothing)."""

    confirmation: str


@dataclass(frozen=True)
class Explain:
    """Tell the person at once that the computer agent gave up on a step: ``reason`` (what is
    wrong) and ``advice`` (what they can do); ``field``: the field it is about, if any;
    ``since_ms``: when the give-up was sent (envelope ``ts``, ms since the epoch; 0 = unknown)."""

    problem: StepProblem | Literal["asked_out"]  # asked_out: the phone agent hands over a field asked MAX_ASKS times
    reason: str
    advice: str
    field: str | None = None
    since_ms: int = 0


@dataclass(frozen=True)
class Reopening:
    """Tell the person that the computer agent's browser stopped and the form is being opened
    again with every value it had: nothing needs repeating."""


@dataclass(frozen=True)
class Review:
    """The form is filled and, as the person asked, not submitted: it waits for their review
    in the preview. ``message``: the computer agent's words about it."""

    message: str


@dataclass(frozen=True)
class Authorise:
    """Every field is in and the computer agent waits for the person's yes to submit."""


@dataclass(frozen=True)
class Hold:
    """Nothing to ask: wait for the computer agent. ``boundary``: at a step boundary (the
    browser is busy, or every known field is confirmed), which is not a wait on the browser."""

    boundary: bool


Step = Failed | Finished | Reopening | Explain | Ask | AskTogether | Authorise | Review | Hold

#: What a hold tells the person: the form is still opening (no field known yet), or a slow step of the agent's
#: (a page loads, the form is submitted), acknowledged unless the next words come soon.
Filler = Literal["opening", "working"]


def _frozen(d: Mapping | None = None) -> Mapping:
    return MappingProxyType(dict(d or {}))


@dataclass(frozen=True)
class Interview:
    """What the phone agent knows. ``queue``: fields to ask, in order; ``specs``: every field
    known, by name, in arrival order; ``confirmed``: values the person accepted; ``refusals``:
    the page's last refusal per field; ``given_up``: give-ups per field; ``auth_requested``:
    the computer agent waits for authorisation; ``browser_busy``: loading or moving between
    pages; ``filler_said``: this hold was told or acknowledged (:func:`hold`); ``submitted``: the page's
    confirmation once submitted; ``failed``: why the form cannot be done;
    ``waits_on_browser``: holds that were not step boundaries; ``rejections``: read-backs the
    person rejected, per field; ``spell_asks``: spellings asked for, per field; ``typed``:
    values the person typed, per field (until the page refuses one); ``unheard``: answers that
    gave no value or read-backs that led nowhere, per field (:func:`not_understood`);
    ``page_refusals``: values the page refused, per field; ``explain``: give-ups to tell the
    person, in arrival order; ``handed_over``: fields left to the person → the advice they were given;
    ``waiting_for``: the advice of the last give-up that named no field (the person has to
    act on the page: press a button, fix an error; '' = nothing), until the computer agent
    reports progress; ``review``: the computer agent's message once the form waits for the
    person's review; ``asks``: questions asked for each field (bounded by :data:`MAX_ASKS`);
    ``addable``: one more item the page can take (``item_addable``: "passenger"), offered with
    the summary until the person answers it; ``reopened``: fields taken up again at the
    summary (bounded by :data:`MAX_REOPENS`)."""

    queue: tuple[Ask, ...] = ()
    specs: Mapping[str, FieldSpec] = field(default_factory=_frozen)
    confirmed: Mapping[str, FieldValue] = field(default_factory=_frozen)
    refusals: Mapping[str, Refusal] = field(default_factory=_frozen)
    given_up: Mapping[str, int] = field(default_factory=_frozen)
    auth_requested: bool = False
    browser_busy: bool = True  # until the first fields arrive, the form is loading
    filler_said: bool = False
    submitted: str | None = None
    failed: str | None = None
    waits_on_browser: int = 0
    rejections: Mapping[str, int] = field(default_factory=_frozen)
    spell_asks: Mapping[str, int] = field(default_factory=_frozen)
    typed: Mapping[str, FieldValue] = field(default_factory=_frozen)
    unheard: Mapping[str, int] = field(default_factory=_frozen)
    page_refusals: Mapping[str, int] = field(default_factory=_frozen)
    explain: tuple[Explain, ...] = ()
    handed_over: Mapping[str, str] = field(default_factory=_frozen)
    waiting_for: str = ""
    review: str | None = None
    reopening: bool = False
    asks: Mapping[str, int] = field(default_factory=_frozen)
    addable: str = ""  # one more item the page can take ("passenger"), offered at the summary
    reopened: int = 0


def start(fields: Iterable[FieldSpec] = ()) -> Interview:
    """A new interview with ``fields`` already known (autonomous launch: ``required_info``), queued in order."""
    return _add_fields(Interview(), fields)


def apply(state: Interview, payload: Payload, ts: int = 0) -> Interview:
    """The interview after a message (sent at ``ts`` ms since the epoch; 0 = unknown) from the
    computer agent or the person's page (see the module docstring)."""
    match payload:
        case NeedInfo(fields=new) | InitiatePhoneCallAgent(required_info=new):
            return replace(_add_fields(state, new), browser_busy=False, filler_said=False, waiting_for="")
        case FormatInvalid(field=name, expected=expected, got=got, candidates=candidates) if candidates:
            return _refuse(state, name, Refusal(got, "the page offers several close matches", tuple(candidates)))
        case FormatInvalid(field=name, expected=expected, got=got):
            return _refuse(state, name, Refusal(got, f"it needs {expected}"))
        case FillError(recovering=True):
            return replace(state, reopening=True, browser_busy=True)
        case FillError(field=name, reason=reason):
            return _refuse(state, name, Refusal(None, reason))
        case StepFailed(problem=problem, reason=reason, advice=advice, field=name):
            state = replace(
                state, explain=state.explain + (Explain(problem, reason, advice, name, ts),), browser_busy=False
            )
            if name in state.specs:
                return replace(
                    state,
                    queue=tuple(a for a in state.queue if a.spec.name != name),
                    handed_over=_with(state.handed_over, name, advice),
                )
            return replace(state, waiting_for=advice)
        case InfoCollected(field=name, value=value, confirmed=True) if name in state.specs:
            return replace(
                confirm(state, name, value),
                typed=_with(state.typed, name, value),
                queue=tuple(a for a in state.queue if a.spec.name != name),
                handed_over=_without(state.handed_over, name),
            )
        case ItemAddable(what=what):
            return replace(state, addable=what)
        case StatusUpdate(state="auth-required"):
            return replace(state, auth_requested=True, browser_busy=False, waiting_for="")
        case StatusUpdate(state="review", message=message):
            return replace(
                state,
                review=message or "the form is filled in and waits for your review",
                browser_busy=False,
                waiting_for="",
            )
        case StatusUpdate(state="working"):
            return replace(state, browser_busy=True, waiting_for="")
        case StatusUpdate(state="failed" | "rejected" | "canceled" as st, message=message):
            return replace(state, failed=message or st)
        case Submitted(confirmation=confirmation):
            return replace(state, submitted=confirmation or "")
    return state  # acks, field_filled, other states: nothing for the interview


def next_step(state: Interview) -> Step:
    """What the loop does next (see the module docstring for the order)."""
    if state.failed:
        return Failed(state.failed)
    if state.submitted is not None:
        return Finished(state.submitted)
    if state.reopening:
        return Reopening()
    if state.explain:
        return state.explain[0]
    if state.queue:
        return _together(state) or state.queue[0]
    if state.auth_requested:
        return Authorise()
    if state.review is not None:
        return Review(state.review)
    return Hold(state.browser_busy or all(n in state.confirmed or n in state.handed_over for n in state.specs))


def begin(state: Interview, ask: Ask | AskTogether) -> Interview:
    """Start asking ``ask`` (one field, or fields together): it leaves the queue; its refusal,
    if any, is in ``ask.reason``.

    Raises:
        InterviewError: ``ask`` is not the first queued (its fields not the first ones).
    """
    asks = ask.asks if isinstance(ask, AskTogether) else (ask,)
    if state.queue[: len(asks)] != asks:
        raise InterviewError(f"{', '.join(repr(a.spec.name) for a in asks)} is not the next field to ask")
    refusals = state.refusals
    for a in asks:
        refusals = _without(refusals, a.spec.name)
    return replace(state, queue=state.queue[len(asks) :], refusals=refusals)


def ask_mode(state: Interview, spec: FieldSpec) -> AskMode:
    """How to ask ``spec`` now (see the module docstring)."""
    if fields.spellable(spec):
        due = bool(
            state.rejections.get(spec.name)
            or state.unheard.get(spec.name)
            or state.page_refusals.get(spec.name, 0) >= 2
        )
    elif fields.kind(spec) == "choice":
        due = state.unheard.get(spec.name, 0) >= 2
    else:  # a date, number or phone: nothing to spell, but the person may type it
        return "words_or_type" if state.unheard.get(spec.name) else "words"
    if not due:
        return "words"
    return "spell" if not state.spell_asks.get(spec.name) else "spell_or_type"


def not_understood(state: Interview, name: str) -> Interview:
    """An answer for ``name`` gave no value, or its read-backs led nowhere (see :func:`ask_mode`).

    Raises:
        InterviewError: ``name`` is not a known field.
    """
    _spec(state, name)
    return replace(state, unheard=_with(state.unheard, name, state.unheard.get(name, 0) + 1))


def rejected(state: Interview, name: str) -> tuple[Interview, bool]:
    """The person said no to a read-back of ``name``. Returns the new state and whether the
    field may still be asked (False: :data:`REJECTION_LIMIT` reached; give it up).

    Raises:
        InterviewError: ``name`` is not a known field.
    """
    _spec(state, name)
    times = state.rejections.get(name, 0) + 1
    return replace(state, rejections=_with(state.rejections, name, times)), times < REJECTION_LIMIT


def spell_asked(state: Interview, name: str) -> Interview:
    """A spelling of ``name`` was asked for.

    Raises:
        InterviewError: ``name`` is not a known field.
    """
    _spec(state, name)
    return replace(state, spell_asks=_with(state.spell_asks, name, state.spell_asks.get(name, 0) + 1))


def split(state: Interview, together: AskTogether, rejected: bool = True, unheard: int = 0) -> Interview:
    """Fields asked together go back to the front of the queue, to be asked one by one (a
    field the page refused meanwhile keeps its queued ask with the reason). ``rejected``:
    the person rejected their joint read-back; each field's rejection is counted (so it is
    spelled next) unless the page refused it. ``unheard``: answers to the joint question
    that gave no value, counted for each field (:func:`not_understood`: a name whose words
    failed is spelled next, never asked together again)."""
    queued = {a.spec.name: a for a in state.queue}
    head = tuple(queued.get(a.spec.name, a) for a in together.asks)
    rejections, unheard_ = dict(state.rejections), dict(state.unheard)
    for a in head:
        if rejected and not a.reason:
            rejections[a.spec.name] = rejections.get(a.spec.name, 0) + 1
        if unheard:
            unheard_[a.spec.name] = unheard_.get(a.spec.name, 0) + unheard
    names = {a.spec.name for a in head}
    return replace(
        state,
        rejections=_frozen(rejections),
        unheard=_frozen(unheard_),
        queue=(*head, *(a for a in state.queue if a.spec.name not in names)),
    )


def taken(state: Interview, names: Iterable[str]) -> tuple[Interview, tuple[Ask, ...]]:
    """The queued asks of the fields ``names`` (answered before their question, issue 27)
    leave the queue, as :func:`begin` takes the first; returns the new state and those asks,
    in the order of ``names`` (a name not queued has none)."""
    queued = {a.spec.name: a for a in state.queue}
    asks = tuple(queued[n] for n in names if n in queued)
    gone = {a.spec.name for a in asks}
    refusals = state.refusals
    for n in gone:
        refusals = _without(refusals, n)
    return replace(state, queue=tuple(a for a in state.queue if a.spec.name not in gone), refusals=refusals), asks


def requeue(state: Interview, ask: Ask | AskTogether) -> Interview:
    """``ask`` (one field, or fields asked together) was cut short (an explanation comes
    first, or the person objected to the read-back said with its question): it goes back to
    the front of the queue, behind the re-asks of values the page refused (those stay
    first), but for fields confirmed, handed over or queued already (fields asked together
    that are no longer all left are asked one by one)."""
    asks = ask.asks if isinstance(ask, AskTogether) else (ask,)
    back = tuple(
        a
        for a in asks
        if a.spec.name not in state.confirmed
        and a.spec.name not in state.handed_over
        and not any(q.spec.name == a.spec.name for q in state.queue)
    )
    refused = tuple(q for q in state.queue if q.reason)
    return replace(state, queue=(*refused, *back, *(q for q in state.queue if not q.reason)))


def confirm(state: Interview, name: str, value: FieldValue) -> Interview:
    """The person accepted ``value`` for field ``name``.

    Raises:
        InterviewError: ``name`` is not a known field.
    """
    _spec(state, name)
    return replace(state, confirmed=_with(state.confirmed, name, value), refusals=_without(state.refusals, name))


def told(state: Interview, values: Mapping[str, FieldValue]) -> Interview:
    """Values the person gave before any question (their request in words, issue 27):
    confirmed, and never asked.

    Raises:
        InterviewError: a name is not a known field.
    """
    for name in values:
        _spec(state, name)
    return replace(
        state,
        confirmed=_frozen({**state.confirmed, **values}),
        queue=tuple(a for a in state.queue if a.spec.name not in values),
    )


def refused(state: Interview, name: str, value: FieldValue) -> bool:
    """Whether the page has refused ``value`` for field ``name`` (a refusal that does not
    say which value it was about counts as about this one)."""
    r = state.refusals.get(name)
    return r is not None and bool(r.reason) and (r.value is None or r.value == str(value))


def reask(state: Interview, name: str) -> tuple[Interview, str]:
    """Field ``name`` is asked again right now: its queued re-ask and its refusal are dropped.
    Returns the new state and the refusal's reason ('' = none)."""
    r = state.refusals.get(name)
    return (
        replace(
            state, queue=tuple(a for a in state.queue if a.spec.name != name), refusals=_without(state.refusals, name)
        ),
        r.reason if r else "",
    )


def asked(state: Interview, name: str) -> Interview:
    """A question for field ``name`` is about to be said (counted against :data:`MAX_ASKS`)."""
    return replace(state, asks=_with(state.asks, name, state.asks.get(name, 0) + 1))


def asked_out(state: Interview, name: str) -> bool:
    """Whether field ``name`` has had its questions: :data:`MAX_CODE_ASKS` for a one-time code
    (``meaning`` :data:`~appliance.protocol.forms.ONE_TIME_CODE`), else :data:`MAX_ASKS`.

    Raises:
        InterviewError: ``name`` is not a known field.
    """
    bound = MAX_CODE_ASKS if _spec(state, name).meaning == ONE_TIME_CODE else MAX_ASKS
    return state.asks.get(name, 0) >= bound


def hand_over(state: Interview, name: str) -> Interview:
    """Field ``name`` was asked :data:`MAX_ASKS` times without a value the form keeps: it is the
    person's to set (in the box or the preview), said to them once (an :class:`Explain`);
    never asked again unless the page refuses what they set.

    Raises:
        InterviewError: ``name`` is not a known field.
    """
    spec = _spec(state, name)
    what = re.sub(r"(?i)^(your|my)\s+", "", fields.spoken_label(spec))  # "Your name": "your name", once
    advice = "You can type it in the box on your screen, or set it yourself in the preview on your page."
    ex = Explain("asked_out", f"Let's leave your {what} for now: I couldn't get it in", advice, name)
    return replace(
        state,
        queue=tuple(a for a in state.queue if a.spec.name != name),
        handed_over=_with(state.handed_over, name, advice),
        explain=state.explain + (ex,),
    )


def give_up(state: Interview, name: str) -> Interview:
    """No value the form accepts was got for ``name`` this time: it goes to the back of the
    queue, or, at the :data:`GIVE_UP_LIMIT`-th give-up, the interview fails.

    Raises:
        InterviewError: ``name`` is not a known field.
    """
    spec = _spec(state, name)
    times = state.given_up.get(name, 0) + 1
    state = replace(state, given_up=_with(state.given_up, name, times))
    if times >= GIVE_UP_LIMIT:
        return replace(state, failed=f"I could not get a value for {spec.label} that the form accepts")
    # asked again later: spelled (or typed) at once if its read-backs were rejected before
    rejections = _with(state.rejections, name, 1) if state.rejections.get(name) else state.rejections
    return replace(state, queue=state.queue + (Ask(spec),), rejections=rejections)


def explained(state: Interview) -> Interview:
    """The first :class:`Explain` has been said to the person.

    Raises:
        InterviewError: no explanation is due.
    """
    if not state.explain:
        raise InterviewError("explained, but no explanation is due")
    return replace(state, explain=state.explain[1:])


def told_reopening(state: Interview) -> Interview:
    """The person has been told that the form is being reopened (:class:`Reopening`).

    Raises:
        InterviewError: nothing was being reopened.
    """
    if not state.reopening:
        raise InterviewError("told of a reopening, but the form is not being reopened")
    return replace(state, reopening=False)


def reopen(state: Interview, name: str) -> Interview:
    """The person took back field ``name``'s value at the summary before submit ("No, my town
    is Leeds."): it is no longer confirmed (nor typed), it is asked first, and the submit
    waits for the computer agent's next ``auth-required`` (sent once the new value is in).

    Raises:
        InterviewError: ``name`` is not a known field.
    """
    spec = _spec(state, name)
    return replace(
        state,
        confirmed=_without(state.confirmed, name),
        typed=_without(state.typed, name),
        auth_requested=False,
        reopened=state.reopened + 1,
        queue=(Ask(spec), *(a for a in state.queue if a.spec.name != name)),
    )


def item_requested(state: Interview) -> Interview:
    """The person asked at the summary for one more item (``add_item`` sent): the submit waits
    for the new fields to be asked and the computer agent's next ``auth-required``."""
    return replace(state, auth_requested=False, browser_busy=True, filler_said=False, addable="")


def authorised(state: Interview) -> Interview:
    """The person said yes to submitting: the browser is busy submitting, and the person has
    been told so.

    Raises:
        InterviewError: authorisation was not requested.
    """
    if not state.auth_requested:
        raise InterviewError("authorised, but the computer agent did not ask for authorisation")
    return replace(state, auth_requested=False, browser_busy=True, filler_said=True)


def withdrawn(state: Interview) -> Interview:
    """The person stopped the submit after authorising it (``interrupt`` sent): authorisation
    is requested again and the browser is not busy."""
    return replace(state, auth_requested=True, browser_busy=False)


def hold(state: Interview) -> tuple[Interview, Filler | None]:
    """Start a :class:`Hold`: the new state and what to tell the person first (once per step
    boundary, :data:`Filler`; None: nothing). A hold that is not a step boundary counts in ``waits_on_browser``.

    Raises:
        InterviewError: the next step is not a :class:`Hold`.
    """
    step = next_step(state)
    if not isinstance(step, Hold):
        raise InterviewError(f"a hold while the next step is {type(step).__name__}")
    if not step.boundary:
        return replace(state, waits_on_browser=state.waits_on_browser + 1), None
    if state.filler_said:
        return state, None
    return replace(state, filler_said=True), ("working" if state.specs else "opening")


# --- internals -------------------------------------------------------------------------


def _fresh(state: Interview, ask: Ask) -> bool:
    return not ask.reason and not state.rejections.get(ask.spec.name) and not state.unheard.get(ask.spec.name)


#: the most details one question asks for together (a whole name, a date's parts: one each)
SECTION_DETAILS = 2


def _section(state: Interview) -> AskTogether | None:
    """The fresh fields at the head of the queue that one question asks together because the
    page puts them in one section (:attr:`FieldSpec.section`, issue 27: "What are your full
    name and date of birth?"): up to :data:`SECTION_DETAILS` details a person says in one
    breath (:func:`~appliance.phone_agent.told.open_fields`: names and strict kinds, not a
    choice, a consent or a one-time code), a name's or a date's parts whole; None for fewer
    than two details. Read-backs cannot go with such a question: the value before it is
    confirmed in the summary."""
    q = state.queue
    section = q[0].spec.section if q else None
    group: list[Ask] = []
    for a in q:
        if not section or a.spec.section != section or not _fresh(state, a) or a.choices:
            break
        if (
            not open_fields([a.spec])
            or fields.kind(a.spec) == "choice"  # its options are offered when it is asked alone
            or (_detail(a) not in _details(group) and len(_details(group)) == SECTION_DETAILS)
        ):
            break
        group.append(a)
    while (whole := _parts_whole(group)) is not None:
        group = group[:whole]  # a name or a date the limit cut: never asked in part
    return AskTogether(tuple(group), "several") if len(_details(group)) >= 2 else None


def _detail(a: Ask) -> str:
    """The detail a field holds: a name's parts are one, a date's parts one."""
    return "name" if fields.name_part(a.spec) else "date" if fields.date_part(a.spec) else a.spec.name


def _details(group: list[Ask]) -> list[str]:
    return list(dict.fromkeys(map(_detail, group)))


def _parts_whole(group: list[Ask]) -> int | None:
    """How many of ``group`` to keep so that no name or date is asked in part (None: all whole)."""
    names = [i for i, a in enumerate(group) if fields.name_part(a.spec)]
    dates = [i for i, a in enumerate(group) if fields.date_part(a.spec)]
    if names and {fields.name_part(group[i].spec) for i in names} != {"given", "family"}:
        return names[0]
    if dates and len(dates) != 3:
        return dates[0]
    return None


def _together(state: Interview) -> AskTogether | None:
    """The fields at the head of the queue a person answers in one go, if any."""
    if (several := _section(state)) is not None:
        return several
    q = state.queue
    if (
        len(q) >= 2
        and fields.name_part(q[0].spec) == "given"
        and fields.name_part(q[1].spec) == "family"
        and all(_fresh(state, a) for a in q[:2])
    ):
        return AskTogether(q[:2], "name")
    if (
        len(q) >= 3
        and {fields.date_part(a.spec) for a in q[:3]} == {"day", "month", "year"}
        and all(_fresh(state, a) for a in q[:3])
    ):
        return AskTogether(q[:3], "date")
    return None


def _add_fields(state: Interview, new: Iterable[FieldSpec]) -> Interview:
    specs, queue = dict(state.specs), list(state.queue)
    for spec in new:
        if spec.name not in specs and spec.name not in state.confirmed:
            specs[spec.name] = spec
            queue.append(Ask(spec))
    return replace(state, specs=_frozen(specs), queue=tuple(queue))


def _refuse(state: Interview, name: str, refusal: Refusal) -> Interview:
    spec = state.specs.get(name)
    if spec is None:  # not a field: e.g. the page did not load
        return replace(state, failed=refusal.reason)
    return replace(
        state,
        refusals=_with(state.refusals, name, refusal),
        confirmed=_without(state.confirmed, name),
        page_refusals=_with(state.page_refusals, name, state.page_refusals.get(name, 0) + 1),
        handed_over=_without(state.handed_over, name),
        typed=_without(state.typed, name),
        queue=(Ask(spec, refusal.reason, refusal.candidates), *(a for a in state.queue if a.spec.name != name)),
    )


def _spec(state: Interview, name: str) -> FieldSpec:
    spec = state.specs.get(name)
    if spec is None:
        raise InterviewError(f"no field {name!r} in this interview (known: {', '.join(state.specs) or 'none'})")
    return spec


def _with(m: Mapping, key: str, value: object) -> Mapping:
    return _frozen({**m, key: value})


def _without(m: Mapping, key: str) -> Mapping:
    return _frozen({k: v for k, v in m.items() if k != key}) if key in m else m
