"""The phone agent's interview as pure functions over a frozen :class:`Interview`.

The loop (:mod:`appliance.phone_agent.agent`) speaks and listens; everything it knows about
the form lives here and changes only through these functions::

    state = start(fields)
    while True:
        for payload in what arrived:          # at a safe point between utterances
            state = apply(state, payload, ts)
        step = next_step(state)               # Failed, Finished, Explain, Ask, Authorise, Review or Hold
        ...                                   # speak, listen, then one of the transitions below

**Messages** (:func:`apply`):

- ``need_info{fields}`` / ``initiate_phone_call_agent{required_info}`` queue their fields in
  the order given (page order), except fields already known or confirmed; the browser is no
  longer busy and the person may be told again that the agent is waiting.
- ``format_invalid{field, expected, got, candidates}`` / ``fill_error{field, reason}`` about a
  known field put it first in the queue with its reason ("it needs …" / the page's reason),
  take back its confirmation and remember the refusal (the value refused: ``got``; unknown
  for ``fill_error``). With ``candidates`` (the page offers several close choices) the ask
  carries them as ``choices``: the person picks one. About anything that is not a field
  (``page``: the form did not load) they fail the interview with that reason.
- ``step_failed{problem, reason, advice, field?}`` → an :class:`Explain` waits, said before
  anything else is asked; a field it names leaves the queue and is *handed over* (the person
  sets it in the preview or types it; a hold then reminds them of the advice).
- ``info_collected{confirmed: true}`` (a value the person typed on the page) confirms that
  field and takes it off the queue.
- ``status_update``: ``auth-required`` → authorisation is asked once the queue is empty;
  ``review`` → the form is filled and left unsent for the person's review (a "don't submit"
  task): the call ends with :class:`Review`; ``working`` → the browser is busy; ``failed`` /
  ``rejected`` / ``canceled`` → the interview fails with the message (or the state).
- ``submitted{confirmation}`` → finished. Any other payload changes nothing.

**Next step** (:func:`next_step`), the first that holds: failed → :class:`Failed`;
submitted → :class:`Finished`; an explanation due → :class:`Explain` (the first); a field
queued → :class:`Ask` (the first); authorisation requested → :class:`Authorise`; review →
:class:`Review`; else :class:`Hold`. A hold is a *step boundary* (not a wait on the
browser) while the browser is busy or every known field is confirmed or handed over.

**Transitions:** :func:`begin` takes the asked field off the queue (:func:`requeue` puts an ask cut short
back); :func:`confirm` records
a value the person accepted; :func:`refused` tells whether the page already refused the value
being read back; :func:`reask` drops a field's queued re-ask and refusal when it is asked again
on the spot; :func:`give_up` sends a field to the back of the queue the first time and fails
the interview the second; :func:`explained` drops the explanation just said;
:func:`authorised` records the person's yes to submitting;
:func:`hold` counts waits on the browser and says when to tell the person what is happening.

A transition that does not fit the state (asking a field that is not first in the queue,
confirming an unknown field, authorising unasked) raises :class:`InterviewError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal

from appliance.protocol import (FieldSpec, FieldValue, FillError, FormatInvalid, InfoCollected, InitiatePhoneCallAgent,
                                NeedInfo, Payload, StatusUpdate, StepFailed, StepProblem, Submitted)

#: A given-up field fails the interview on this give-up (the first one sends it to the back of the queue).
GIVE_UP_LIMIT = 2


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

    problem: StepProblem
    reason: str
    advice: str
    field: str | None = None
    since_ms: int = 0


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


Step = Failed | Finished | Explain | Ask | Authorise | Review | Hold

#: What to tell the person on a hold: the form is still opening (no field known yet), or the agent is working on it.
Filler = Literal["opening", "working"]


def _frozen(d: Mapping | None = None) -> Mapping:
    return MappingProxyType(dict(d or {}))


@dataclass(frozen=True)
class Interview:
    """What the phone agent knows. ``queue``: fields to ask, in order; ``specs``: every field
    known, by name, in arrival order; ``confirmed``: values the person accepted; ``refusals``:
    the page's last refusal per field; ``given_up``: give-ups per field; ``auth_requested``:
    the computer agent waits for authorisation; ``browser_busy``: loading or moving between
    pages; ``filler_said``: the person was told about this hold; ``submitted``: the page's
    confirmation once submitted; ``failed``: why the form cannot be done;
    ``waits_on_browser``: holds that were not step boundaries; ``explain``: give-ups to tell
    the person, in arrival order; ``handed_over``: fields left to the person → the advice
    they were given; ``review``: the computer agent's message once the form waits for the
    person's review."""

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
    explain: tuple[Explain, ...] = ()
    handed_over: Mapping[str, str] = field(default_factory=_frozen)
    review: str | None = None


def start(fields: Iterable[FieldSpec] = ()) -> Interview:
    """A new interview with ``fields`` already known (autonomous launch: ``required_info``), queued in order."""
    return _add_fields(Interview(), fields)


