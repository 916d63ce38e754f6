"""The session events' registry (``appliance.protocol.events``) against the three places that
use the names: every ``emit("…", …)`` call site in ``appliance/`` (read with ``ast``), the
page's list (``webrtc_page/app.js``), and ``EventLog.emit``, which validates at run time."""

from __future__ import annotations

import ast
import functools
import json
import re
from pathlib import Path
from typing import get_args

import pytest
from pydantic import TypeAdapter, ValidationError

from appliance.protocol.events import SESSION_EVENTS, ComputerStatus, DecisionWhat, EventError
from appliance.voice.events import EventLog

ROOT = Path(__file__).resolve().parent.parent
#: The callables that are the session's ``Emit``: ``emit`` / ``self.emit`` / ``session.events.emit``;
#: ``report`` / ``self._report``, as the voice pipeline's strategies and processors are handed
#: ``session.events.emit``; ``TurnObserver._mark``, which emits a turn's stage once.
EMITTERS = {"emit", "report", "_report", "_mark"}


@functools.cache
def _literal_calls() -> tuple[tuple[str, str, str, ast.Call], ...]:
    """``(module's text, file:line, callee's name, call)`` of every call in ``appliance/`` whose
    first argument is a string literal."""
    calls = []
    for path in sorted((ROOT / "appliance").rglob("*.py")):
        text = path.read_text()
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if isinstance(node.args[0].value, str) and name is not None:
                    calls.append((text, f"{path.relative_to(ROOT)}:{node.lineno}", name, node))
    return tuple(calls)


def _call_sites() -> list[tuple[str, ast.Call]]:
    """``(file:line, call)`` of every emitter call whose first argument is a string literal."""
    return [(where, call) for _, where, name, call in _literal_calls() if name in EMITTERS]


def _problems(where: str, call: ast.Call) -> list[str]:
    event = call.args[0].value
    model = SESSION_EVENTS.get(event)
    if model is None:
        return [f"{where}: {event!r} is not a registered session event"]
    if len(call.args) > 1:
        return [f"{where}: {event!r} has positional fields (fields are keywords)"]
    fields = {name: f for name, f in model.model_fields.items() if name != "event"}
    open_ = model.model_config.get("extra") == "allow"
    given = {k.arg: k.value for k in call.keywords if k.arg is not None}
    problems = [f"{where}: {event!r} has no field {k!r}" for k in given if k not in fields and not open_]
    splat = any(k.arg is None for k in call.keywords)
    if not splat:
        problems += [f"{where}: {event!r} lacks {n!r}" for n, f in fields.items() if f.is_required() and n not in given]
    for k, value in given.items():  # a literal value must fit its field's type
        if k in fields and isinstance(value, ast.Constant):
            try:
                TypeAdapter(fields[k].annotation).validate_python(value.value)
            except ValidationError:
                problems.append(f"{where}: {event!r} field {k!r} = {value.value!r} does not fit {fields[k].annotation}")
    return problems


def test_every_call_site_names_a_registered_event_with_its_fields():
    sites = _call_sites()
    assert len(sites) > 100  # the scan finds the call sites (~130 today)
    problems = [p for where, call in sites for p in _problems(where, call)]
    assert not problems, "\n".join(problems)


def _decisions() -> set[tuple[str, str]]:
    """``(file:line, what)`` of each decision named by a literal: ``emit("decision", what="…")``, or
    a decision step (``decide("…", …)`` in a module typed with ``DecisionWhat``: the phone agent's
    confirmation core) that the agent emits."""
    found = set()
    for where, call in _call_sites():
        if call.args[0].value == "decision":
            found |= {
                (where, k.value.value) for k in call.keywords if k.arg == "what" and isinstance(k.value, ast.Constant)
            }
    # an LLM's ``decide(prompt)`` is another thing: only modules typed with DecisionWhat
    found |= {
        (where, call.args[0].value)
        for text, where, name, call in _literal_calls()
        if name == "decide" and "DecisionWhat" in text
    }
    return found


def test_every_decision_names_a_known_decision():
    decisions = _decisions()
    assert len({what for _, what in decisions}) > 20  # the scan finds the agents' decisions
    assert {(where, what) for where, what in decisions if what not in get_args(DecisionWhat)} == set()


def test_every_known_decision_is_made_somewhere():
    assert set(get_args(DecisionWhat)) - {what for _, what in _decisions()} == set()


def test_the_computer_agent_ends_with_exactly_the_statuses_its_literal_lists():
    used = {call.args[0].value for _, _, name, call in _literal_calls() if name == "Outcome"}
    assert used == set(get_args(ComputerStatus))


def test_every_registered_event_is_emitted_somewhere():
    """A registered name no code emits is a stale entry (or an event renamed at its call site)."""
    emitted = {call.args[0].value for _, call in _call_sites()}
    assert set(SESSION_EVENTS) - emitted == set()


def test_every_event_model_says_what_it_means_and_is_named_by_its_literal():
    for name, model in SESSION_EVENTS.items():
        assert model.__doc__, f"{model.__name__} ({name!r}) has no docstring"
        assert get_args(model.model_fields["event"].annotation) == (name,)


# ---- the page --------------------------------------------------------------------------------------

APP_JS = (ROOT / "webrtc_page" / "app.js").read_text()


def _switches(js: str) -> list[str]:
    """The bodies of the page's ``switch (ev.event) { … }`` statements."""
    bodies = []
    for m in re.finditer(r"switch \(ev\.event\) \{", js):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(js[i], 0)
            i += 1
        bodies.append(js[m.end() : i - 1])
    return bodies


