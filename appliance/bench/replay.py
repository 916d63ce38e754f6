"""``appliance replay FOLDER|WAV``: a recorded session's input audio (or any WAV file)
through the current pipeline.

The recording's ``input.wav`` (or the WAV given: any rate and channel count, resampled and
averaged to 16 kHz mono) is played in real time into the pipeline built from the
current configuration (no browser, no network); the bot's audio goes to a paced sink.
Result: per turn, the final transcript, the reply and each stage's latency (ms from the
end of speech), plus the ASR real-time factor.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from appliance.config import Config
from appliance.voice.pipeline import build_task, run_task
from appliance.voice.runtime import VoiceRuntime
from appliance.voice.session import open_session
from appliance.voice.transports import TransportError, WavFileTransport


def turns_from_events(events: list[dict]) -> list[dict]:
    """Group a session's events into turns: ``{"transcript", "reply", "<stage>_ms"...}``."""
    turns: list[dict] = []
    for e in events:
        if e["event"] == "final_transcript":
            turns.append({"transcript": e["text"]})
        elif turns and e["event"] == "turn":
            turns[-1].update({k: v for k, v in e.items() if k.endswith("_ms") and k != "t_ms"})
        elif turns and e["event"] == "llm_reply" and "reply" not in turns[-1]:
            turns[-1]["reply"] = e["text"]
            turns[-1]["interrupted"] = bool(e.get("interrupted"))
    return turns


def asr_rtf(events: list[dict]) -> float | None:
    """ASR compute seconds ÷ audio seconds over the session's final transcripts."""
    asr = [e for e in events if e["event"] == "asr"]
    audio = sum(e["audio_s"] for e in asr)
    return round(sum(e["compute_s"] for e in asr) / audio, 4) if audio else None


async def replay(cfg: Config, folder: str | Path) -> dict:
    """Replay ``folder/input.wav``, or ``folder`` itself when it is a WAV file; returns
    ``{"folder", "turns": [...], "asr_rtf"}``.

    Raises:
        TransportError: the folder has no input.wav.
    """
    folder = Path(folder)
    wav = folder if folder.is_file() else folder / "input.wav"
    if not wav.is_file():
        raise TransportError(f"{folder}: no input.wav (not a session recording folder or a WAV file?)")
    cfg = cfg.without_recording()
    runtime = VoiceRuntime(cfg).start(lambda _stage: None)
    try:
        session = open_session(cfg, "replay")
        transport = WavFileTransport(wav)
        task = build_task(runtime, transport, session)
        runner = asyncio.create_task(run_task(task))
        await transport.finished.wait()
        await task.stop_when_done()
        await runner
    finally:
        runtime.stop()
    return {
        "folder": str(folder),
        "turns": turns_from_events(session.events.events),
        "asr_rtf": asr_rtf(session.events.events),
    }
