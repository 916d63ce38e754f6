"""The form session's wiring without agents: the bus it opens from ``cfg.bus`` and the report
it makes from the envelopes. No model, no Chromium, no redis-server."""

from __future__ import annotations

from dataclasses import replace

from appliance import config
from appliance.bus import Envelope, InProcBus
from appliance.bus.redis_streams import RedisBus
from appliance.computer_agent.agent import Outcome
from appliance.forms.session import SessionResult, report, session_bus
from appliance.phone_agent.agent import PhoneOutcome
from appliance.protocol import FieldFilled, InfoCollected, SubmitAuthorized


def test_the_session_bus_is_the_configured_backend(tmp_path):
    cfg = config.load(overrides={"bus": {"log_dir": str(tmp_path / "logs")}})
    recorded = session_bus(cfg, "t1", tmp_path / "session")
    assert isinstance(recorded, InProcBus) and recorded.log_path == tmp_path / "session" / "bus.jsonl"
    unrecorded = session_bus(cfg, "t1", None)
    assert isinstance(unrecorded, InProcBus) and unrecorded.log_path == tmp_path / "logs" / "form-t1.jsonl"
    rcfg = config.load(overrides={"bus": {"backend": "redis", "redis_url": "redis://127.0.0.1:1/0"}})
    redis = session_bus(rcfg, "t1", tmp_path / "session")  # not started: no server needed
    assert isinstance(redis, RedisBus) and redis.url == "redis://127.0.0.1:1/0" and redis.stream == "form-t1"


def _env(payload, ts):
    env = Envelope.new(payload, sender="phone", recipient="computer")
    return env.model_copy(update={"ts": ts})


def test_report_measures_fill_lag_and_authorisation_from_the_envelopes():
    envs = [_env(InfoCollected(field="email", value="a@b.c", confirmed=False), 1000),
            _env(FieldFilled(field="email", value_read_back="a@b.c"), 1100),  # answers no confirmed value
            _env(InfoCollected(field="email", value="a@b.c", confirmed=True), 2000),
            _env(FieldFilled(field="email", value_read_back="a@b.c"), 2150),
            _env(InfoCollected(field="name", value="Ada", confirmed=True), 3000),
            _env(FieldFilled(field="name", value_read_back="Ada"), 3050),
            _env(SubmitAuthorized(), 4000)]
    result = SessionResult(Outcome("submitted", "ok", submitted_at_ms=4100), PhoneOutcome("submitted", 0), "fixed",
                           envs, duration_s=12.34)
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

    envs = [_env(FieldFilled(field="name", value_read_back="Ada"), 1000),
            _env(FieldFilled(field="email", value_read_back="a@b.c"), 1100),
            _env(FieldFilled(field="email", value_read_back="a@b.c"), 1200),  # one field, read back twice
            _env(SubmitAuthorized(), 2000)]
    stats = CallStats(interview_s=13.0, person_turns=5, spelled=("name",), explained_failures=1)
    result = SessionResult(Outcome("submitted", "ok", submitted_at_ms=2100), PhoneOutcome("submitted", 0, "", stats),
                           "fixed", envs, duration_s=30.0, actions=4)
    spec = FormSpec("f", "/f", (FieldRule("name", "given_name"), FieldRule("email", "email")))
    profile = Profile("p", {"given_name": "Ada", "email": "a@b.c"})
    r = report(result, spec, profile, [{"form": "f", "data": {"name": "Ada", "email": "a@b.c"}, "ts_ms": 2100}])
    assert (r["seconds_per_field"], r["exchanges_per_field"], r["spelled_fields"]) == (6.5, 2.5, 1)
    assert (r["actions"], r["explained_failures"], r["accepted"], r["field_accuracy"]) == (4, 1, True, 1.0)
    wrong = report(result, spec, profile, [{"form": "f", "data": {"name": "Adda", "email": "a@b.c"}, "ts_ms": 2100}])
    assert not wrong["accepted"] and wrong["field_accuracy"] == 0.5
