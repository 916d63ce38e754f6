"""A form task taken over from a computer agent that died with its worker (issue 29): what the
agent before this one left on the task's stream, read by :func:`of`.

A pool worker killed mid-task leaves the task pending; another worker takes it over and reads
the task's stream ``form-<task id>`` from its first entry (the pool's
:func:`~appliance.forms.session.run_session`). What was published there before its own
``task_taken`` is the history; an earlier ``task_taken`` in it makes the task a takeover:

* **the fields announced** (the earlier agent's ``need_info``): the phone agent knows them by
  these names and has asked the person for them. The new agent names each page field whose
  spec under an announced name is that same spec (:func:`~appliance.computer_agent.fieldbook.inherit`)
  by the old name, without the LLM, and does not announce it again; the values the phone
  agent sent for them come to the new agent from the same stream, so each is put back and
  the person is asked nothing again (the way :func:`~appliance.computer_agent.fieldbook.reopened`
  keeps the book after a Chromium crash, but from the stream, since the book died with the
  worker);
* **the page's confirmation** (the earlier agent's ``submitted``): the form was sent, and the
  task is over before a browser opens.

Whether the earlier agent pressed the final submit and died before the page answered is not
in the history but in the task's submit mark (:data:`SUBMIT_MARK`, read and set by the agent).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from appliance.bus import Envelope
from appliance.protocol import FieldSpec, NeedInfo, Submitted, TaskTaken

#: the task's bus mark that guards the final submit: ``"<go-ahead envelope id> pressed"`` from just
#: before the press until the page answers, then ``"<id> answered"`` (see ``ComputerAgent._submit``)
SUBMIT_MARK = "submit"


@dataclass(frozen=True)
class Takeover:
    """What the earlier agent left: the ``fields`` it announced (in order; a name announced twice:
    the later spec) and the page's ``submitted`` confirmation (None: not submitted)."""

    fields: tuple[FieldSpec, ...] = ()
    submitted: str | None = None


def of(history: Iterable[Envelope], agent_id: str = "computer") -> Takeover | None:
    """The takeover that ``history`` (the task's envelopes before this agent's ``task_taken``, in
    stream order) makes, or None when no agent took the task before (no ``task_taken``)."""
    taken, fields, submitted = False, dict[str, FieldSpec](), None
    for env in history:
        match env.payload:
            case TaskTaken():
                taken = True
            case NeedInfo(fields=specs) if env.sender == agent_id:
                fields.update((s.name, s) for s in specs)
            case Submitted(confirmation=confirmation) if env.sender == agent_id:
                submitted = confirmation
    return Takeover(tuple(fields.values()), submitted) if taken else None


def pressed_unanswered(mark: str | None) -> bool:
    """Whether the submit mark's value says the final submit was pressed and the page's answer
    never read (the agent died in between): what it did is unknown."""
    return mark is not None and mark.endswith(" pressed")
