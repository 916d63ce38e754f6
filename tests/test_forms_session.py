"""The form session's wiring without agents: the bus it opens from ``cfg.bus`` and the report
it makes from the envelopes. No model, no Chromium, no redis-server."""

from __future__ import annotations

from dataclasses import replace

import pytest

from appliance import config
from appliance.bus import Envelope, InProcBus
from appliance.bus.redis_streams import RedisBus
from appliance.computer_agent.agent import Outcome
from appliance.forms.session import PageSide, SessionResult, report, session_bus
from appliance.forms.typed import UnknownField
from appliance.phone_agent.agent import PhoneOutcome
from appliance.protocol import FieldFilled, FieldSpec, InfoCollected, StatusUpdate, SubmitAuthorized


def test_the_session_bus_is_the_configured_backend(tmp_path):
    cfg = config.load(overrides={"bus": {"log_dir": str(tmp_path / "logs")}})
    recorded = session_bus(cfg, "t1", tmp_path / "session")
    assert isinstance(recorded, InProcBus) and recorded.log_path == tmp_path / "session" / "bus.jsonl"
    unrecorded = session_bus(cfg, "t1", None)
    assert isinstance(unrecorded, InProcBus) and unrecorded.log_path == tmp_path / "logs" / "form-t1.jsonl"
    rcfg = config.load(overrides={"bus": {"backend": "redis", "redis_url": "redis://127.0.0.1:1/0"}})
    redis = session_bus(rcfg, "t1", tmp_path / "session")  # not started: no server needed
    assert isinstance(redis, RedisBus) and redis.url == "redis://127.0.0.1:1/0" and redis.stream == "form-t1"


def test_a_session_split_over_two_processes_joins_its_redis_stream_from_the_start(tmp_path):
    rcfg = config.load(overrides={"bus": {"backend": "redis", "redis_url": "redis://127.0.0.1:1/0"}})
    assert session_bus(rcfg, "t1", None, joined=True).from_start
    assert not session_bus(rcfg, "t1", None).from_start
    with pytest.raises(ValueError, match="needs bus.backend: redis"):
        session_bus(config.load(), "t1", tmp_path, joined=True)


URL_ERROR = "error: --url is the computer agent's: give it, except with --agent phone"


@pytest.mark.parametrize(
    "backend, argv, error",
    [
        (
            "inproc",
            ["--agent", "phone", "--task-id", "t1"],
            "error: the phone agent alone needs bus.backend: redis (the other agent's process talks to it over Redis "
            "Streams); this config has bus.backend: inproc",
        ),
        (
            "redis",
            ["--agent", "computer", "--url", "demo:flight"],
            "error: the computer agent alone needs a task id, the same for both processes (its bus is the Redis stream "
            "form-<task id>)",
        ),
        ("redis", ["--agent", "computer", "--task-id", "t1"], URL_ERROR),
        ("redis", ["--agent", "phone", "--task-id", "t1", "--url", "demo:flight"], URL_ERROR),
        ("redis", [], URL_ERROR),
        (
            "redis",
            ["--agent", "computer", "--task-id", "t1", "--url", "demo:flight", "--autonomous"],
            "error: the autonomous launch runs both agents in one process: drop --autonomous or the agent",
        ),
        (
            "redis",
            ["--agent", "phone", "--task-id", "a b/../x"],
            "error: task id 'a b/../x': use 1–64 letters, digits, '.', '_' or '-' (it names the Redis stream "
            "form-<task id>)",
        ),
    ],
)
def test_the_form_command_refuses_a_split_that_cannot_work_before_loading_anything(
    backend, argv, error, tmp_path, capsys
):
    from appliance.cli import main

    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"bus:\n  backend: {backend}\n")
    assert main(["form", "--config", str(cfg), *argv]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == error


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


def test_report_gives_the_interviews_figures_per_field_filled():
    from appliance.demo.profile import Profile
    from appliance.demo.spec import FieldRule, FormSpec
    from appliance.phone_agent.agent import CallStats

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
    from appliance.demo.profile import Profile
    from appliance.demo.spec import FieldRule, FormSpec

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
    from appliance.phone_agent.agent import CallStats

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


async def test_the_page_side_sends_typed_values_and_a_submit_as_the_page():
    side = PageSide()
    with pytest.raises(RuntimeError, match="no form session"):
        await side.submit()
    with pytest.raises(RuntimeError, match="no form session"):
        await side.value("city", "Leeds")
    events = []
    async with InProcBus(None) as bus:
        computer, phone = bus.subscribe("computer"), bus.subscribe("phone")
        side.bind(bus, "t1")
        with pytest.raises(UnknownField, match="none yet"):  # a field the session has not announced
            await side.value("city", "Leeds")
        side.typed.known([FieldSpec(name="city", label="Town or city", type="text", required=True)])
        await side.value("Town or city", "Leeds", emit=lambda ev, **kw: events.append((ev, kw)))
        with pytest.raises(RuntimeError, match="not waiting for your review"):  # the spoken go-ahead comes first
            await side.submit()
        side.seen(StatusUpdate(state="review", message="filled in"))
        await side.submit()
        got = [await anext(computer) for _ in range(2)]
        heard = await anext(phone)  # a typed value reaches the phone agent too: it is not asked again
    assert [(e.sender, e.type, e.task_id) for e in got] == [
        ("page", "info_collected", "t1"),
        ("page", "submit_authorized", "t1"),
    ]
    assert got[0].payload == InfoCollected(field="city", value="Leeds", confirmed=True) == heard.payload
    assert events == [
        (
            "bus_out",
            {
                "agent": "page",
                "type": "info_collected",
                "payload": {"field": "city", "value": "Leeds", "confirmed": True},
            },
        )
    ]
