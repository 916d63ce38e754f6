"""Both agents with a simulated person who joins the appliance's form mode over WebRTC (an
aiortc client: Piper → Opus → the phone agent's VAD and Whisper; the bot's audio → Whisper
for the person), the embedded LLM and real Chromium: fixed launch on the demo forms, and the
autonomous launch."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import wave
from pathlib import Path

import pytest
from helpers import chromium_processes

from appliance.demo.profile import load_profile
from appliance.simulate.form_run import simulate_form
from appliance.simulate.stages import STAGES

pytestmark = pytest.mark.e2e

REPORT_KEYS = {
    "fields",
    "field_accuracy",
    "accepted",
    "submitted",
    "authorised_before_submit",
    "fill_lag_ms",
    "phone_waits_on_browser",
    "seconds_per_field",
    "exchanges_per_field",
    "spelled_fields",
    "actions",
    "explained_failures",
    "asks",
    "asks_by_field",
    "asks_per_field",
    "wrong_submission",
    "false_submitted",
    "failure",
    "duration_s",
    "messages",
    "stages_s",
}


def _types(report: dict) -> list[tuple[str, dict]]:
    return [(m["type"], m["payload"]) for m in report["messages"]]


def _conversation(out) -> str:
    """The call as the person heard and said it (for a failing assertion's message)."""
    lines = []
    for line in (out.person_folder / "events.jsonl").read_text().splitlines():
        e = json.loads(line)
        if e["event"] in ("person_heard", "person_said", "person_typed"):
            lines.append(f"{e['event'][7:]:>6}: {e.get('text') or e.get('written') or e.get('value')}")
    return "\n".join(lines)


async def test_flight_form_filled_and_authorised_with_a_wrong_format_reasked(forms_cfg, forms_runtime, demo_site):
    out = await simulate_form(forms_cfg, forms_runtime, demo_site.urls["flight"], load_profile("david"), site=demo_site)
    r = out.report
    assert set(r) == REPORT_KEYS
    assert r["submitted"] and r["authorised_before_submit"], _conversation(out)
    assert r["field_accuracy"] == 1.0, ([f for f in r["fields"] if not f["ok"]], _conversation(out))
    assert r["phone_waits_on_browser"] == 0
    msgs = _types(r)
    # the person's first phone answer had no country code: the page refused it, the agent asked again
    # (what the ASR heard in the refused answer varies; the refusal and the confirmed fix do not)
    bad = [
        i
        for i, (t, p) in enumerate(msgs)
        if t == "format_invalid" and p["field"] == "phone" and not p["got"].startswith("+44")
    ]
    fixed = [
        i for i, (t, p) in enumerate(msgs) if t == "info_collected" and p["value"] == "+447700900123" and p["confirmed"]
    ]
    assert bad and fixed and bad[0] < fixed[-1]
    # both sides really spoke over the call: the appliance recorded the person's audio and
    # transcribed it with its own ASR; the person recorded and transcribed the bot's audio
    assert out.audio_s["bot"] > 0 and out.audio_s["person"] > 0
    assert all(r["stages_s"][s]["median"] is not None for s in STAGES)  # timed at the person's end of the call
    with wave.open(str(out.session.folder / "input.wav")) as w:
        assert w.getnframes() / w.getframerate() > 10
    server_events = [json.loads(x) for x in (out.session.folder / "events.jsonl").read_text().splitlines()]
    person_events = [json.loads(x) for x in (out.person_folder / "events.jsonl").read_text().splitlines()]
    said = {e["written"] for e in person_events if e["event"] == "person_said"}
    heard = [e["text"] for e in server_events if e["event"] == "heard"]
    assert "Yes, please submit it." in said and any("submit" in h.casefold() for h in heard)
    assert len(list(out.person_folder.glob("heard-*.wav"))) == sum(e["event"] == "person_asr" for e in person_events)
    assert chromium_processes() == []


def test_registration_by_cli_server_errors_and_revealed_field(forms_cfg, tmp_path):
    """``appliance simulate form --person text --json`` on the multi-step form: one JSON object
    (the report keys). The typist (no audio) is enough here: what this proves is the CLI, the
    server's refusal and the revealed field; the audio interview is the flight test's."""
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"recording:\n  dir: {tmp_path / 'rec'}\n")
    cli = Path(sys.executable).with_name("appliance")
    proc = subprocess.run(
        [
            *(str(cli), "simulate", "form", "--config", str(cfg), "--url", "demo:register", "--profile", "david"),
            *("--person", "text", "--json"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1
    r = json.loads(lines[0])
    assert set(r) == REPORT_KEYS
    assert r["submitted"] and r["authorised_before_submit"] and r["field_accuracy"] == 1.0, (
        r["fields"],
        proc.stderr[-4000:],
    )  # the conversation, as the CLI printed it
    msgs = _types(r)
    taken = [i for i, (t, p) in enumerate(msgs) if t == "fill_error" and "already taken" in p["reason"]]
    assert taken, "the server refused the first username"
    assert any(t == "info_collected" and p["value"] == "davidmiller84" and p["confirmed"] for t, p in msgs[taken[0] :])
    asked = [f["label"] for t, p in msgs if t == "need_info" for f in p["fields"]]
    country = next(i for i, (t, p) in enumerate(msgs) if t == "info_collected" and p["field"] == "country")
    postcode = next(
        i for i, (t, p) in enumerate(msgs) if t == "need_info" and any(f["label"] == "Postcode" for f in p["fields"])
    )
    assert "Postcode" in asked and postcode > country  # the field appeared only once a country was chosen
    assert r["fill_lag_ms"]["max"] is not None


async def test_autonomous_launch_is_the_llms_call(forms_cfg, forms_runtime, demo_site):
    stop = asyncio.Event()
    run = asyncio.create_task(
        simulate_form(
            forms_cfg,
            forms_runtime,
            demo_site.urls["flight"],
            load_profile("emma"),
            autonomous=True,
            site=demo_site,
            stop=stop,
        )
    )
    # stop once the phone agent has asked its first question: the launch is what is tested here
    for _ in range(3000):  # up to 5 min on a loaded machine; no speed is asserted here
        await asyncio.sleep(0.1)
        folder = sorted(Path(forms_cfg.recording.dir).expanduser().glob("*-form-emma"))
        events = folder[-1] / "events.jsonl" if folder else None
        if events and events.exists() and '"event": "person_heard"' in events.read_text():
            break
    stop.set()
    out = await asyncio.wait_for(run, 120)
    session = out.session
    assert session.phone_started_by == "initiate_phone_call_agent"
    records = [json.loads(x) for x in (session.folder / "events.jsonl").read_text().splitlines()]
    launch = [e for e in records if e["event"] == "decision" and e.get("what") == "launch"]
    assert launch and launch[0]["tool"] == "initiate_phone_call_agent"  # the model chose the tool
    envs = [e for e in session.envelopes if e.type == "initiate_phone_call_agent"]
    assert len(envs) == 1 and len(envs[0].payload.required_info) == 12
    first_need = [e for e in session.envelopes if e.type == "need_info"]
    assert not first_need or first_need[0].ts > envs[0].ts  # nothing asked before the call was placed
    assert not out.report["submitted"] and demo_site.submissions == []
    assert session.computer.status == "terminated" and chromium_processes() == []
