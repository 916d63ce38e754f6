"""Form-filling envelope types (computer agent ⇄ phone agent), registered on import.

Shapes (``?`` = optional):

==========================  ===========================================================
type                        payload
==========================  ===========================================================
info_collected              ``{field, value, confirmed}`` — ``confirmed``: the person
                            accepted the read-back
field_filled                ``{field, value_read_back}``
fill_error                  ``{field, reason}``
format_invalid              ``{field, expected, got, candidates?}`` — ``candidates``:
                            the page's close choices when several fit ("Paris, France"
                            or "Paris, Texas"); the person picks one
need_info                   ``{fields: [FieldSpec, ...]}`` (at least one)
initiate_phone_call_agent   ``{purpose, required_info: [FieldSpec, ...]}``
submit_authorized           ``{}``
submitted                   ``{confirmation?}`` — the form was submitted (a message,
                            not the A2A task state)
item_addable                ``{what}`` — the page can take one more item ("passenger")
add_item                    ``{request}`` — the person asked at the summary for one more
                            item of a repeating group ("add a second passenger")
step_failed                 ``{problem, reason, advice, field?}`` — the computer agent
                            gave up on a step it cannot do (``problem``: ``widget``,
                            ``no_control``, ``login``, ``captcha``, ``no_result``,
                            ``page_error``); the phone agent tells the person ``reason``
                            and ``advice`` at once
form_task                   ``{url, task?, take_by_ms}`` — on the pool's
                            ``form_tasks`` stream: a form call's computer agent for any
                            worker; its envelope's ``task_id`` names the task's
                            ``form-<task id>`` stream. Not taken by ``take_by_ms`` (Unix
                            ms): withdrawn, and a worker that reads it later skips it
task_taken                  ``{worker}`` — on ``form-<task id>``: a worker started the
                            task's computer agent
==========================  ===========================================================

``FieldSpec = {name, label, type, required, pattern?, options?, format_hint?, meaning?, consent,
section?, group?, group_index?}`` (CONTRACTS "Field spec").
A field value is a string, a boolean (checkbox) or a list of strings (multi-select).
Task states and stop signals are in :mod:`appliance.protocol.control`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from appliance.protocol.registry import Payload, register_type

FieldValue = str | bool | tuple[str, ...]
#: ``FieldSpec.meaning`` of a code the site sends the person (SMS, e-mail; HTML ``autocomplete="one-time-code"``)
ONE_TIME_CODE = "one_time_code"


class FieldSpec(Payload):
    """One form field the computer agent needs: ``type`` is the HTML input type (text, email, date, select, ...)."""

    name: str = Field(min_length=1)
    label: str
    type: str = Field(min_length=1)
    required: bool
    pattern: str | None = None  # the page's pattern attribute (a JavaScript regex), as found
    options: tuple[str, ...] | None = None  # select / radio choices, as labelled on the page
    format_hint: str | None = None  # e.g. "YYYY-MM-DD", "+44 …"
    meaning: str | None = None  # the field's canonical English name (given_name, date_of_birth, country …)
    consent: Literal["none", "required", "optional"] = "none"  # terms/declarations: required; marketing: optional
    section: str | None = None  # the page's heading or fieldset the field is in
    group: str | None = None  # a repeating group ("Passenger"), with the item's index from 1
    group_index: int | None = Field(default=None, ge=1)


class InfoCollected(Payload):
    field: str = Field(min_length=1)
    value: FieldValue
    confirmed: bool


class FieldFilled(Payload):
    field: str = Field(min_length=1)
    value_read_back: FieldValue


class FillError(Payload):
    field: str = Field(min_length=1)
    reason: str
    recovering: bool = False  # the computer agent puts it right itself (a new browser): nothing to ask


class FormatInvalid(Payload):
    field: str = Field(min_length=1)
    expected: str
    got: str
    candidates: tuple[str, ...] = ()  # the page's close choices for ``got``, when several fit


class NeedInfo(Payload):
    fields: tuple[FieldSpec, ...] = Field(min_length=1)


class InitiatePhoneCallAgent(Payload):
    purpose: str = Field(min_length=1)
    required_info: tuple[FieldSpec, ...]


class SubmitAuthorized(Payload):
    pass


class Submitted(Payload):
    confirmation: str | None = None  # what the page showed after submit, if anything


#: Why the computer agent gave up on a step: a widget it cannot operate (``field`` names it),
#: no control to go on or send, a sign-in page, a captcha, a press the page did not answer,
#: or an error the page shows that belongs to no field.
StepProblem = Literal["widget", "no_control", "login", "captcha", "no_result", "page_error"]


class StepFailed(Payload):
    problem: StepProblem
    reason: str = Field(min_length=1)  # what is wrong, as the person is told it
    advice: str = Field(min_length=1)  # what the person can do about it
    field: str | None = None  # the field it is about, if any


class AddItem(Payload):
    """The person asked, at the summary, for one more item of a repeating group ("Not yet: Charles
    Babbage is travelling with me. Please add him as a second passenger."): ``request`` in their
    words. The computer agent presses the page's "Add another …" control and announces the new
    fields (``need_info``), or says it cannot (``step_failed{no_control}``)."""

    request: str = Field(min_length=1)


class ItemAddable(Payload):
    """The page can take one more item of a repeating group (its "Add another passenger"
    control): ``what`` is the item in the page's words ("passenger"). Sent before
    ``auth-required``, so the summary can offer it ("… or add another passenger first?")."""

    what: str = Field(min_length=1)


class FormTask(Payload):
    """A form call's computer agent, for whichever pool worker takes it first
    (:mod:`appliance.forms.pool`)."""

    url: str = Field(min_length=1)
    task: str = ""  # the person's words (fill it but don't submit → a review)
    take_by_ms: int = Field(ge=0)  # Unix ms: after this the call was told no helper is free
    preview: bool = False  # a person's page shows the browser: the worker relays its pictures


class TaskTaken(Payload):
    worker: str = Field(min_length=1)  # the worker's id (host:pid)


class PreviewClick(Payload):
    """The person clicked the live preview at (``x``, ``y``), CSS pixels of the page's viewport:
    for the process whose browser it shows (a pool worker; :mod:`appliance.forms.remote`)."""

    x: float = Field(ge=0)
    y: float = Field(ge=0)


class PreviewKey(Payload):
    """The person pressed ``key`` in the live preview (one character, or a name of
    :data:`appliance.computer_agent.preview.KEYS`)."""

    key: str = Field(min_length=1, max_length=16)


for _name, _model, _urgent in (
    ("info_collected", InfoCollected, False),
    ("field_filled", FieldFilled, False),
    ("fill_error", FillError, False),
    ("format_invalid", FormatInvalid, False),
    ("need_info", NeedInfo, False),
    ("initiate_phone_call_agent", InitiatePhoneCallAgent, False),
    ("submit_authorized", SubmitAuthorized, False),
    ("submitted", Submitted, False),
    ("step_failed", StepFailed, False),
    ("add_item", AddItem, False),
    ("item_addable", ItemAddable, False),
    ("form_task", FormTask, False),
    ("task_taken", TaskTaken, False),
    ("preview_click", PreviewClick, False),
    ("preview_key", PreviewKey, False),
):
    register_type(_name, _model, urgent=_urgent)
