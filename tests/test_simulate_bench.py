"""``appliance bench form``'s plan and summary, and the scripted typist's line (``--person
text``), without models or Chromium."""

from __future__ import annotations

import asyncio

from appliance.bench.form import BENCH_RUNS, bench_plan, bench_summary, hard_profiles
from appliance.demo.profile import Profile
from appliance.demo.site import FORMS
from appliance.simulate.form_run import TypistLine
from appliance.simulate.person import SimulatedPerson


def test_the_default_plan_is_the_old_runs_then_each_hard_profile_on_the_flight_form():
    hard = hard_profiles()
    assert len(hard) >= 6 and not {"david", "emma"} & set(hard)
    assert bench_plan(None, None) == [*BENCH_RUNS, *(("flight", p) for p in hard)]
    assert bench_plan(["flight"], ["david", "siobhan"]) == [("flight", "david"), ("flight", "siobhan")]
    assert bench_plan(["register"], None) == [("register", "david"), ("register", "emma")]
    assert bench_plan(None, ["hoa"]) == [("flight", "hoa")]


def test_the_summary_is_over_the_audio_runs():
    def run(
        person,
        spf,
        acc,
        *,
        form="flight",
        profile="david",
        accepted=True,
        failure=None,
        asks=3,
        wrong=False,
        false=False,
    ):
        return {
            "form": form,
            "profile": profile,
            "person": person,
            "seconds_per_field": spf,
            "exchanges_per_field": 1.5,
            "stages_s": {"bot_speech": {"median": 2.0, "per_field": spf / 2}, "exchanges": 5} if spf else None,
            "field_accuracy": acc,
            "accepted": accepted,
            "failure": failure,
            "asks": asks,
            "duration_s": 60.0,
            "wrong_submission": wrong,
            "false_submitted": false,
        }

    runs = [
        run("audio", 6.0, 1.0),
        run("audio", 9.0, 0.917, form="register", accepted=False, failure="the page refused it", wrong=True),
        run(
            "audio",
            None,
            0.0,
            form="wizard",
            accepted=True,
            failure="31 asks (more than 30): phone asked 9 times",
            asks=31,
        ),
        run("text", 1.0, 1.0),
        run("audio", 14.0, 1.0, profile="hoa"),
    ]
    assert bench_summary(runs) == {
        "seconds_per_field": {"median": 9.0, "max": 14.0},
        "field_accuracy_min": 0.0,
        "person": "audio",
        "runs": 4,
        "accepted": 2,
        "failed": ["register", "wizard"],  # a run over the asks bound fails whatever the page says
        "asks_max": 31,
        "duration_s_max": 60.0,
        "wrong_submissions": 1,
        "false_submitted": 0,
        "by_group": {  # issue 27: the bundled profiles on their forms; the hard ones on the flight form
            "easy": {
                "runs": 2,
                "seconds_per_field": {"median": 7.5, "max": 9.0},
                "exchanges_per_field": {"median": 1.5, "max": 1.5},
                "stages_s": {"bot_speech": 3.75},
            },
            "hard": {
                "runs": 1,
                "seconds_per_field": {"median": 14.0, "max": 14.0},
                "exchanges_per_field": {"median": 1.5, "max": 1.5},
                "stages_s": {"bot_speech": 7.0},
            },
        },
    }
    assert bench_summary(runs[3:4])["person"] == "text"


def test_forms_all_is_every_bundled_demo_form_with_david():
    plan = bench_plan(["all"], None)
    assert [f for f, _ in plan] == list(FORMS) and {p for _, p in plan} == {"david"}
    assert {"select2-country", "govuk-apply", "flight", "masked-phone"} <= set(FORMS) and len(FORMS) >= 30


class TopicLLM:
    async def json(self, system, user, **kw):
        return {"topic": "family_name"}

    async def warm(self, system):
        pass


async def test_the_typist_answers_what_it_reads_once_it_is_asked_something():
    events = []
    person = SimulatedPerson(Profile("p", {"family_name": "O'Neill"}), TopicLLM(), emit=lambda *a, **k: None)
    line = TypistLine(person, lambda e, **f: events.append((e, f)))
    await line.say("Hello! I'm your assistant.")  # a statement: nothing typed
    await line.say("What is your family name?")
    assert await asyncio.wait_for(line.hear(), 2) == "My last name is O'Neill."
    await line.say("I have Oscar, apostrophe, November, Echo, India, Lima, Lima. Is that right?")
    assert await asyncio.wait_for(line.hear(), 2) == "Yes, that's right."
    assert events[0] == ("person_heard", {"text": "Hello! I'm your assistant. What is your family name?"})


async def test_a_run_reports_only_the_submissions_made_since_it_started():
    from types import SimpleNamespace

    from appliance.simulate.form_run import _submissions

    site = SimpleNamespace(
        submissions=[
            SimpleNamespace(form="flight", data={"given_name": "David"}, ts_ms=1000),
            SimpleNamespace(form="flight", data={"given_name": "Hoa"}, ts_ms=5000),
        ],
        attempts=[
            SimpleNamespace(form="wizard", outcome="draft", data={"city": "Leeds"}, ts_ms=6000),
            SimpleNamespace(form="flight", outcome="accepted", data={}, ts_ms=5000),
        ],
    )
    assert await _submissions(site, "http://x/flight", 2000) == [
        {"form": "flight", "data": {"given_name": "Hoa"}, "ts_ms": 5000},
        {"form": "wizard", "data": {"city": "Leeds"}, "ts_ms": 6000, "draft": True},
    ]  # a draft, for a "don't submit" task
    assert await _submissions(site, "http://x/flight", 9000) == []


def test_the_stages_of_each_exchange_add_up_from_the_persons_events():
    from appliance.simulate.stages import stages

    def heard(start, end):
        return {"event": "person_asr", "bot_start_ts": start * 1000, "bot_end_ts": end * 1000}

    def said(at, audio_s, topic):
        return [{"event": "person", "topic": topic}, {"event": "person_said", "ts": at * 1000, "audio_s": audio_s}]

    events = [
        heard(0, 10),
        heard(10.5, 12),
        *said(13, 2, "full_name"),  # greeting, then the first question
        heard(15.7, 16.5),
        heard(19.0, 21.0),
        *said(21.5, 1.5, "date_of_birth"),  # a hold, then the question
        heard(23.7, 30),
        *said(31, 1, "submit"),  # the summary: after the interview
        heard(32.2, 33),
    ]
    got = stages(events, fields=2)
    assert got == {
        "person_reaction": {"median": 0.75, "per_field": 0.75},  # 1.0 and 0.5
        "person_speech": {"median": 1.75, "per_field": 1.75},
        "bot_reaction": {"median": 0.7, "per_field": 0.7},
        "bot_speech": {"median": 2.8, "per_field": 1.4},  # the summary is not the interview's
        "bot_wait": {"median": 2.5, "per_field": 1.25},
        "exchanges": 2,
    }
    assert stages([e for e in events if e["event"] != "person_asr"], fields=2) is None  # a text run
    presence = [
        {"event": "person", "topic": "none", "kind": "presence"},
        {"event": "person_said", "ts": 31000, "audio_s": 1},
    ]
    assert (
        stages(events[:-3] + presence + events[-1:], fields=2) == got
    )  # the summary's question missed: not the interview
