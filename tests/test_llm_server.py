"""The embedded LLM as a child process: its log off the console, slots by name, every
decision grammar accepted by llama.cpp, a restart after the child is killed, and no child
left after stop. The model-missing check needs no model."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from appliance import config
from appliance.computer_agent import decide, mapper
from appliance.computer_agent.page import FieldView
from appliance.llm.decision import choices
from appliance.llm.runtime import LLMRuntime
from appliance.llm.server import EmbeddedLLMServer
from appliance.models import ModelError

SYSTEM = "You answer questions about a web form in JSON. Be brief."


def children() -> list[str]:
    """Command lines of this process's live children that run the embedded LLM."""
    out = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and "appliance.llm.process" in cmd:
            out.append(cmd)
    return out


def test_a_missing_model_is_a_model_error_before_any_child(tmp_path, monkeypatch):
    monkeypatch.setenv("APPLIANCE_MODELS", str(tmp_path / "empty"))
    before = children()  # other tests' runtimes may be running in this process
    server = EmbeddedLLMServer(config.Config().llm, tmp_path / "llm.log")
    with pytest.raises(ModelError, match="model file missing"):
        server.start()
    assert server.pid is None and children() == before


@pytest.mark.e2e
async def test_child_serves_restarts_after_a_kill_and_leaves_nothing(tmp_path, capfd):
    cfg = config.load(
        overrides={"recording": {"dir": str(tmp_path)}, "llm": {"ctx_tokens": 1024, "max_retries": 1}}
    ).for_forms()
    before = children()  # other tests' runtimes may be running in this process
    runtime = await asyncio.to_thread(LLMRuntime(cfg).start)
    try:
        server = runtime.server
        assert runtime.llm("computer").slot == 0 and runtime.llm("phone").slot == 1
        with pytest.raises(ValueError, match="parallel_slots"):
            runtime.llm("P8")
        phone = runtime.llm("phone")
        fields = [
            FieldView(
                ref="r",
                kind="text",
                key=k,
                label=k,
                required=True,
                pattern=None,
                hint="",
                placeholder="",
                options=None,
                value="",
                visible=True,
                enabled=True,
                error="",
            )
            for k in ("First name", "Zip")
        ]
        for model in (decide.Decision, mapper.naming_model(fields), choices("Pick", option=("yes", "no"))):
            await phone.decide(SYSTEM, "Give a short answer.", model, max_tokens=120)  # llama.cpp parsed it
        await phone.warm(SYSTEM)
        pid = server.pid
        # the voice stages go first on a busy machine: the child runs llm.nice (10) below this process
        assert cfg.llm.nice == 10
        assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, os.getpriority(os.PRIO_PROCESS, 0) + cfg.llm.nice)
        out = capfd.readouterr()
        assert "slot" not in out.err and "llama" not in out.err and "srv" not in out.out, out  # no native log lines
        assert "print_timing" in runtime.log_path.read_text()

        os.kill(pid, signal.SIGKILL)
        t0 = time.monotonic()
        while server.restarts == 0 and time.monotonic() - t0 < 120:
            await asyncio.sleep(0.2)
        assert server.restarts == 1 and server.pid not in (None, pid)
        # one retry: a keep-alive connection pooled before the kill fails once, the next one is new
        reply = await phone.complete(
            SYSTEM, "Say yes.", grammar='root ::= "{\\"a\\":" ("1" | "2") "}"', schema={}, max_tokens=8
        )
        assert reply.text in ('{"a":1}', '{"a":2}')
        assert reply.cached_tokens and reply.cached_tokens > 5  # the phone slot's prompt was warmed again
    finally:
        runtime.stop()
    assert children() == before
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
