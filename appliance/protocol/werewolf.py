"""Envelope types between the judge and the seats on the bus.

- ``werewolf_view`` judge → seat (recipient = seat id): the seat's own view after each
  phase change (the page of a human seat shows it; AI seats may ignore it).
- ``werewolf_turn`` judge → seat: the seat's view, the instruction and the one legal tool;
  sent with :meth:`Bus.request`.
- ``werewolf_action`` seat → judge, ``reply_to`` the turn: the tool's arguments (AI seats,
  and the simulated user's own tool call) and, for the user seat, the ASR transcript of
  what was said — the only thing the judge applies for that seat.
"""

from __future__ import annotations

from typing import Any

from appliance.protocol.registry import Payload, register_type

VIEW = "werewolf_view"
TURN = "werewolf_turn"
ACTION = "werewolf_action"
JUDGE = "judge"


class SeatViewPayload(Payload):
    game_id: str
    view: dict[str, Any]  # SeatView.to_json()


class TurnPayload(Payload):
    game_id: str
    round: int
    phase: str
    view: tuple[str, ...]  # the seat's log, one line per event
    instruction: str
    tool: dict[str, Any]  # ToolSpec fields: rebuild with ToolSpec(**tool)
    attempt: int = 0  # > 0: the user seat is asked again after a transcript that did not match


class ActionPayload(Payload):
    game_id: str
    seat: str
    tool: str
    arguments: dict[str, Any] | None = None  # the tool call (None for a human user seat)
    transcript: str | None = None  # user seat: ASR transcript of the spoken action
    utterance: str | None = None  # simulated user seat: the text it synthesised


register_type(VIEW, SeatViewPayload)
register_type(TURN, TurnPayload)
register_type(ACTION, ActionPayload)
