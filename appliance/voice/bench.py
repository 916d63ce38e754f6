"""``appliance bench voice``: voice-to-voice and barge-in latency at headless Chromium.

Both pipelines run in the same run, on the same machine, with the same models, behind
the same page and WebRTC transport; only the pipeline differs:

- **ours**: :func:`appliance.voice.pipeline.build_task` (short-window Whisper, interim
  transcripts, end of turn at the final transcript, clause-level TTS).
- **stock**: pipecat 1.14 defaults: ``WhisperSTTService`` with the same
  tiny.en, ``SileroVADAnalyzer()`` with default ``VADParams``, default user-turn strategies
  (smart-turn v3), ``OpenAILLMService`` against the same llama-server and model,
  ``PiperTTSService`` with the same voice and default sentence aggregation.

Measured at the page: a 20 ms window is audible when
its RMS > 0.01 (−40 dBFS). ``v2v`` = first audible bot window of the reply − last audible
mic window of the utterance. ``barge_in`` = last audible bot window − onset of the
interrupting speech. A turn with no reply before the next utterance counts at the
fallback (the gap) and is reported in ``unanswered``. The page client needs a
loopback-only network namespace: run ``appliance bench voice`` under
``unshare -n sh -c 'ip link set lo up; …'`` (``scripts/bench_voice.sh`` does).
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

from appliance import models
from appliance.config import Config
from appliance.voice.page_client import talk
from appliance.voice.replay import asr_rtf
from appliance.voice.server import VoiceServer
from appliance.voice.tts import PiperSynth, VoiceStyle

log = logging.getLogger(__name__)

#: Questions besides the two ARCTIC clips: (text, engine). The person's voices differ
#: from the bot's: Piper with a lower pitch, or espeak-ng.
QUESTIONS = [
    ("What is the capital of France?", "piper"),
    ("How many legs does a spider have?", "espeak"),
    ("Can you recommend a good book for a long flight?", "piper"),
    ("What is the weather usually like in London in spring?", "espeak"),
    ("Tell me a fun fact about the moon.", "piper"),
    ("How do I make a cup of green tea?", "espeak"),
    ("What time zone is Tokyo in?", "piper"),
    ("Give me one tip for sleeping better.", "espeak"),
]
BARGE_IN = ("Tell me a long story about a brave knight and a green dragon.", "Stop. What is two plus two?")
GAP_S = 8.0  # silence after each utterance: room for the reply; also the unanswered fallback
BARGE_IN_AFTER_S = 6.0  # the interruption starts this long after the question ends
BARGE_IN_MAX_TOKENS = 160  # the story goes on well past the interruption, even on a loaded machine
PERSON_STYLE = VoiceStyle(length_scale=1.05, pitch_semitones=-3)
BENCH_MAX_TOKENS = 60  # replies end before the next utterance; a story outlasts the barge-in delay


def _espeak(text: str, path: Path) -> None:
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "160", "-w", str(path), text], check=True)


def _utterances(tmp: Path, synth: PiperSynth) -> list[tuple[str, np.ndarray]]:
    """(text, float32 mono 48 kHz) for the ARCTIC clips and the questions."""
    from appliance.voice.tts import resample

    out = []
    for name, text in models.ARCTIC_TEXT.items():
        audio, rate = sf.read(str(models.path("arctic", name)), dtype="float32")
        out.append((text, resample(audio, rate, 48_000)))
    for i, (text, engine) in enumerate(QUESTIONS + [(t, "piper") for t in BARGE_IN]):
        if engine == "piper":
            audio = synth.synthesize(text, PERSON_STYLE).astype(np.float32) / 32768
            rate = synth.sample_rate_hz
        else:
            _espeak(text, tmp / f"q{i}.wav")
            audio, rate = sf.read(str(tmp / f"q{i}.wav"), dtype="float32")
        out.append((text, resample(audio, rate, 48_000)))
    return out


def _silence(s: float) -> np.ndarray:
    return np.zeros(int(s * 48_000), np.float32)


def _segments(times: list[float], min_gap_ms: float) -> list[tuple[float, float]]:
    """Audible window times → [(first, last)] runs split at gaps > ``min_gap_ms``."""
    segs: list[list[float]] = []
    for t in times:
        if segs and t - segs[-1][1] <= min_gap_ms:
            segs[-1][1] = t
        else:
            segs.append([t, t])
    return [(a, b) for a, b in segs]


def _pct(values: list[float]) -> dict:
    if not values:
        return {"p50": None, "p95": None}
    return {"p50": round(float(np.percentile(values, 50)), 1), "p95": round(float(np.percentile(values, 95)), 1)}


def v2v_from_run(mic: list[float], bot: list[float], fallback_ms: float) -> tuple[list[float], int]:
    """Per utterance: first audible bot window after its end − its end (ms); replies
    missing before the next utterance count as ``fallback_ms``. Returns (values, missing)."""
    utts = _segments(mic, 1500)
    values, missing = [], 0
    for i, (_start, end) in enumerate(utts):
        nxt = utts[i + 1][0] if i + 1 < len(utts) else end + fallback_ms
        first = next((t for t in bot if end < t < nxt), None)
        if first is None:
            missing += 1
            values.append(fallback_ms)
        else:
            values.append(first - end)
    return values, missing


def barge_in_from_run(mic: list[float], bot: list[float]) -> list[float]:
    """For each (question, interruption) pair of utterances where the bot was audible in
    the 300 ms before the interruption's onset: the last audible bot window before a bot
    silence of ≥ 500 ms, − onset. Trials where the bot had already stopped are skipped
    (logged), not counted as 0."""
    utts = _segments(mic, 1500)
    out = []
    for k in range(1, len(utts), 2):
        onset = utts[k][0]
        if not any(onset - 300 < t < onset for t in bot):
            log.warning("barge-in trial %d: the bot was not speaking at the interruption", k // 2)
            continue
        after = [t for t in bot if t >= onset - 20]
        last = onset
        for t in after:
            if t - last >= 500:
                break
            last = t
        out.append(max(0.0, last - onset))
    return out


def stock_pipeline(runtime, transport, session):
    """pipecat 1.14's defaults with our models (see the module docstring)."""
    from pipecat.audio.vad.silero import SileroVADAnalyzer
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker
    from pipecat.processors.aggregators.llm_context import LLMContext
    from pipecat.processors.aggregators.llm_response_universal import (
        LLMContextAggregatorPair,
        LLMUserAggregatorParams,
    )
    from pipecat.services.openai.llm import OpenAILLMService
    from pipecat.services.piper.tts import PiperTTSService
    from pipecat.services.whisper.stt import WhisperSTTService

    from appliance.voice.events import TurnObserver

    cfg = runtime.cfg
    stt = WhisperSTTService(settings=WhisperSTTService.Settings(model=str(models.path("whisper-tiny.en"))),
                            device="cpu", compute_type="int8")
    session.context = LLMContext()
    agg = LLMContextAggregatorPair(session.context,
                                   user_params=LLMUserAggregatorParams(vad_analyzer=SileroVADAnalyzer()))
    llm = OpenAILLMService(api_key=runtime.llm_api_key, base_url=runtime.llm_base_url,
                           settings=OpenAILLMService.Settings(model=runtime.llm_model, max_tokens=cfg.llm.max_tokens,
                                                              system_instruction=cfg.llm.system_prompt))
    tts = PiperTTSService(settings=PiperTTSService.Settings(voice="en_US-joe-medium"),
                          download_dir=models.path("piper-joe"))
    return PipelineWorker(Pipeline([transport.input(), stt, agg.user(), llm, tts, transport.output(), agg.assistant()]),
                          params=PipelineParams(enable_metrics=True),
                          observers=[TurnObserver(session.events, 200)])


