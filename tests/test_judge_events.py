"""The judge's typed events on disk: today's recordings load, and a bad line fails closed."""

import json
from pathlib import Path

import pytest

from appliance.judge import beliefs, selfplay, views
from appliance.judge.events import KINDS, Event, GameOver, Speech
from appliance.judge.state import PUBLIC, Faction, Phase

#: the events.jsonl of a game written by the judge before its events were typed (seed 119,
#: 8 seats, random policy): every kind of event, and all three reasons of an elimination
RECORDING = Path(__file__).parent / "data" / "judge_events_random_119.jsonl"


def _lines() -> list[dict]:
    return [json.loads(line) for line in RECORDING.read_text(encoding="utf-8").splitlines()]


def test_a_recording_loads_and_writes_back_the_same_lines():
    lines = _lines()
    assert {line["kind"] for line in lines} == set(KINDS)
    assert {line["data"]["reason"] for line in lines if line["kind"] == "eliminated"} == {
        "most votes",
        "tie",
        "no votes",
    }
    events = [Event.from_json(line) for line in lines]
    assert [e.to_json() for e in events] == lines
    assert [json.loads(json.dumps(e.to_json())) for e in events] == lines
    # the same game played today makes the same events
    assert tuple(events) == selfplay.play(119, 8, selfplay.RANDOM).events


def test_typed_fields_come_back_typed():
    events = [Event.from_json(line) for line in _lines()]
    assert events[-1] == Event(events[-1].round, Phase.NIGHT, PUBLIC, GameOver(Faction.WEREWOLVES))
    speech = next(e for e in events if isinstance(e.what, Speech))
    assert speech.what == Speech(seat="P1", text=selfplay.EMPTY_SPEECH) and speech.audience == PUBLIC
    assert all(isinstance(e.audience, tuple) for e in events if e.audience != PUBLIC)


@pytest.mark.parametrize(
    "change",
    [
        {"kind": "werewolf_wins"},  # an unknown kind
        {"kind": "speech"},  # the data of another kind
        {"data": {}},  # a missing field
        {"data": {"winner": "werewolves", "why": "numbers"}},  # an extra field
        {"data": {"winner": "nobody"}},  # a value outside the field's type
        {"phase": "dusk"},
        {"round": "late"},
        {"audience": "P3"},  # a seat, not the tuple of seats
        {"ts": 0},  # a key of no event line
    ],
)
def test_a_bad_line_fails_closed(change):
    line = {"round": 4, "phase": "night", "kind": "game_over", "audience": "*", "data": {"winner": "werewolves"}}
    assert Event.from_json(line).what == GameOver(Faction.WEREWOLVES)
    with pytest.raises(ValueError):
        Event.from_json(line | change)


def test_a_value_that_is_no_event_is_never_rendered_or_believed():
    e = Event(1, Phase.NIGHT, PUBLIC, {"kind": "speech", "seat": "P1", "text": "hi"})
    with pytest.raises(TypeError):
        views.render_event(e)
    with pytest.raises(TypeError):
        beliefs.update(beliefs.Beliefs(seat="P1"), e)