def _cases(js: str) -> list[tuple[list[str], str]]:
    """``([event names], the code they run)`` of each group of ``case "…":`` labels."""
    out = []
    for body in _switches(js):
        parts = re.split(r'((?:case "[^"]+":\s*)+)', body)
        out += [(re.findall(r'case "([^"]+)"', parts[i]), parts[i + 1]) for i in range(1, len(parts), 2)]
    return out


def _page_names(js: str) -> set[str]:
    sets = re.findall(r"const \w+_EVENTS = new Set\(\[([^\]]*)\]\)", js)
    return (
        {n for names, _ in _cases(js) for n in names}
        | set(re.findall(r'ev\.event === "([^"]+)"', js))
        | {n for s in sets for n in re.findall(r'"([^"]+)"', s)}
    )


def _page_problems(js: str) -> list[str]:
    """The page's names that are no registered event, and the fields it reads that its event lacks."""
    problems = [f"the page handles {n!r}, which nobody emits" for n in sorted(_page_names(js) - set(SESSION_EVENTS))]
    for events, code in _cases(js):
        read = set(re.findall(r"\bev\.(\w+)", code)) - {"event"}
        for event in set(events) & set(SESSION_EVENTS):
            if unknown := read - set(SESSION_EVENTS[event].model_fields):
                problems.append(f"the page reads {sorted(unknown)} of {event!r}, which it lacks")
    return problems


def test_the_page_reads_the_registry_s_events_and_fields():
    assert {"final_transcript", "bus_out", "ww_over", "turn"} <= _page_names(APP_JS)  # the parse finds them
    assert _page_problems(APP_JS) == []


def test_the_page_shows_every_werewolf_event():
    """``ww_`` events skip the activity log (``onWerewolf`` and return): each needs its case."""
    handled = {n for names, _ in _cases(APP_JS) for n in names}
    assert {n for n in SESSION_EVENTS if n.startswith("ww_")} - handled == set()


def test_the_page_words_every_computer_status():
    said = re.search(r"const said = \{(.*?)\};", APP_JS, re.S)
    assert said is not None
    keys = re.findall(r"(\w+): ", re.sub(r'"[^"]*"', '""', said.group(1)))  # the keys, not the words
    assert set(keys) == set(get_args(ComputerStatus))


def test_the_page_checks_catch_a_renamed_event_and_field():
    renamed = APP_JS.replace('case "bot_text":', 'case "bot_said":')
    assert _page_problems(renamed) == ["the page handles 'bot_said', which nobody emits"]
    misread = APP_JS.replace("ev.transcript ||", "ev.heard ||")
    assert _page_problems(misread) == ["the page reads ['heard'] of 'ww_heard', which it lacks"]


def test_the_call_site_check_catches_a_wrong_name_field_and_missing_field():
    calls = {
        src: ast.parse(src).body[0].value
        for src in (
            'emit("sya", agent="phone", text="hi")',
            'self.emit("say", agent="phone", txt="hi")',
            'self._report("say", agent="phone")',
            'emit("speculation", state="maybe")',
            'emit("turn", **stages)',
            'emit("decision", agent="phone", what="submit_declined", anything=1)',
        )
    }
    assert [_problems("x", c) for c in calls.values()] == [
        ["x: 'sya' is not a registered session event"],
        ["x: 'say' has no field 'txt'", "x: 'say' lacks 'text'"],
        ["x: 'say' lacks 'text'"],
        ["x: 'speculation' field 'state' = 'maybe' does not fit typing.Literal['started', 'kept', 'cancelled']"],
        [],
        [],
    ]


# ---- EventLog.emit at run time -----------------------------------------------------------------------


def test_a_valid_event_is_written_and_handed_over_as_given(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    seen = []
    log.listeners.append(seen.append)
    rec = log.emit("say", agent="phone", text="What is your family name?")
    reply = log.emit("llm_reply", text="Four.")  # an optional field left out stays out
    log.close()
    assert {k: v for k, v in rec.items() if k not in ("t_ms", "ts")} == {
        "event": "say",
        "agent": "phone",
        "text": "What is your family name?",
    }
    assert list(rec)[:3] == ["t_ms", "ts", "event"]
    assert "interrupted" not in reply
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == seen == log.events == [rec, reply]


def test_an_unregistered_event_raises_and_is_not_written(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    with pytest.raises(EventError, match=r"unknown session event 'sya'"):
        log.emit("sya", agent="phone", text="Hello")
    log.close()
    assert log.events == [] and (tmp_path / "events.jsonl").read_text() == ""


@pytest.mark.parametrize(
    ("event", "fields", "message"),
    [
        ("say", {"agent": "phone", "text": "Hi", "to": "P1"}, r"'say': field 'to': Extra inputs are not permitted"),
        ("say", {"agent": "phone"}, r"'say': field 'text': Field required"),
        ("ww_retry", {"attempt": "again"}, r"'ww_retry': field 'attempt': Input should be a valid integer"),
        ("decision", {"agent": "computer", "what": "guess"}, r"'decision': field 'what': Input should be 'launch'"),
    ],
)
def test_a_wrong_missing_or_mistyped_field_raises_naming_the_event_and_field(event, fields, message):
    with pytest.raises(EventError, match=message):
        EventLog(None).emit(event, **fields)


def test_a_decision_keeps_its_own_details():
    rec = EventLog(None).emit("decision", agent="phone", what="asr_unsure", field="postcode", value="M1", prob=0.4)
    assert {k: rec[k] for k in ("what", "field", "value", "prob")} == {
        "what": "asr_unsure",
        "field": "postcode",
        "value": "M1",
        "prob": 0.4,
    }