def apply(state: Interview, payload: Payload, ts: int = 0) -> Interview:
    """The interview after a message (sent at ``ts`` ms since the epoch; 0 = unknown) from the
    computer agent or the person's page (see the module docstring)."""
    match payload:
        case NeedInfo(fields=new) | InitiatePhoneCallAgent(required_info=new):
            return replace(_add_fields(state, new), browser_busy=False, filler_said=False)
        case FormatInvalid(field=name, expected=expected, got=got, candidates=candidates) if candidates:
            return _refuse(state, name, Refusal(got, "the page offers several close matches", tuple(candidates)))
        case FormatInvalid(field=name, expected=expected, got=got):
            return _refuse(state, name, Refusal(got, f"it needs {expected}"))
        case FillError(field=name, reason=reason):
            return _refuse(state, name, Refusal(None, reason))
        case StepFailed(problem=problem, reason=reason, advice=advice, field=name):
            state = replace(state, explain=state.explain + (Explain(problem, reason, advice, name, ts),),
                            browser_busy=False)
            if name in state.specs:
                state = replace(state, queue=tuple(a for a in state.queue if a.spec.name != name),
                                handed_over=_with(state.handed_over, name, advice))
            return state
        case InfoCollected(field=name, value=value, confirmed=True) if name in state.specs:
            return replace(confirm(state, name, value), queue=tuple(a for a in state.queue if a.spec.name != name),
                           handed_over=_without(state.handed_over, name))
        case StatusUpdate(state="auth-required"):
            return replace(state, auth_requested=True, browser_busy=False)
        case StatusUpdate(state="review", message=message):
            return replace(state, review=message or "the form is filled in and waits for your review",
                           browser_busy=False)
        case StatusUpdate(state="working"):
            return replace(state, browser_busy=True)
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
    if state.explain:
        return state.explain[0]
    if state.queue:
        return state.queue[0]
    if state.auth_requested:
        return Authorise()
    if state.review is not None:
        return Review(state.review)
    return Hold(state.browser_busy or all(n in state.confirmed or n in state.handed_over for n in state.specs))


def begin(state: Interview, ask: Ask) -> Interview:
    """Start asking ``ask``: it leaves the queue; its refusal, if any, is in ``ask.reason``.

    Raises:
        InterviewError: ``ask`` is not the first queued.
    """
    if not state.queue or state.queue[0] != ask:
        raise InterviewError(f"{ask.spec.name!r} is not the next field to ask")
    return replace(state, queue=state.queue[1:], refusals=_without(state.refusals, ask.spec.name))


def requeue(state: Interview, ask: Ask) -> Interview:
    """``ask`` was cut short (an explanation comes first): it goes back to the front of the
    queue, unless its field is confirmed or queued already."""
    if ask.spec.name in state.confirmed or any(a.spec.name == ask.spec.name for a in state.queue):
        return state
    return replace(state, queue=(ask, *state.queue))


def confirm(state: Interview, name: str, value: FieldValue) -> Interview:
    """The person accepted ``value`` for field ``name``.

    Raises:
        InterviewError: ``name`` is not a known field.
    """
    _spec(state, name)
    return replace(state, confirmed=_with(state.confirmed, name, value),
                   refusals=_without(state.refusals, name))


def refused(state: Interview, name: str, value: FieldValue) -> bool:
    """Whether the page has refused ``value`` for field ``name`` (a refusal that does not
    say which value it was about counts as about this one)."""
    r = state.refusals.get(name)
    return r is not None and bool(r.reason) and (r.value is None or r.value == str(value))


def reask(state: Interview, name: str) -> tuple[Interview, str]:
    """Field ``name`` is asked again right now: its queued re-ask and its refusal are dropped.
    Returns the new state and the refusal's reason ('' = none)."""
    r = state.refusals.get(name)
    return (replace(state, queue=tuple(a for a in state.queue if a.spec.name != name),
                    refusals=_without(state.refusals, name)), r.reason if r else "")


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
    return replace(state, queue=state.queue + (Ask(spec),))


def explained(state: Interview) -> Interview:
    """The first :class:`Explain` has been said to the person.

    Raises:
        InterviewError: no explanation is due.
    """
    if not state.explain:
        raise InterviewError("explained, but no explanation is due")
    return replace(state, explain=state.explain[1:])


def authorised(state: Interview) -> Interview:
    """The person said yes to submitting: the browser is busy submitting, and the person has
    been told so.

    Raises:
        InterviewError: authorisation was not requested.
    """
    if not state.auth_requested:
        raise InterviewError("authorised, but the computer agent did not ask for authorisation")
    return replace(state, auth_requested=False, browser_busy=True, filler_said=True)


def hold(state: Interview) -> tuple[Interview, Filler | None]:
    """Start a :class:`Hold`: the new state and what to tell the person first (once per step
    boundary; None: nothing). A hold that is not a step boundary counts in ``waits_on_browser``.

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
    return replace(state, refusals=_with(state.refusals, name, refusal), confirmed=_without(state.confirmed, name),
                   handed_over=_without(state.handed_over, name),
                   queue=(Ask(spec, refusal.reason, refusal.candidates),
                          *(a for a in state.queue if a.spec.name != name)))


def _spec(state: Interview, name: str) -> FieldSpec:
    spec = state.specs.get(name)
    if spec is None:
        raise InterviewError(f"no field {name!r} in this interview (known: {', '.join(state.specs) or 'none'})")
    return spec


def _with(m: Mapping, key: str, value: object) -> Mapping:
    return _frozen({**m, key: value})


def _without(m: Mapping, key: str) -> Mapping:
    return _frozen({k: v for k, v in m.items() if k != key}) if key in m else m
