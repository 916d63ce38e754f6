"""The form session's wiring without agents: the bus it opens from ``cfg.bus``, the split
over two processes it refuses, and the person's page side. No model, no Chromium, no
redis-server."""

from __future__ import annotations

import pytest

from appliance import config
from appliance.bus import InProcBus
from appliance.bus.redis_streams import RedisBus
from appliance.forms.session import PageSide, session_bus
from appliance.forms.typed import UnknownField
from appliance.protocol import FieldSpec, InfoCollected, StatusUpdate


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


def test_a_pool_needs_redis_and_reads_its_tasks_from_the_start_with_the_configured_claim_time():
    from appliance.errors import ApplianceError
    from appliance.forms import pool
    from appliance.forms.mode import FormFeature

    cfg = config.load(overrides={"forms": {"computer": "pool"}})
    with pytest.raises(ApplianceError, match="forms.computer: pool needs bus.backend: redis"):
        pool.tasks_bus(cfg)
    rcfg = config.load(
        overrides={
            "bus": {"backend": "redis", "redis_url": "redis://127.0.0.1:1/0"},
            "forms": {"computer": "pool", "claim_idle_ms": 4000},
        }
    )
    tasks = pool.tasks_bus(rcfg)  # not started: no server needed
    assert (tasks.stream, tasks.from_start, tasks.claim_idle_ms) == (pool.TASKS_STREAM, True, 4000)
    with pytest.raises(ValueError, match="autonomous launch runs both agents in one process"):
        FormFeature()._url(rcfg, {"url": "http://127.0.0.1:1/", "autonomous": True})
