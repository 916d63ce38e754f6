"""The bottom floor: every envelope payload the agents exchange, typed and registered.

- :mod:`~appliance.protocol.registry` — ``Payload`` (frozen pydantic base), ``register_type``,
  the type-name ⇄ model registry the bus validates against.
- :mod:`~appliance.protocol.control` — task life cycle (A2A ``TaskState`` in ``status_update``),
  ``terminate`` / ``interrupt`` (urgent), ``ack``.
- :mod:`~appliance.protocol.forms` — computer agent ⇄ phone agent: ``FieldSpec``,
  ``need_info``, ``info_collected``, ``field_filled``, ``format_invalid``, ``fill_error``,
  ``initiate_phone_call_agent``, ``submit_authorized``, ``submitted``, ``step_failed``.
- :mod:`~appliance.protocol.werewolf` — judge ⇄ seat: ``werewolf_view``, ``werewolf_turn``,
  ``werewolf_action``.
- :mod:`~appliance.protocol.events` — ``Emit``, the shape of the callback that writes a
  session's event log (events go to the log and the page, not over the bus), and
  ``SESSION_EVENTS``, every session event's typed model by name.

Importing this package registers all of them; it imports nothing else of the project.
"""

from __future__ import annotations

from appliance.protocol.control import Ack, Interrupt, StatusUpdate, TaskAssigned, TaskCompleted, TaskState, Terminate
from appliance.protocol.events import Emit
from appliance.protocol.forms import (
    ONE_TIME_CODE,
    AddItem,
    FieldFilled,
    FieldSpec,
    FieldValue,
    FillError,
    FormatInvalid,
    FormTask,
    InfoCollected,
    InitiatePhoneCallAgent,
    ItemAddable,
    NeedInfo,
    PreviewClick,
    PreviewKey,
    StepFailed,
    StepProblem,
    SubmitAuthorized,
    Submitted,
    TaskTaken,
)
from appliance.protocol.registry import (
    EnvelopeError,
    Payload,
    TypeSpec,
    register_type,
    registered_types,
    type_name,
    type_spec,
)
from appliance.protocol.werewolf import ActionPayload, SeatViewPayload, TurnPayload

__all__ = [
    "ONE_TIME_CODE",
    "Ack",
    "AddItem",
    "ActionPayload",
    "Emit",
    "EnvelopeError",
    "FieldFilled",
    "FieldSpec",
    "FieldValue",
    "FillError",
    "FormatInvalid",
    "FormTask",
    "InfoCollected",
    "InitiatePhoneCallAgent",
    "ItemAddable",
    "Interrupt",
    "NeedInfo",
    "Payload",
    "PreviewClick",
    "PreviewKey",
    "SeatViewPayload",
    "StatusUpdate",
    "StepFailed",
    "StepProblem",
    "SubmitAuthorized",
    "Submitted",
    "TaskAssigned",
    "TaskCompleted",
    "TaskState",
    "TaskTaken",
    "Terminate",
    "TurnPayload",
    "TypeSpec",
    "register_type",
    "registered_types",
    "type_name",
    "type_spec",
]
