"""The one legal turn tool: schema, GBNF and argument checking."""

import json

import pytest
from judge_helpers import gbnf_regex

from appliance.judge import tools
from appliance.judge.state import IllegalAction, NightKill, Speak, Vote, WitchAct
from appliance.judge.tools import ToolSpec


def test_vote_schema_lists_only_legal_targets():
    t = ToolSpec(tools.VOTE, targets=("P1", "P3"), can_abstain=True)
    assert t.schema()["properties"]["target"]["enum"] == ["P1", "P3", "abstain"]
    assert t.grammar() == 'root ::= "{" "\\"target\\":" ("\\"P1\\"" | "\\"P3\\"" | "\\"abstain\\"") "}"'
    assert t.to_action({"target": "abstain"}) == Vote(None)
    assert t.to_action({"target": "P3"}) == Vote("P3")
    for bad in ({"target": "P2"}, {}, {"target": "P1", "x": 1}, {"target": None}, ["P1"]):
        with pytest.raises(IllegalAction):
            t.to_action(bad)


def test_witch_schema_follows_potions():
    both = ToolSpec(tools.WITCH_ACT, targets=("P2", "P5"), victim="P5", can_poison=True)
    assert both.schema()["required"] == ["save", "poison"]
    assert both.to_action({"save": True, "poison": None}) == WitchAct(True, None)
    assert both.arguments(WitchAct(False, "P2")) == {"save": False, "poison": "P2"}
    poison_only = ToolSpec(tools.WITCH_ACT, targets=("P2",), can_poison=True)
    assert list(poison_only.schema()["properties"]) == ["poison"]
    with pytest.raises(IllegalAction):
        poison_only.check(WitchAct(True, None))
    save_only = ToolSpec(tools.WITCH_ACT, victim="P5")
    with pytest.raises(IllegalAction):
        save_only.check(WitchAct(False, "P2"))
    with pytest.raises(IllegalAction):
        both.to_action({"save": "yes", "poison": None})


def test_wrong_tool_and_speech_limits():
    with pytest.raises(IllegalAction):
        ToolSpec(tools.NIGHT_KILL, targets=("P4",)).check(Vote("P4"))
    speak = ToolSpec(tools.SPEAK, max_chars=10)
    assert speak.to_action({"text": " hi ", "cites": []}) == Speak("hi")
    assert speak.arguments(Speak("hi")) == {"text": "hi", "cites": []}  # a person's words cite nothing
    with pytest.raises(IllegalAction):
        speak.to_action({"text": "x" * 11, "cites": []})
    with pytest.raises(IllegalAction):
        speak.to_action({"text": "  ", "cites": []})
    with pytest.raises(IllegalAction):
        speak.to_action({"text": "hi"})
    assert "{1,10}" in speak.grammar()
    assert NightKill("P4") == ToolSpec(tools.NIGHT_KILL, targets=("P4",)).to_action(json.loads('{"target":"P4"}'))


def test_a_speech_cites_public_facts_in_the_shape_its_schema_and_grammar_give():
    speak = ToolSpec(tools.SPEAK, max_chars=40)
    vote = {"kind": "vote", "day": 1, "by": "P4", "target": "P2"}
    death = {"kind": "death", "day": 12, "by": None, "target": None}
    assert speak.to_action({"text": "hi", "cites": [vote, death]}) == Speak("hi")
    grammar = gbnf_regex(speak.grammar())
    for cites in ([], [vote], [vote, death, vote]):
        assert grammar.fullmatch(json.dumps({"text": "hi", "cites": cites}, separators=(",", ":")))
    assert not grammar.fullmatch(json.dumps({"text": "hi", "cites": [vote] * 4}, separators=(",", ":")))
    for bad in (
        [{**vote, "kind": "rumour"}],
        [{**vote, "day": 0}],
        [{**vote, "day": True}],
        [{**vote, "by": "P10"}],
        [{k: v for k, v in vote.items() if k != "target"}],
        [vote] * 4,
        vote,
    ):
        with pytest.raises(IllegalAction):
            speak.to_action({"text": "hi", "cites": bad})
