"""End to end in real headless Debian Chromium: the page, WebRTC on loopback, real models.

The page's microphone is a WAV file (Chromium's fake audio capture). Runs in a
loopback-only network namespace (scripts/test.sh).
"""

from __future__ import annotations

import asyncio
import json
import subprocess

import numpy as np
import pytest
import soundfile as sf
from helpers import loopback_only_network, make_wav, word_recall

from appliance import models
from appliance.simulate.page_client import open_page, talk
from appliance.voice.piper_synth import PiperSynth, VoiceStyle, resample
from appliance.voice.server import VoiceServer

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not loopback_only_network(), reason="WebRTC on 127.0.0.1 needs a loopback-only namespace: run scripts/test.sh"
    ),
]


@pytest.fixture
async def server(voice_cfg, runtime):
    srv = VoiceServer(voice_cfg, runtime=runtime)
    await srv.start()
    yield srv
    await srv.stop()


@pytest.fixture
async def unrecorded(voice_cfg, runtime):
    """A server whose calls are not recorded: nothing is said before the person's first turn."""
    srv = VoiceServer(voice_cfg.without_recording(), runtime=runtime)
    await srv.start()
    yield srv
    await srv.stop()


def _events(srv, name):
    (session,) = srv.sessions.values()
    return [e for e in session.events.events if e["event"] == name]


async def test_page_shows_final_transcript_and_bot_audio_arrives(server, arctic, tmp_path):
    clip = "arctic_a0009.wav"
    wav = make_wav(tmp_path / "mic.wav", [2.0, arctic[clip], 7.0])  # the mic plays from capture, before WebRTC is up

    def answered(r) -> bool:
        mic = r.audible("mic")
        return bool(mic) and sum(t > max(mic) for t in r.audible("bot")) >= 25

    run = await talk(server.url, wav, listen_s=9, screenshot=tmp_path / "page.png", done=answered)

    assert run.user_lines, f"no transcript on the page; status: {run.status}"
    # a loaded machine may cut the sentence at its comma into two turns: compare all of it
    assert word_recall(models.ARCTIC_TEXT[clip], " ".join(run.user_lines)) >= 0.8, run.user_lines
    speech_end = max(run.audible("mic"))
    bot_after = [t for t in run.audible("bot") if t > speech_end]
    assert len(bot_after) >= 10, "less than 0.2 s of audible bot audio reached the page"
    assert run.bot_lines and run.bot_lines[0].strip()
    # issue 30: a recorded call is said to be recorded as it connects, before the first answer
    assert "recorded" in run.bot_lines[0].lower(), run.bot_lines
    # issue 28: the live line shows the words while the person speaks, before the final, in an ordinary turn
    assert "final" in run.line and "interim" in run.line[: run.line.index("final")], run.line

    await asyncio.sleep(1.0)  # the pipeline ends and writes the recording
    (session,) = server.sessions.values()
    names = {p.name for p in session.folder.iterdir()}
    assert {"input.wav", "output.wav", "events.jsonl", "config.yaml"} <= names
    logged = [json.loads(line)["event"] for line in (session.folder / "events.jsonl").read_text().splitlines()]
    for event in ("vad_stopped", "final_transcript", "llm_first_token", "tts_first_audio", "first_audio_sent", "turn"):
        assert event in logged, event


async def test_mm_hm_lets_the_bot_go_on_and_stop_wait_a_moment_stops_it(unrecorded, tmp_path):
    """The page's WebAudio microphone (the benchmark's hook) speaks once the page has heard
    the bot for a while, so each clip lands while the bot talks, whatever the machine's load."""
    synth = PiperSynth()
    person = VoiceStyle(length_scale=1.05, pitch_semitones=-3)

    def clip(text: str) -> np.ndarray:
        return resample(synth.synthesize(text, person).astype(np.float32) / 32768, synth.sample_rate_hz, 48_000)

    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(tmp_path / "mm.wav"), "Mm-hmm."], check=True)
    mm_audio, rate = sf.read(tmp_path / "mm.wav", dtype="float32")  # Piper cannot hum
    # a long answer every time: the embedded coder model refused a story 3 times in 36 here (CI: "I'm sorry, but I
    # can't assist with that." ended before mm-hm was heard), and answered this one 36 times in 36
    clips = {
        "story": clip("Tell me about the history of the city of Rome."),
        "mm": resample(mm_audio, rate, 48_000),
        "stop": clip("Stop, wait a moment."),
    }
    async with open_page(unrecorded.url) as mic:
        for name, audio in clips.items():
            await mic.add(name, audio)
        await asyncio.sleep(1.0)
        await mic.play("story")
        mm = await mic.play_when_bot_heard("mm", 200, extra_ms=500, timeout_s=40)
        assert mm is not None, "the bot never answered the story question"
        await asyncio.sleep(3.0)
        stop = await mic.play_when_bot_heard("stop", 200, extra_ms=300, timeout_s=20)
        assert stop is not None, "the bot did not go on after mm-hm"
        await asyncio.sleep(4.0)
        run = await mic.read()

    mic_on, bot = run.audible("mic"), run.audible("bot")
    mm_end = max(t for t in mic_on if mm <= t < mm + 2000)
    # it goes on once the server has heard that it was a backchannel (a wide margin: a loaded ASR)
    assert any(mm_end < t < mm_end + 5000 for t in bot), "the bot stayed silent after mm-hm"
    onset = next(t for t in mic_on if t >= stop - 40)
    # talking: audible within the last second (Piper pauses up to ~660 ms between clauses)
    assert any(onset - 1000 < t <= onset for t in bot), "the bot was not talking when the person interrupted"
    # Bot audio must stop: a silence of at least 0.5 s begins within 2.5 s of the onset. The
    # page only lowers the bot at the onset; it stops once the server has recognised "stop"
    # (a behaviour check with a wide margin: a loaded CI machine took 2.06 s).
    after = [t for t in bot if t > onset]
    cut = next((a for a, b in zip([onset] + after, after + [float("inf")]) if b - a >= 500), None)
    assert cut is not None and cut - onset <= 2500, f"bot audio went on {cut and cut - onset} ms after the onset"

    await asyncio.sleep(0.5)
    # mm-hm interrupts nothing; the stop does (CI: Piper's comma pause made "Stop." and "Wait a moment." two turns,
    # each a barge-in: counted by when, not how many). mm-hm is reported as a backchannel when the ASR gives it
    # words; when it gives none (once in CI, on a loaded machine) the duck is released as noise: either way the
    # duck on it is released and no barge-in comes before the stop
    backchannels, confirmed = _events(unrecorded, "backchannel"), _events(unrecorded, "barge_in_confirmed")
    released = _events(unrecorded, "duck_released")
    assert released, "the page's duck on mm-hm was not released"
    mm_decided = min(e["t_ms"] for e in backchannels + released)
    assert confirmed and all(e["t_ms"] > mm_decided for e in confirmed), "mm-hm must not interrupt; stop must"
    (session,) = unrecorded.sessions.values()
    first = _events(unrecorded, "llm_reply")[0]
    assistant = [m["content"] for m in session.context.get_messages() if m["role"] == "assistant"]
    assert assistant, "no assistant message in the context"
    heard = assistant[0] if isinstance(assistant[0], str) else " ".join(p["text"] for p in assistant[0])
    assert len(heard) < len(first["text"]), (heard, first)
    assert run.interrupted_lines >= 1
