"""The pure parts of a form call's replay (issue 33): the person's utterances from a recording
(its clips heard again), what the page was sent, the bot's intents and where two runs diverge.
No model, no Chromium."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from appliance.forms import replay
from appliance.voice.wav import read_pcm, write_wav


def _e(t_ms: float, event: str, **f) -> dict:
    return {"t_ms": t_ms, "event": event, **f}


def test_the_persons_utterances_are_heard_again_from_their_clips_when_the_recording_has_them(tmp_path: Path):
    write_wav(tmp_path / "utterances" / "001.wav", b"\x01\x00" * 1600, 16_000)
    assert read_pcm(tmp_path / "utterances" / "001.wav") == (b"\x01\x00" * 1600, 16_000)
    events = [
        _e(50, "decision", what="field_asked", field="full_name"),
        _e(60, "say", text="What is your full name?"),
        _e(100, "asr", clip="utterances/001.wav"),
        _e(150, "asr", clip="utterances/002.wav"),  # two finals, one answer heard
        _e(200, "heard", agent="phone", text="David Miller"),
        _e(250, "say", text="I'm opening the form now."),  # a filler asks nothing
        _e(300, "heard", agent="phone", text="Yes."),  # no clip: a typed run, or not kept
        _e(400, "asr", clip=None),
    ]
    again = {"001.wav": "David", "002.wav": "Millar"}
    asked = ("ask:full_name",)
    assert replay.person_utterances(events, tmp_path, lambda p: again[p.name]) == [
        (200, asked, "David Millar"),
        (300, asked, "Yes."),
    ]
    assert replay.person_utterances(events, tmp_path) == [(200, asked, "David Miller"), (300, asked, "Yes.")]


async def test_each_question_gets_the_answer_given_to_the_most_alike_question_then():
    utterances = [
        (1, ("ask:given_name",), "David."),
        (2, ("read_back:given_name",), "Yes, that's right."),
        (3, ("ask:date_of_birth", "read_back:email"), "I was born on 1 May 1990."),  # a read-back with a question
        (4, ("ask:email",), "david@example.com"),
        (5, (f"say:{replay.question_words('Shall I submit the form?')}",), "Yes, submit it."),
    ]
    line = replay.ReplayLine(utterances, "asked")
    line.expect(["ask:given_name"])
    await line.say("What is your first name?")
    assert await line.hear() == "David."
    line.expect(["ask:email"])  # no read-back now: that answer is skipped, not misplaced
    await line.say("And your e-mail?")
    assert await line.hear() == "david@example.com"
    line.expect(["ask:date_of_birth"])  # asked alone now, with a read-back then: the most alike
    await line.say("And your date of birth?")
    assert await line.hear() == "I was born on 1 May 1990."
    line.expect(["read_back:email"])  # a read-back the call did not have: the values were accepted then
    await line.say("david@example.com, right?")
    assert await line.hear() == "Yes."
    await line.say("One moment.")  # a filler: still answering the read-back, nothing new put on the line
    await line.say("Shall I submit the form?")
    assert await line.hear() == "Yes, submit it."


def test_what_the_page_was_sent_is_its_accepted_record_or_its_form_posts_merged():
    posts = [
        {"url": "http://x/register/1?s=1", "method": "POST", "body": "first_name=Ada&last_name=Lovelace"},
        {"url": "http://x/register/2?s=1", "method": "POST", "body": "email=ada%40example.org"},
    ]
    assert replay.page_data(posts) == {"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.org"}
    record = {
        "url": "http://x/api/record",
        "method": "POST",
        "body": '{"form":"f","outcome":"accepted","data":{"a":1}}',
    }
    assert replay.page_data([*posts, record]) == {"a": "1"}
    assert replay.page_data([]) is None


def _run(events, values) -> replay.Run:
    """``events`` and, after them, each value sent by the phone agent and taken by the page."""
    sent = []
    for name, value in values.items():
        sent.append(_e(90, "bus_out", agent="phone", type="info_collected", payload={"field": name, "value": value}))
        sent.append(_e(95, "bus_out", agent="computer", type="field_filled", payload={"field": name}))
    return replay.Run(events + sent)


def test_two_runs_diverge_at_the_first_bot_utterance_whose_intent_differs(tmp_path: Path):
    then_events = [
        _e(0, "say", text="Hello! This call is recorded."),
        _e(10, "decision", what="field_asked", field="given_name"),
        _e(20, "say", text="What is your first name?"),
        _e(30, "decision", what="read_back", fields=["given_name"]),
        _e(40, "say", text="David, right?"),
        _e(50, "decision", what="field_asked", field="email"),
        _e(60, "say", text="Your e-mail?"),
    ]
    now_events = [
        *then_events[:4],
        _e(40, "say", text="Dawid, right?"),
        _e(50, "decision", what="field_asked", field="phone"),
    ]
    now_events.append(_e(60, "say", text="Your phone?"))
    assert replay.intents(replay.Run(then_events)) == [
        ("ask:given_name",),
        ("read_back:given_name",),
        ("ask:email",),
    ]  # the greeting asks nothing
    rec = replay.FormRecording(
        tmp_path, "http://x/f", "", _run(then_events, {"given_name": "David", "email": "d@x.org"}), tmp_path, 10.0
    )
    (tmp_path / "page.har").write_text('{"log": {"entries": []}}')
    rec = replay.FormRecording(tmp_path, "http://x/f", "", rec.then, tmp_path / "page.har", 10.0)
    report = replay.compare(rec, _run(now_events, {"given_name": "Dawid"}), 11.0)
    assert report["diverged_at"] == {"index": 2, "then": "Your e-mail?", "now": "Your phone?"}
    assert [(f["field"], f["same"]) for f in report["fields"]] == [("given_name", False), ("email", False)]
    assert report["fields"][0]["asks"] == {"then": 1, "now": 1} and report["fields"][0]["read_backs"]["now"] == 1
    assert report["verdict"] == "different" and not report["same_values"]  # no expected values: not better/worse
    assert report["duration_s"] == {"then": 10.0, "now": 11.0}


async def test_with_recorded_timing_each_utterance_is_heard_at_its_time_whatever_is_asked():
    line = replay.ReplayLine([(0, None, "Hello?"), (300, ("ask:email",), "a@b.org")], "recorded")
    feed = asyncio.create_task(line.feed())
    t0 = time.monotonic()
    assert await line.hear() == "Hello?"
    line.expect(["ask:given_name"])
    await line.say("What is your first name?")  # asked another thing: the recording goes on regardless
    assert await line.hear() == "a@b.org" and time.monotonic() - t0 >= 0.29
    await feed
    with pytest.raises(ValueError, match="timing"):
        replay.ReplayLine([], "fast")


def test_a_call_whose_computer_agent_ran_on_a_pool_worker_is_a_form_call_that_cannot_be_replayed(tmp_path: Path):
    (tmp_path / "events.jsonl").write_text(
        '{"t_ms": 1, "ts": 1, "event": "form_started", "url": "http://x/f", "autonomous": false, "task": ""}\n'
        '{"t_ms": 2, "ts": 2, "event": "agent_started", "agent": "phone", "purpose": "your web form", "fields": []}\n'
    )
    assert replay.is_form_recording(tmp_path)  # not taken for a voice session's recording
    with pytest.raises(replay.ReplayError, match="pool worker"):
        replay.load(tmp_path)


def test_a_form_left_for_review_is_judged_on_its_last_draft():
    draft = {"url": "http://x/api/record", "method": "POST", "body": '{"form":"w","outcome":"draft","data":{"a":"1"}}'}
    assert replay.page_data([draft]) is None and replay.page_data([draft], "draft") == {"a": "1"}


async def test_a_read_back_alone_never_takes_the_answer_to_a_question_said_with_a_read_back_then():
    line = replay.ReplayLine([(1, ("ask:date_of_birth", "read_back:full_name"), "Born 5 November 1992.")], "asked")
    line.expect(["read_back:full_name"])  # the date's field was not on the page yet: read back alone now
    await line.say("I have Sarah Miller. Is that right?")
    assert await line.hear() == "Yes."
    line.expect(["ask:date_of_birth"])
    await line.say("What is the companion's date of birth?")
    assert await line.hear() == "Born 5 November 1992."
