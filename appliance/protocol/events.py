"""The session event callback: how agents and sessions write to a session's event log.

Envelopes go agent to agent over the bus; *events* go one way, to the session's event log
(``events.jsonl``) and to the person's page, which shows them. Each is a name and flat
JSON-able fields: ``emit("say", agent="phone", text="What is your family name?")``.
"""

from __future__ import annotations

from typing import Any, Protocol


class Emit(Protocol):
    """``emit(event, **fields)``: record one event; the return value is not used.

    The voice session's ``EventLog.emit`` is one; a test may pass ``lambda *a, **k: None``.
    """

    def __call__(self, event: str, /, **fields: Any) -> object: ...
