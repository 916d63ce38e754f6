"""The two-process form set-up: ``appliance form --agent computer`` (Chromium on the form) and
``appliance form --agent phone`` (the person's terminal) as two child processes that share
nothing but a real redis-server's stream ``form-<task id>``. Both use the test session's
embedded LLM as a remote OpenAI-compatible endpoint (no llama-server of their own). The
phone process starts only once the computer agent has announced the fields, so it must read
the stream from its start. The test is the person at the phone process's terminal: the
simulated person (its own LLM slot) reads the ``assistant:`` lines and types its answers."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from pathlib import Path

import pytest
import redis.asyncio as aioredis
import yaml

from appliance.bus import Envelope
from appliance.demo.profile import load_profile
from appliance.demo.spec import evaluate, spec_for_url
from appliance.simulate.call import asks
from appliance.simulate.person import SimulatedPerson

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parent.parent
FORM, PROFILE = "masked-phone", "david"  # two fields: a name and a masked phone number
GUARD_S = 300  # a hung run fails here instead of hanging CI (not a speed target)


def _config(tmp_path: Path, forms_cfg, base_url: str, redis_url: str) -> Path:
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump({
        "llm": {"provider": "openai_compatible", "base_url": base_url, "model": forms_cfg.llm.model},
        "bus": {"backend": "redis", "redis_url": redis_url, "log_dir": str(tmp_path / "bus")},
        "recording": {"dir": str(tmp_path / "rec")},
        "browser": {"network": "loopback"},
    }))
    return path


async def _spawn(cfg: Path, *args: str, stderr, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "appliance.cli", "form", "--config", str(cfg), *args, cwd=REPO,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **env})


async def _stream(url: str, stream: str) -> list[Envelope]:
    r = aioredis.Redis.from_url(url)
    try:
        return [Envelope.from_json(f[b"e"]) for _, f in await r.xrange(stream)]
    finally:
        await r.aclose()


def _marked(mark: str) -> list[int]:
    """Live processes whose environment carries ``mark`` (the computer process's Chromium
    inherits it, and keeps it if it outlives its parent and is re-parented)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                env = (entry / "environ").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if mark.encode() in env and state != "Z":
                out.append(int(entry.name))
    return out


async def test_phone_and_computer_agents_in_two_processes_fill_the_form_over_redis(
        forms_cfg, forms_runtime, demo_site, redis_url, tmp_path):
    url = demo_site.urls[FORM]
    spec, profile = spec_for_url(url), load_profile(PROFILE)
    cfg = _config(tmp_path, forms_cfg, forms_runtime.llm_base_url, redis_url)
    task_id, mark = str(uuid.uuid4()), f"APPLIANCE_TEST_RUN={uuid.uuid4()}"
    person = SimulatedPerson(spec.person(profile), forms_runtime.llm("person"), lambda *a, **k: None)
    terminal: list[str] = []
    logs = {name: (tmp_path / f"{name}.log").open("wb") for name in ("computer", "phone")}

    async def at_the_terminal(phone: asyncio.subprocess.Process) -> None:
        """Read what the phone process prints; answer once what was read since the last
        answer asks something (as the simulation's typist does)."""
        read: list[str] = []
        async for raw in phone.stdout:
            text = raw.decode().rstrip("\n")
            terminal.append(text)
            if text.startswith("assistant: "):
                read.append(text.removeprefix("assistant: "))
                if asks(read[-1]):
                    said, read = " ".join(read), []
                    if reply := await person.respond(said):
                        terminal.append(f"> {reply}")
                        phone.stdin.write(reply.encode() + b"\n")
                        await phone.stdin.drain()

    await person.warm()
    computer = await _spawn(cfg, "--agent", "computer", "--task-id", task_id, "--url", url,
                            stderr=logs["computer"], env=dict([mark.split("=", 1)]))
    phone = None
    try:
        async with asyncio.timeout(GUARD_S):
            while not any(e.type == "need_info" for e in await _stream(redis_url, f"form-{task_id}")):
                assert computer.returncode is None, "the computer process ended before announcing the fields"
                await asyncio.sleep(0.2)
            phone = await _spawn(cfg, "--agent", "phone", "--task-id", task_id, stderr=logs["phone"], env={})
            person_task = asyncio.create_task(at_the_terminal(phone))
            computer_out, _ = await computer.communicate()
            await person_task
            phone_rc = await phone.wait()
    finally:
        for proc in (computer, phone):
            if proc is not None and proc.returncode is None:
                proc.kill()
                await proc.wait()
        for f in logs.values():
            f.close()
    why = "\n".join(terminal) + "\n--- computer:\n" + (tmp_path / "computer.log").read_text()[-3000:]
    assert computer.returncode == 0 and phone_rc == 0, why
    assert json.loads(computer_out.decode().strip().splitlines()[-1])["status"] == "submitted"
    assert json.loads(terminal[-1]) == {**json.loads(terminal[-1]), "agent": "phone", "status": "submitted"}
    [sub] = demo_site.submissions_of(FORM)
    assert all(r.ok for r in evaluate(spec, profile, sub.data)), (sub.data, why)
    envs = await _stream(redis_url, f"form-{task_id}")
    kinds = {(e.sender, e.type) for e in envs}
    assert {("computer", "need_info"), ("phone", "info_collected"), ("phone", "submit_authorized"),
            ("computer", "submitted"), ("phone", "task_completed")} <= kinds
    assert _marked(mark) == []  # no Chromium left, wherever it was re-parented
