"""What became of one utterance said on a line: the voice pipeline's
(:meth:`appliance.voice.line.LineProcessor.say`) and every other line the phone agent speaks
on (:class:`appliance.phone_agent.line.Line`) return it, and the phone agent's confirmation
core reads it (:func:`appliance.phone_agent.confirmation.heard_fully`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SayOutcome:
    """What became of one ``say``.

    ``interrupted``: the person barged in before the end (False: played to the end).
    ``heard``: the clauses whose audio was played, markers removed, joined by spaces
    (``''`` when none was); a line without audio (text on a terminal, a scripted person)
    shows the whole text: ``SayOutcome(False, text)``.
    """

    interrupted: bool
    heard: str