async def _measure(server: VoiceServer, wav: Path, listen_s: float):
    run = await talk(server.url, wav, listen_s)
    await asyncio.sleep(1.0)
    events = [e for s in server.sessions.values() for e in s.events.events]
    server.sessions.clear()
    return run, events


async def run_bench(cfg: Config, turns: int = 10, stock: bool = True) -> dict:
    """Run the benchmark; returns its JSON object (ours, stock, the v2v ratio).

    Raises:
        ValueError: ``turns`` < 10 or more than the bench's utterances.
    """
    if not 10 <= turns <= len(QUESTIONS) + len(models.ARCTIC_TEXT):
        raise ValueError(f"--turns must be between 10 and {len(QUESTIONS) + len(models.ARCTIC_TEXT)}")
    cfg = cfg.model_copy(update={
        "server": cfg.server.model_copy(update={"port": 0}),
        "transport": cfg.transport.model_copy(update={"loopback_only": True}),
        "recording": cfg.recording.model_copy(update={"enabled": False}),
        "llm": cfg.llm.model_copy(update={"max_tokens": BENCH_MAX_TOKENS}),
    })
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        synth = PiperSynth()
        utts = _utterances(tmp, synth)
        turn_utts, barge = utts[:turns], utts[-2:]
        parts = [_silence(1.0)]
        for _text, audio in turn_utts:
            parts += [audio, _silence(GAP_S)]
        sf.write(tmp / "turns.wav", np.concatenate(parts), 48_000)
        parts = [_silence(1.0)]
        for _ in range(3):
            parts += [barge[0][1], _silence(BARGE_IN_AFTER_S), barge[1][1], _silence(GAP_S)]
        sf.write(tmp / "barge.wav", np.concatenate(parts), 48_000)
        turns_s = sum(len(a) for _, a in turn_utts) / 48_000 + GAP_S * turns + 3
        barge_s = 3 * (len(barge[0][1]) + len(barge[1][1])) / 48_000 + 3 * (BARGE_IN_AFTER_S + GAP_S) + 3

        server = VoiceServer(cfg)
        await server.start()
        await server.ready.wait()
        if server.error:
            raise RuntimeError(server.error)
        result: dict = {"turns": turns}
        try:
            from appliance.voice.pipeline import build_task

            for name, builder in [("ours", build_task)] + ([("stock", stock_pipeline)] if stock else []):
                server.pipeline_builder = builder
                log.info("bench: %s, %d turns", name, turns)
                run, events = await _measure(server, tmp / "turns.wav", turns_s)
                v2v, missing = v2v_from_run(run.audible("mic"), run.audible("bot"), GAP_S * 1000)
                log.info("bench: %s barge-in trials", name)
                server.runtime.cfg = cfg.model_copy(update={"llm": cfg.llm.model_copy(
                    update={"max_tokens": BARGE_IN_MAX_TOKENS})})
                brun, _ = await _measure(server, tmp / "barge.wav", barge_s)
                server.runtime.cfg = cfg
                barge_ms = barge_in_from_run(brun.audible("mic"), brun.audible("bot"))
                result[name] = {"v2v_ms": _pct(v2v), "barge_in_ms": _pct(barge_ms), "unanswered": missing,
                                "v2v_all_ms": [round(v, 1) for v in v2v],
                                "barge_in_all_ms": [round(v, 1) for v in barge_ms],
                                "stages_ms": _stage_medians(events)}
                if name == "ours":
                    result[name]["asr_rtf"] = asr_rtf(events)
        finally:
            await server.stop()
            server.runtime.stop()
    if stock and result["stock"]["v2v_ms"]["p50"]:
        result["v2v_p50_ratio"] = round(result["ours"]["v2v_ms"]["p50"] / result["stock"]["v2v_ms"]["p50"], 3)
    return result


def _stage_medians(events: list[dict]) -> dict:
    """Median ms from the end of speech (server side) to each stage, over the run's turns."""
    turns = [e for e in events if e["event"] == "turn"]
    keys = ("vad_stopped_ms", "final_transcript_ms", "llm_first_token_ms", "tts_first_audio_ms", "first_audio_sent_ms")
    return {k: round(statistics.median([t[k] for t in turns if k in t]), 1) for k in keys
            if any(k in t for t in turns)}
