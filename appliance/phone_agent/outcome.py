"""How a call ended, and what the benchmark reads off it."""

from __future__ import annotations

from dataclasses import dataclass, field

from appliance.protocol.events import PhoneStatus


@dataclass
class CallStats:
    """What the benchmark reads off a call: ``interview_s`` from the first question to the
    authorisation question (or the last answer when none was asked); ``person_turns``:
    answers the person gave in that span; ``spelled``: fields asked to be spelled;
    ``typed``: fields the person typed; ``explained_failures``: times the person was told a
    step failed and why; ``read_backs``: read-backs said; ``asks``: questions asking for a
    field's value, per field (a re-ask counts, a read-back does not; CONTRACTS "asks")."""

    interview_s: float | None = None
    person_turns: int = 0
    spelled: tuple[str, ...] = ()
    typed: tuple[str, ...] = ()
    explained_failures: int = 0
    read_backs: int = 0
    asks: dict[str, int] = field(default_factory=dict)


@dataclass
class PhoneOutcome:
    """``status``: ``submitted``, ``not_submitted`` (declined), ``review`` (filled, left for the
    person to check), ``failed`` (the form could not be done), ``no_answer`` or
    ``terminated``; ``waits_on_browser``: holds of its next utterance waiting for the
    computer agent, step boundaries excepted; ``stats``: the call's figures
    (:class:`CallStats`)."""

    status: PhoneStatus
    waits_on_browser: int
    detail: str = ""
    stats: CallStats = field(default_factory=CallStats)

    @property
    def explained_failures(self) -> int:
        """Times the person was told a step failed and why."""
        return self.stats.explained_failures
