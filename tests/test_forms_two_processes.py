"""The two-process form set-up: ``appliance form --agent computer`` (Chromium on the form) and
``appliance form --agent phone`` (the person's terminal) as two child processes that share
nothing but a real redis-server's stream ``form-<task id>``. Both use the test session's
embedded LLM as a remote OpenAI-compatible endpoint (no llama-server of their own). The
phone process starts only once the computer agent has announced the fields, so it must read
the stream from its start. The test is the person at the phone process's terminal: the
simulated person (its own LLM slot) reads the ``assistant:`` lines and types its answers, or
presses Ctrl-C, which must stop both processes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis.asyncio as aioredis
import yaml

from appliance.bus import Envelope
from appliance.bus.redis_streams import stream_keys
from appliance.chromium import alive
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
    path.write_text(
        yaml.safe_dump(
            {
                "llm": {"provider": "openai_compatible", "base_url": base_url, "model": forms_cfg.llm.model},
                "bus": {"backend": "redis", "redis_url": redis_url, "log_dir": str(tmp_path / "bus")},
                "recording": {"dir": str(tmp_path / "rec")},
                "browser": {"network": "loopback"},
            }
        )
    )
    return path


async def _spawn(cfg: Path, *args: str, stderr, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "appliance.cli",
        "form",
        "--config",
        str(cfg),
        *args,
        cwd=REPO,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
    )


async def _stream(url: str, stream: str) -> list[Envelope]:
    """Every envelope of the task's stream (ordinary and urgent), oldest first."""
    r = aioredis.Redis.from_url(url)
    try:
        envs = [Envelope.from_json(f[b"e"]) for key in stream_keys(stream) for _, f in await r.xrange(key)]
    finally:
        await r.aclose()
    return sorted(envs, key=lambda e: e.id)  # UUIDv7: time-ordered


def _marked(mark: str) -> list[int]:
    """Live Chromium processes whose environment carries ``mark`` (the computer process's
    Chromium inherits it, and keeps it if it outlives its parent and is re-parented)."""
    out = []
    for entry in Path("/proc").iterdir():
        try:
            found = (
                entry.name.isdigit()
                and mark.encode() in (entry / "environ").read_bytes()
                and b"chrom" in (entry / "cmdline").read_bytes()
            )
        except OSError:
            continue
        if found and alive(int(entry.name)):
            out.append(int(entry.name))
    return out


@dataclass
class Split:
    """The two processes of one task, and what tells their Chromium apart (``mark``)."""

    computer: asyncio.subprocess.Process
    phone: asyncio.subprocess.Process
    task_id: str
    mark: str
    logs: Path

    def why(self, terminal: list[str]) -> str:
        """The terminal and the computer process's log, for a failing assertion."""
        return "\n".join(terminal) + "\n--- computer:\n" + (self.logs / "computer.log").read_text()[-3000:]


@contextlib.asynccontextmanager
async def two_processes(forms_cfg, forms_runtime, redis_url: str, url: str, tmp_path: Path):
    """Start the computer process on ``url``; once it has announced the fields on the stream
    (its Chromium is up), the phone process. Both are killed on the way out if still running."""
    cfg = _config(tmp_path, forms_cfg, forms_runtime.llm_base_url, redis_url)
    task_id, mark = str(uuid.uuid4()), f"APPLIANCE_TEST_RUN={uuid.uuid4()}"
    procs = []
    with (tmp_path / "computer.log").open("wb") as clog, (tmp_path / "phone.log").open("wb") as plog:
        try:
            async with asyncio.timeout(GUARD_S):
                procs.append(
                    await _spawn(
                        cfg,
                        "--agent",
                        "computer",
                        "--task-id",
                        task_id,
                        "--url",
                        url,
                        stderr=clog,
                        env=dict([mark.split("=", 1)]),
                    )
                )
                while not any(e.type == "need_info" for e in await _stream(redis_url, f"form-{task_id}")):
                    assert procs[0].returncode is None, "the computer process ended before announcing the fields"
                    await asyncio.sleep(0.2)
                assert _marked(mark), "the mark does not find the computer process's Chromium"
                procs.append(await _spawn(cfg, "--agent", "phone", "--task-id", task_id, stderr=plog, env={}))
                yield Split(*procs, task_id, mark, tmp_path)
        finally:
            for proc in procs:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()


def _last_json(out: bytes | list[str]) -> dict:
    lines = out.decode().strip().splitlines() if isinstance(out, bytes) else out
    return json.loads(lines[-1])


async def test_phone_and_computer_agents_in_two_processes_fill_the_form_over_redis(
    forms_cfg, forms_runtime, demo_site, redis_url, tmp_path
):
    url = demo_site.urls[FORM]
    spec, profile = spec_for_url(url), load_profile(PROFILE)
    person = SimulatedPerson(spec.person(profile), forms_runtime.llm("person"), lambda *a, **k: None)
    terminal: list[str] = []

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
    async with two_processes(forms_cfg, forms_runtime, redis_url, url, tmp_path) as split:
        person_task = asyncio.create_task(at_the_terminal(split.phone))
        computer_out, _ = await split.computer.communicate()
        await person_task
        await split.phone.wait()
    assert (split.computer.returncode, split.phone.returncode) == (0, 0), split.why(terminal)
    assert _last_json(computer_out)["status"] == "submitted"
    assert (_last_json(terminal)["agent"], _last_json(terminal)["status"]) == ("phone", "submitted")
    [sub] = demo_site.submissions_of(FORM)
    assert all(r.ok for r in evaluate(spec, profile, sub.data)), (sub.data, split.why(terminal))
    kinds = {(e.sender, e.type) for e in await _stream(redis_url, f"form-{split.task_id}")}
    assert {
        ("computer", "need_info"),
        ("phone", "info_collected"),
        ("phone", "submit_authorized"),
        ("computer", "submitted"),
        ("phone", "task_completed"),
    } <= kinds
    assert _marked(split.mark) == []  # no Chromium left, wherever it was re-parented


async def test_stopping_the_phone_process_stops_the_computer_process_and_its_chromium(
    forms_cfg, forms_runtime, demo_site, redis_url, tmp_path
):
    async with two_processes(forms_cfg, forms_runtime, redis_url, demo_site.urls[FORM], tmp_path) as split:
        terminal = []
        async for raw in split.phone.stdout:  # the person hears the first question, then presses Ctrl-C
            terminal.append(raw.decode().rstrip("\n"))
            if terminal[-1].startswith("assistant: ") and asks(terminal[-1]):
                split.phone.send_signal(signal.SIGINT)
                break
        phone_out, _ = await split.phone.communicate()
        computer_out, _ = await split.computer.communicate()
    assert (split.computer.returncode, split.phone.returncode) == (1, 1), split.why(terminal)
    assert (_last_json(phone_out)["status"], _last_json(computer_out)["status"]) == ("terminated", "terminated")
    assert demo_site.submissions_of(FORM) == []
    envs = await _stream(redis_url, f"form-{split.task_id}")
    assert [(e.sender, e.payload.reason) for e in envs if e.type == "terminate"] == [("session", "cancelled")]
    assert _marked(split.mark) == []
