"""Control envelope types, shared by every agent: task life cycle (A2A states) and stop signals.

Shapes (``?`` = optional):

==========================  ===========================================================
type                        payload
==========================  ===========================================================
task_assigned               ``{goal, url?}``
status_update               ``{state, message?}`` — ``state`` is an A2A task state,
                            or ``review``: filled, not submitted, waiting for the person
task_completed              ``{summary?}``
terminate (urgent)          ``{reason}``
interrupt (urgent)          ``{reason}``
ack                         ``{}`` — the envelope acknowledged is named by ``reply_to``
==========================  ===========================================================
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from appliance.protocol.registry import Payload, register_type

TaskState = Literal[
    "submitted", "working", "input-required", "auth-required", "completed", "canceled", "rejected", "failed", "review"
]
"""A2A task states plus ``review`` (a "don't submit" task: every field is filled and the
browser stays up for the person to check it and submit it themselves); they appear only
inside ``status_update{state}``."""


class TaskAssigned(Payload):
    goal: str = Field(min_length=1)
    url: str | None = None


class TaskCompleted(Payload):
    summary: str = ""


class StatusUpdate(Payload):
    state: TaskState
    message: str | None = None


class Terminate(Payload):
    reason: str


class Interrupt(Payload):
    reason: str


class Ack(Payload):
    pass


for _name, _model, _urgent in (
    ("task_assigned", TaskAssigned, False),
    ("status_update", StatusUpdate, False),
    ("task_completed", TaskCompleted, False),
    ("terminate", Terminate, True),
    ("interrupt", Interrupt, True),
    ("ack", Ack, False),
):
    register_type(_name, _model, urgent=_urgent)
