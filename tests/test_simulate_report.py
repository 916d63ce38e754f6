"""The simulation's report of a finished form session, from its envelopes, the demo spec and
profile, and what the site recorded. No model, no Chromium, no site."""

from __future__ import annotations

from dataclasses import replace

from appliance.bus import Envelope
from appliance.computer_agent.agent import Outcome
from appliance.demo.profile import Profile
from appliance.demo.spec import FieldRule, FormSpec
from appliance.forms.session import SessionResult
from appliance.phone_agent.agent import CallStats, PhoneOutcome
from appliance.protocol import FieldFilled, InfoCollected, SubmitAuthorized, Submitted
from appliance.simulate.report import report


def _env(payload, ts):
    env = Envelope.new(payload, sender="phone", recipient="computer")
    return env.model_copy(update={"ts": ts})


def test_report_measures_fill_lag_and_authorisation_from_the_envelopes():
    envs = [
        _env(InfoCollected(field="email", value="a@b.c", confirmed=False), 1000),
        _env(FieldFilled(field="email", value_read_back="a@b.c"), 1100),  # answers no confirmed value
        _env(InfoCollected(field="email", value="a@b.c", confirmed=True), 2000),
        _env(FieldFilled(field="email", value_read_back="a@b.c"), 2150),
        _env(InfoCollected(field="name", value="Ada", confirmed=True), 3000),
        _env(FieldFilled(field="name", value_read_back="Ada"), 3050),
        _env(SubmitAuthorized(), 4000),
    ]
    result = SessionResult(
        Outcome("submitted", "ok", submitted_at_ms=4100), PhoneOutcome("submitted", 0), "fixed", envs, duration_s=12.34
    )
    r = report(result, None, None, None)
    assert r["fill_lag_ms"] == {"p50": 100, "max": 150}
    assert r["submitted"] and r["authorised_before_submit"]
    assert r["duration_s"] == 12.3 and r["phone_waits_on_browser"] == 0
    assert [m["type"] for m in r["messages"]][-1] == "submit_authorized"
    early = replace(result, computer=Outcome("submitted", "ok", submitted_at_ms=3900))
    assert not report(early, None, None, None)["authorised_before_submit"]


def test_a_session_whose_computer_agent_ran_on_a_pool_worker_is_reported_from_its_envelopes():
    done = Envelope.new(Submitted(confirmation="ok"), sender="computer", recipient="phone")
    envs = [_env(SubmitAuthorized(), 4000), done.model_copy(update={"ts": 4100})]
    result = SessionResult(None, PhoneOutcome("submitted", 0), "fixed", envs, duration_s=9)
    r = report(result, None, None, None)
    assert r["submitted"] and r["authorised_before_submit"]
    assert not report(replace(result, envelopes=[envs[1], _env(SubmitAuthorized(), 4200)]), None, None, None)[
        "authorised_before_submit"
    ]
    assert report(replace(result, envelopes=envs[:1]), None, None, None)["submitted"] is False


def test_report_gives_the_interviews_figures_per_field_filled():
    envs = [
        _env(FieldFilled(field="name", value_read_back="Ada"), 1000),
        _env(FieldFilled(field="email", value_read_back="a@b.c"), 1100),
        _env(FieldFilled(field="email", value_read_back="a@b.c"), 1200),  # one field, read back twice
        _env(SubmitAuthorized(), 2000),
    ]
    stats = CallStats(interview_s=13.0, person_turns=5, spelled=("name",), explained_failures=1)
    result = SessionResult(
        Outcome("submitted", "ok", submitted_at_ms=2100, actions={"fill": 3, "click": 1}),
        PhoneOutcome("submitted", 0, "", stats),
        "fixed",
        envs,
        duration_s=30.0,
    )
    spec = FormSpec("f", "/f", (FieldRule("name", "given_name"), FieldRule("email", "email")))
    profile = Profile("p", {"given_name": "Ada", "email": "a@b.c"})
    r = report(result, spec, profile, [{"form": "f", "data": {"name": "Ada", "email": "a@b.c"}, "ts_ms": 2100}])
    assert (r["seconds_per_field"], r["exchanges_per_field"], r["spelled_fields"]) == (6.5, 2.5, 1)
    assert (r["actions"], r["explained_failures"], r["accepted"], r["field_accuracy"]) == (4, 1, True, 1.0)
    wrong = report(result, spec, profile, [{"form": "f", "data": {"name": "Adda", "email": "a@b.c"}, "ts_ms": 2100}])
    assert not wrong["accepted"] and wrong["field_accuracy"] == 0.5


def test_a_dont_submit_run_is_judged_on_the_pages_last_draft_and_no_submission():
    result = SessionResult(Outcome("not_submitted", "review"), PhoneOutcome("review", 0), "fixed", [], duration_s=9)
    spec = FormSpec("w", "/w", (FieldRule("name", "given_name"),), submit=False)
    profile = Profile("p", {"given_name": "Ada"})
    drafts = [
        {"form": "w", "data": {"name": "Ad"}, "ts_ms": 1, "draft": True},
        {"form": "w", "data": {"name": "Ada"}, "ts_ms": 2, "draft": True},
    ]
    r = report(result, spec, profile, drafts)
    assert (r["accepted"], r["field_accuracy"], r["submitted"]) == (True, 1.0, False)
    sent = report(result, spec, profile, [*drafts, {"form": "w", "data": {"name": "Ada"}, "ts_ms": 3}])
    assert not sent["accepted"] and sent["submitted"]  # a submission on a "don't submit" task
    assert report(result, spec, profile, drafts[:1])["field_accuracy"] == 0.0  # the last draft decides


def test_report_counts_browser_actions_and_explained_failures():
    result = SessionResult(
        Outcome("submitted", "ok", actions={"fill": 4, "click": 2, "select": 1, "key": 9}),
        PhoneOutcome("submitted", 0, stats=CallStats(explained_failures=2)),
        "fixed",
        [],
        duration_s=1,
    )
    r = report(result, None, None, None)
    assert (r["actions"], r["explained_failures"]) == (16, 2)
    assert report(replace(result, phone=None), None, None, None)["explained_failures"] == 0
