"""``appliance bench voice``: voice-to-voice, barge-in and false barge-in at headless Chromium.

Both pipelines run in the same run, on the same machine, with the same models, behind
the same page and WebRTC transport; only the pipeline differs:

- **ours**: :func:`appliance.voice.pipeline.build_task` (streaming Whisper with an early
  final, Smart Turn + words, speculative LLM start, clause-level TTS, page-side duck (the bot
  lowered at the onset) with server confirmation).
- **stock**: pipecat 1.14 defaults: ``WhisperSTTService`` with the same tiny.en,
  ``SileroVADAnalyzer()`` with default ``VADParams``, default user-turn strategies
  (smart-turn v3), ``OpenAILLMService`` against the same llama-server and model,
  ``PiperTTSService`` with the same voice and default sentence aggregation. Its server
  never answers a duck, so the page never ducks for it.

Measured at the page, on the bot's audio after the page's own output gain: a 20 ms window
is audible when its RMS > 0.01 (−40 dBFS).

- ``v2v`` (file microphone, :data:`QUESTIONS` and the ARCTIC clips): first audible bot
  window of the reply − last audible mic window of the utterance. A turn with no reply
  before the next utterance counts at the fallback (the gap) and is reported in
  ``unanswered``.
- ``barge_in`` (WebAudio microphone, :data:`BARGE_IN_TRIALS` trials): a story question
  (:data:`STORIES`), then an interruption from :data:`INTERRUPTIONS` started by the page once it has heard the
  story's reply (bot audio after the question) for ≥ 200 ms plus a varied delay; ``barge_in_ms`` = last audible bot window (before
  a bot silence ≥ 500 ms) − first audible mic window of the interruption. A trial counts
  when the bot was audible in the 300 ms before that onset; fewer than
  :data:`MIN_VALID_TRIALS` valid trials for a pipeline is an error (exit 1, the reason in
  ``error``). ``yield_ms``: when the page lowered the bot (its duck, still audible) − that
  onset; the bot stops (``barge_in_ms``) once the server has heard a word that interrupts.
  ``barge_in_steps_ms``: the server's steps of that decision (:data:`BARGE_IN_STEPS`).
- ``false_barge_in_rate`` (WebAudio microphone, :data:`FALSE_BARGE_INS`: backchannels and
  noises, each played 500 ms into the reply to a new story question): the share of clips after which the bot stayed
  inaudible ≥ 300 ms (a silence starting within the clip or 600 ms after it) or its reply
  was cancelled; ``ducks_released``: ducks the server released.
- ``sessions_N`` (``--sessions N``, default 2): N pages talking at once to our pipeline on
  one server (its models and LLM server shared), each the v2v utterances:
  ``{"v2v_ms": {"p50", "p95"}, "unanswered"}`` over all their turns.
- ``interim_on_page``: v2v turns whose words the page's live line showed before their final
  transcript ÷ turns (``turn.quiet_interim_every_ms``).
- ``speculation_kept_rate``: replies started on the early final and kept ÷ replies started
  early (ours). ``acks``: "never silent" acknowledgements said (off in the benchmark).
- ``llm_ttft_alone_ms``: the questions sent straight to the answering LLM server before the
  pipelines run (:func:`ttft_alone`); ``llm_ttft_pipeline_ms`` (ours): pipecat's own TTFT of
  the pipeline's requests (:func:`ttft_in_pipeline`).
- ``stages_ms``: per stage, the server's median ms from the end of speech (early final, VAD
  stop, final transcript, LLM first token, TTS first audio, first audio sent) and, from the
  page, ``heard`` = v2v p50 (``transport`` = heard − first audio sent), split into
  ``uplink`` and ``downlink`` on the wall clock both ends share (:func:`link_ms`).

The page client needs a loopback-only network namespace: run ``appliance bench voice``
under ``unshare -n sh -c 'ip link set lo up; …'`` (``scripts/bench_voice.sh`` does).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from appliance import models
from appliance.bench.replay import asr_rtf
from appliance.config import Config
from appliance.simulate.page_client import open_page, talk
from appliance.voice.events import STAGES
from appliance.voice.piper_synth import PiperSynth, VoiceStyle, resample
from appliance.voice.server import VoiceServer

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
    ("What is the tallest mountain in the world?", "piper"),
    ("How far is the moon from the earth?", "espeak"),
    ("Name a good vegetable for a small garden.", "piper"),
    ("Why is the sky blue?", "espeak"),
    ("What should I pack for a weekend hike?", "piper"),
    ("How long should I boil an egg?", "espeak"),
    ("What is a healthy breakfast?", "piper"),
    ("Who wrote Romeo and Juliet?", "espeak"),
    ("How do plants make their food?", "piper"),
    ("What is the best way to learn a new language?", "espeak"),
]
#: The story questions, a new one for each barge-in trial and each false barge-in clip: asked again
#: in the same call, the small LLM repeats its first answer (as trimmed by the interruption), one sentence.
STORIES = [
    f"Tell me a long story about {topic}."
    for topic in (
        "a brave knight and a green dragon",
        "a lost robot looking for its home",
        "a fisherman and a talking whale",
        "a girl who could speak to birds",
        "a clockmaker in an old town",
        "two friends sailing around the world",
        "a dog who wanted to fly",
        "a baker and a magic oven",
        "a lighthouse keeper on a stormy night",
        "a young astronaut on the moon",
        "a king who lost his crown",
        "a fox and a clever crow",
        "a painter who lost her colours",
        "a snowman who wanted to see summer",
        "a train that ran on moonlight",
        "a pirate who was afraid of water",
        "a tiny mouse in a big library",
        "an owl who could not sleep",
        "a gardener and a giant pumpkin",
        "a boy who found an old map",
        "a cat who ran a little cafe",
        "a musician and a singing river",
    )
]
INTERRUPTIONS = ["Stop. What is two plus two?", "Wait, stop. What is the capital of Spain?", "Stop, wait a moment."]
#: Backchannels and noises played while the bot speaks: none may stop it.
FALSE_BARGE_INS = ["mm-hm", "yeah", "right", "cough", "knock", "tone"]
FALSE_BARGE_IN_ROUNDS = 2  # each clip played this many times: 12 clips, so that a rate means something (issue 28)
BARGE_IN_TRIALS = 10
MIN_VALID_TRIALS = 8
#: the longest wait for the story's reply before a clip: under the server's idle timeout (15 s), since the WebAudio
#: microphone sends nothing while no clip plays (a reply that never came had ended the call, and every trial after it)
REPLY_WAIT_S = 12.0
GAP_S = 8.0  # silence after each v2v utterance: room for the reply; also the unanswered fallback
BARGE_IN_MAX_TOKENS = 160  # the story goes on well past the interruption, even on a loaded machine
PERSON_STYLE = VoiceStyle(length_scale=1.05, pitch_semitones=-3)
BENCH_MAX_TOKENS = 60  # replies end before the next utterance
RATE = 48_000


class BenchError(RuntimeError):
    """The benchmark could not measure what it must (too few valid barge-in trials)."""


def _espeak(text: str, path: Path) -> np.ndarray:
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "160", "-w", str(path), text], check=True)
    audio, rate = sf.read(str(path), dtype="float32")
    return resample(audio, rate, RATE)


def _piper(synth: PiperSynth, text: str) -> np.ndarray:
    return resample(synth.synthesize(text, PERSON_STYLE).astype(np.float32) / 32768, synth.sample_rate_hz, RATE)


def _cough(rng: np.random.Generator) -> np.ndarray:
    """Two bursts of band-limited noise with a fast attack (≈ 0.45 s in all)."""
    out = []
    for length, level in ((0.18, 0.5), (0.14, 0.35)):
        n = int(length * RATE)
        noise = np.convolve(rng.standard_normal(n), np.ones(6) / 6, mode="same")
        env = np.minimum(1, np.arange(n) / (0.01 * RATE)) * np.exp(-np.arange(n) / (0.06 * RATE))
        out += [level * noise * env / np.abs(noise).max(), np.zeros(int(0.06 * RATE))]
    return np.concatenate(out).astype(np.float32)


def _knock() -> np.ndarray:
    """Two knocks on a door: damped 180 Hz thuds with a click, 0.2 s apart."""
    n = int(0.08 * RATE)
    t = np.arange(n) / RATE
    knock = 0.6 * np.sin(2 * np.pi * 180 * t) * np.exp(-t / 0.012)
    knock[:24] += np.linspace(0.5, 0, 24)
    return np.concatenate([knock, np.zeros(int(0.12 * RATE)), knock]).astype(np.float32)


def _tone() -> np.ndarray:
    """A 1 kHz beep, 1.2 s at −14 dBFS."""
    t = np.arange(int(1.2 * RATE)) / RATE
    return (0.2 * np.sin(2 * np.pi * 1000 * t) * np.minimum(1, t / 0.005)).astype(np.float32)


def _utterances(tmp: Path, synth: PiperSynth) -> list[tuple[str, np.ndarray]]:
    """(text, float32 mono 48 kHz) for the ARCTIC clips and the questions."""
    out = []
    for name, text in models.ARCTIC_TEXT.items():
        audio, rate = sf.read(str(models.path("arctic", name)), dtype="float32")
        out.append((text, resample(audio, rate, RATE)))
    for i, (text, engine) in enumerate(QUESTIONS):
        out.append((text, _piper(synth, text) if engine == "piper" else _espeak(text, tmp / f"q{i}.wav")))
    return out


def _clips(tmp: Path, synth: PiperSynth) -> dict[str, np.ndarray]:
    """The WebAudio microphone's clips: the story question, the interruptions (``stop0``…),
    the backchannels and noises."""
    rng = np.random.default_rng(7)
    clips = {f"story{i}": _piper(synth, text) for i, text in enumerate(STORIES)}
    clips.update({f"stop{i}": _piper(synth, text) for i, text in enumerate(INTERRUPTIONS)})
    # Piper cannot hum ("Mm-hm." comes out as words): espeak-ng's is heard as "Mm-mm"
    clips.update(
        {
            "mm-hm": _espeak("Mm-hmm.", tmp / "mm.wav"),
            "yeah": _espeak("Yeah.", tmp / "yeah.wav"),
            "right": _piper(synth, "Right."),
            "cough": _cough(rng),
            "knock": _knock(),
            "tone": _tone(),
        }
    )
    return clips


def _silence(s: float) -> np.ndarray:
    return np.zeros(int(s * RATE), np.float32)


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


def replies(mic: list[float], bot: list[float]) -> list[tuple[float, float | None]]:
    """Per utterance (audible mic windows split at gaps > 1.5 s): (its last audible window,
    the first audible bot window after it and before the next utterance, or None), meter ms."""
    utts = _segments(mic, 1500)
    out = []
    for i, (_start, end) in enumerate(utts):
        nxt = utts[i + 1][0] if i + 1 < len(utts) else float("inf")
        out.append((end, next((t for t in bot if end < t < nxt), None)))
    return out


def v2v_from_run(mic: list[float], bot: list[float], fallback_ms: float) -> tuple[list[float], int]:
    """Per utterance: first audible bot window after its end − its end (ms); replies
    missing before the next utterance (or within ``fallback_ms`` of the last) count as
    ``fallback_ms``. Returns (values, missing)."""
    values, missing = [], 0
    for end, first in replies(mic, bot):
        if first is None or first - end >= fallback_ms:
            missing += 1
            values.append(fallback_ms)
        else:
            values.append(first - end)
    return values, missing


def onset_after(mic: list[float], start: float) -> float | None:
    """The first audible mic window of a clip started at ``start`` (meter ms)."""
    return next((t for t in mic if t >= start - 40), None)


def barge_in_trial(mic: list[float], bot: list[float], start: float) -> float | None:
    """One barge-in trial: the last audible bot window before a bot silence of ≥ 500 ms,
    − the interruption's onset (ms, ≥ 0); None when the bot was not audible in the 300 ms
    before the onset (the trial does not count)."""
    onset = onset_after(mic, start)
    if onset is None or not any(onset - 300 < t <= onset for t in bot):
        return None
    last = onset
    for t in (t for t in bot if t >= onset - 20):
        if t - last >= 500:
            break
        last = t
    return max(0.0, last - onset)


def stopped_by(mic: list[float], bot: list[float], start: float, clip_ms: float) -> bool | None:
    """Whether a backchannel or noise clip started at ``start`` stopped the bot at the page:
    it went inaudible for ≥ 300 ms from a moment within 150 ms of the clip's onset (a duck or
    a pause begins there; the bot's own gaps while the LLM catches up rarely do). A cut reply
    is counted from the server's events (:func:`barge_in_figures`). None when the bot was not
    audible when the clip began (the clip does not count)."""
    onset = onset_after(mic, start) or start
    if not any(onset - 300 < t <= onset + 20 for t in bot):
        return None
    near = [t for t in bot if onset - 300 < t <= onset + 150]
    after = [t for t in bot if t > onset + 150]
    edges = near + after[:1]
    return any(b - a >= 300 for a, b in zip(edges, edges[1:])) or (not after and bool(near))


@dataclass
class Trial:
    clip: str
    start: float | None  # page meter ms
    wall: tuple[float, float]  # epoch seconds: the trial's span
    clip_ms: float


async def _wait_bot_quiet(mic, quiet_s: float = 1.5, max_s: float = 20.0) -> None:
    """Until the page has heard no bot audio for ``quiet_s`` (at most ``max_s``)."""
    waited = 0.0
    while waited < max_s:
        run = await mic.read()
        bot = run.audible("bot")
        now = max([t for t, _ in run.mic[-1:]] + [t for t, _ in run.bot[-1:]] + [0])
        if not bot or now - bot[-1] > quiet_s * 1000:
            return
        await asyncio.sleep(0.5)
        waited += 0.5


async def _over_the_story(
    mic, clips: dict[str, np.ndarray], story: str, clip: str, extra_ms: float
) -> tuple[float | None, float]:
    """Ask ``story`` (it takes the turn from whatever the bot is saying) and start ``clip``
    once the page has heard its reply for 200 ms + ``extra_ms``: only bot audio after the
    question counts, so the clip never lands on an earlier reply's tail. Returns the clip's
    meter start (None: the reply never came) and the wall time (epoch s) just before it."""
    asked = await mic.play(story)
    start = await mic.play_when_bot_heard(
        clip, 200, extra_ms=extra_ms, timeout_s=REPLY_WAIT_S, since=asked + len(clips[story]) / RATE * 1000
    )
    return start, time.time() - 0.05


async def _barge_session(server: VoiceServer, clips: dict[str, np.ndarray]):
    """The barge-in trials, then the false barge-ins, each over the reply to a new story
    question (:data:`STORIES`), on one page with the WebAudio mic. A trial's ``wall`` span
    starts at its clip (the question before it may itself interrupt the reply before).
    Between trials the bot is given at most 8 s to finish: a page whose microphone is
    silent longer sends no audio, and the server's idle timeout (15 s) would end the call."""
    trials: list[Trial] = []
    falses: list[Trial] = []
    async with open_page(server.url) as mic:
        for name, audio in clips.items():
            await mic.add(name, audio)
        await asyncio.sleep(1.0)
        for i in range(BARGE_IN_TRIALS):
            clip = f"stop{i % len(INTERRUPTIONS)}"
            start, t0 = await _over_the_story(mic, clips, f"story{i}", clip, extra_ms=300 + 400 * (i % 3))
            await asyncio.sleep(len(clips[clip]) / RATE + 1.0)
            await _wait_bot_quiet(mic, max_s=8)
            trials.append(Trial(clip, start, (t0, time.time()), len(clips[clip]) / RATE * 1000))
        for j, name in enumerate(FALSE_BARGE_INS * FALSE_BARGE_IN_ROUNDS, start=BARGE_IN_TRIALS):
            start, t0 = await _over_the_story(mic, clips, f"story{j}", name, extra_ms=300)
            await asyncio.sleep(len(clips[name]) / RATE + 2.0)
            falses.append(Trial(name, start, (t0, time.time()), len(clips[name]) / RATE * 1000))
        await _wait_bot_quiet(mic, max_s=8)
        run = await mic.read()
    await asyncio.sleep(1.0)
    events = [e for s in server.sessions.values() for e in s.events.events]
    server.sessions.clear()
    return run, trials, falses, events


def yield_ms(mic: list[float], ducks: list[float], start: float) -> float | None:
    """One barge-in trial: when the page lowered the bot (its ``duck``) − the interruption's
    onset (ms); None when the page did not duck within 1 s of it (stock pipecat: never)."""
    onset = onset_after(mic, start)
    if onset is None:
        return None
    return next((max(0.0, d - onset) for d in ducks if onset - 100 <= d <= onset + 1000), None)


def _in(events: list[dict], name: str, span: tuple[float, float]) -> int:
    return sum(1 for e in events if e["event"] == name and span[0] * 1000 <= e["ts"] <= span[1] * 1000)


#: The server's steps of a barge-in, timed from its duck (the page's message: the onset plus the data
#: channel's few ms): ``vad_start`` (the VAD hears speech), ``first_interim`` (the first interim
#: transcript), ``confirmed`` (a transcript took the turn: the page mutes the bot).
BARGE_IN_STEPS = {
    "vad_start": "user_started_speaking",
    "first_interim": "interim_transcript",
    "confirmed": "barge_in_confirmed",
}


def barge_in_steps(trials: list[Trial], events: list[dict]) -> dict:
    """Median ms from the server's first ``duck`` in each trial's span to each of
    :data:`BARGE_IN_STEPS` (the first such event from 300 ms before it on: the VAD may
    start before the page's message arrives, which gives a negative step); None for a step
    never seen."""
    steps: dict[str, list[float]] = {k: [] for k in BARGE_IN_STEPS}
    for t in trials:
        span = [e for e in events if t.wall[0] * 1000 <= e["ts"] <= t.wall[1] * 1000]
        duck = next((e["t_ms"] for e in span if e["event"] == "duck"), None)
        if duck is None:
            continue
        for key, name in BARGE_IN_STEPS.items():
            at = next((e["t_ms"] for e in span if e["event"] == name and e["t_ms"] >= duck - 300), None)
            if at is not None:
                steps[key].append(at - duck)
    return {k: round(statistics.median(v), 1) if v else None for k, v in steps.items()}


def barge_in_figures(run, trials: list[Trial], falses: list[Trial], events: list[dict]) -> dict:
    """The barge-in and false barge-in figures of one pipeline's session."""
    mic, bot = run.audible("mic"), run.audible("bot")
    barge = [barge_in_trial(mic, bot, t.start) if t.start is not None else None for t in trials]
    valid = [b for b in barge if b is not None]
    yields = [y for t in trials if t.start is not None and (y := yield_ms(mic, run.ducks, t.start)) is not None]
    stopped, released, counted = [], 0, 0
    for t in falses:
        verdict = stopped_by(mic, bot, t.start, t.clip_ms) if t.start is not None else None
        if verdict is None:
            continue
        counted += 1
        cancelled = _in(events, "interruption", t.wall) > 0
        released += _in(events, "duck_released", t.wall)
        if verdict or cancelled:
            stopped.append(t.clip)
    return {
        "barge_in_ms": _pct(valid),
        "yield_ms": _pct(yields),
        "barge_in_all_ms": [None if b is None else round(b, 1) for b in barge],
        "barge_in_trials": {"valid": len(valid), "run": len(trials)},
        "barge_in_steps_ms": barge_in_steps(trials, events),
        "false_barge_in_rate": round(len(stopped) / counted, 3) if counted else None,
        "false_barge_in": {"clips": counted, "stopped": stopped, "ducks_released": released},
    }


async def _measure_turns(server: VoiceServer, wav: Path, listen_s: float):
    run = await talk(server.url, wav, listen_s)
    await asyncio.sleep(1.0)
    events = [e for s in server.sessions.values() for e in s.events.events]
    server.sessions.clear()
    return run, events


def stock_pipeline(runtime, transport, session, cfg: Config | None = None):
    """pipecat 1.14's defaults with our models (see the module docstring); ``cfg``: as
    :func:`~appliance.voice.pipeline.build_task` takes it."""
    from pipecat.audio.vad.silero import SileroVADAnalyzer
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker
    from pipecat.processors.aggregators.llm_context import LLMContext
    from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair, LLMUserAggregatorParams
    from pipecat.services.openai.llm import OpenAILLMService
    from pipecat.services.piper.tts import PiperTTSService
    from pipecat.services.whisper.stt import WhisperSTTService

    from appliance.voice.events import TurnObserver

    cfg = cfg or runtime.cfg
    stt = WhisperSTTService(
        settings=WhisperSTTService.Settings(model=str(models.path("whisper-tiny.en"))),
        device="cpu",
        compute_type="int8",
    )
    session.context = LLMContext()
    agg = LLMContextAggregatorPair(
        session.context, user_params=LLMUserAggregatorParams(vad_analyzer=SileroVADAnalyzer())
    )
    llm = OpenAILLMService(
        api_key=runtime.llm_api_key,
        base_url=runtime.llm_base_url,
        settings=OpenAILLMService.Settings(
            model=runtime.llm_model, max_tokens=cfg.llm.max_tokens, system_instruction=cfg.llm.system_prompt
        ),
    )
    tts = PiperTTSService(
        settings=PiperTTSService.Settings(voice="en_US-joe-medium"), download_dir=models.path("piper-joe")
    )
    return PipelineWorker(
        Pipeline([transport.input(), stt, agg.user(), llm, tts, transport.output(), agg.assistant()]),
        params=PipelineParams(enable_metrics=True),
        observers=[TurnObserver(session.events, 200)],
    )


def speculation_kept_rate(events: list[dict]) -> float | None:
    """Replies started on the early final and kept ÷ replies started early."""
    spec = [e["state"] for e in events if e["event"] == "speculation"]
    started = spec.count("started")
    return round(spec.count("kept") / started, 3) if started else None


def interim_on_page(line: list[str]) -> float | None:
    """Turns whose words the page's live line showed before the final transcript ÷ turns
    (``line``: :attr:`~appliance.simulate.page_client.PageRun.line`); None with no final."""
    finals, shown, interim = 0, 0, False
    for what in line:
        if what == "interim":
            interim = True
        else:
            finals, shown, interim = finals + 1, shown + interim, False
    return round(shown / finals, 3) if finals else None


def stage_medians(events: list[dict]) -> dict:
    """Median ms from the end of speech (server side) to each stage, over the run's turns."""
    turns = [e for e in events if e["event"] == "turn"]
    keys = [f"{s}_ms" for s in STAGES]
    return {k: round(statistics.median([t[k] for t in turns if k in t]), 1) for k in keys if any(k in t for t in turns)}


def transport_ms(v2v: list[float], events: list[dict]) -> float | None:
    """Median, over turns, of what the page heard (v2v) − when the server sent the reply's
    first audio (both from the end of speech): the transport, the page's jitter buffer and
    the two ends' different notion of where speech ended. Paired turn by turn when each
    utterance gave one turn, else the difference of the medians."""
    sent = [t["first_audio_sent_ms"] for t in events if t["event"] == "turn" and "first_audio_sent_ms" in t]
    if not sent or not v2v:
        return None
    if len(sent) == len(v2v):
        return round(statistics.median(v - s for v, s in zip(v2v, sent)), 1)
    return round(statistics.median(v2v) - statistics.median(sent), 1)


def link_ms(run, events: list[dict]) -> dict:
    """``transport_ms`` split, as medians over the answered turns (ms; None without a page clock
    or a paired turn). Both ends read this machine's wall clock, the page through its
    ``applianceClock`` (:attr:`~appliance.simulate.page_client.PageRun.epoch_offset_ms`):

    - ``uplink_ms``: where the server put the end of speech (its VAD stop − ``vad.stop_ms``,
      from the ``turn`` event: ``ts`` − ``first_audio_sent_ms``) − the utterance's last audible
      window at the page: capture, Opus, the receive jitter buffer, resampling and the VAD's
      own lag.
    - ``downlink_ms``: the reply's first audible window at the page − when the server sent its
      first audio (the ``turn`` event's ``ts``): pacing, Opus, the page's jitter buffer and
      WebAudio.

    A turn pairs with the utterance whose end it placed within −300…+1,500 ms of the page's
    and whose first audio went out before the page heard the reply."""
    if run.epoch_offset_ms is None:
        return {"uplink_ms": None, "downlink_ms": None}
    turns = [(t["ts"] - t["first_audio_sent_ms"], t["ts"]) for t in events if t["event"] == "turn"]
    up, down = [], []
    for end, first in replies(run.audible("mic"), run.audible("bot")):
        if first is None:
            continue
        end_e, heard_e = run.epoch_ms(end), run.epoch_ms(first)
        paired = [(s, sent) for s, sent in turns if end_e - 300 <= s <= end_e + 1500 and sent <= heard_e]
        if paired:
            speech_end, sent = paired[-1]
            up.append(speech_end - end_e)
            down.append(heard_e - sent)
    return {
        "uplink_ms": round(statistics.median(up), 1) if up else None,
        "downlink_ms": round(statistics.median(down), 1) if down else None,
    }


async def ttft_alone(endpoint, system: str, questions: list[str], max_tokens: int) -> dict:
    """``llm_ttft_alone_ms``: each question as the pipeline's first turn would send it (the
    system prompt, the question; streamed, ``max_tokens``) to the same server, one at a time,
    with no audio running: ms to the first token, ``{"p50", "p95"}``. ``endpoint``: the
    answering :class:`~appliance.llm.runtime.Endpoint`."""
    import openai

    client = openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=2)
    # one unmeasured request first: the server's first connection was sometimes dropped unanswered here
    await client.chat.completions.create(
        model=endpoint.model,
        messages=[{"role": "system", "content": system}, {"role": "user", "content": "Hi."}],
        max_tokens=1,
    )
    values = []
    for question in questions:
        t0 = time.monotonic()
        stream = await client.chat.completions.create(
            model=endpoint.model,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": question}],
            max_tokens=max_tokens,
            stream=True,
        )
        first = None
        async for chunk in stream:
            if first is None and chunk.choices and chunk.choices[0].delta.content:
                first = (time.monotonic() - t0) * 1000
        if first is not None:
            values.append(first)
    await client.close()
    return _pct(values)


def ttft_in_pipeline(events: list[dict]) -> dict:
    """``llm_ttft_pipeline_ms``: pipecat's own time to the first token of each of the
    pipeline's LLM requests (the ``llm_ttfb`` events; speculative requests too), ``{"p50", "p95"}``."""
    return _pct([e["ttfb_ms"] for e in events if e["event"] == "llm_ttfb"])


async def _measure_together(server: VoiceServer, wav: Path, listen_s: float, sessions: int) -> dict:
    """``sessions`` pages talking at once (each the same utterances, from capture on) to our
    pipeline on one server: ``{"v2v_ms": {"p50", "p95"}, "unanswered"}`` over all their turns."""
    runs = await asyncio.gather(*(talk(server.url, wav, listen_s) for _ in range(sessions)))
    await asyncio.sleep(1.0)
    server.sessions.clear()
    v2v, missing = [], 0
    for run in runs:
        got, lost = v2v_from_run(run.audible("mic"), run.audible("bot"), GAP_S * 1000)
        v2v += got
        missing += lost
    pct = _pct(v2v)
    return {"v2v_ms": {"p50": pct["p50"], "p95": pct["p95"]}, "unanswered": missing}


async def run_bench(cfg: Config, turns: int = 20, stock: bool = True, sessions: int = 2) -> dict:
    """Run the benchmark; returns the JSON object the module docstring describes. When a
    pipeline had fewer than :data:`MIN_VALID_TRIALS` valid barge-in trials, ``error`` says so.
    ``sessions`` ≥ 2: also ``sessions_N`` (:func:`_measure_together`, ours).

    Raises:
        ValueError: ``turns`` < 10 or more than the bench's utterances, or ``sessions`` < 1.
    """
    if not 10 <= turns <= len(QUESTIONS) + len(models.ARCTIC_TEXT):
        raise ValueError(f"--turns must be between 10 and {len(QUESTIONS) + len(models.ARCTIC_TEXT)}")
    if sessions < 1:
        raise ValueError("--sessions must be at least 1")
    cfg = cfg.for_voice_bench(BENCH_MAX_TOKENS)
    barge_cfg = cfg.with_reply_tokens(BARGE_IN_MAX_TOKENS)
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        synth = PiperSynth()
        turn_utts = _utterances(tmp, synth)[:turns]
        clips = _clips(tmp, synth)
        parts = [_silence(2.5)]  # the file microphone plays from capture on, before WebRTC is up
        for _text, audio in turn_utts:
            parts += [audio, _silence(GAP_S)]
        sf.write(tmp / "turns.wav", np.concatenate(parts), RATE)
        turns_s = sum(len(a) for _, a in turn_utts) / RATE + GAP_S * turns + 3

        server = VoiceServer(cfg)
        await server.start()
        await server.ready.wait()
        if server.error:
            raise RuntimeError(server.error)
        result: dict = {"turns": turns}
        try:
            from appliance.voice.markers import spoken_prompt
            from appliance.voice.pipeline import build_task

            answers = server.runtime.llms.slow or server.runtime.llms.main
            result["llm_ttft_alone_ms"] = await ttft_alone(
                answers, spoken_prompt(cfg.llm.system_prompt), [t for t, _ in turn_utts], cfg.llm.max_tokens
            )

            for name, builder in [("ours", build_task)] + ([("stock", stock_pipeline)] if stock else []):
                server.pipeline_builder = builder
                log.info("bench: %s, %d turns", name, turns)
                run, events = await _measure_turns(server, tmp / "turns.wav", turns_s)
                v2v, missing = v2v_from_run(run.audible("mic"), run.audible("bot"), GAP_S * 1000)
                log.info("bench: %s barge-in and false barge-in trials", name)
                server.pipeline_builder = functools.partial(builder, cfg=barge_cfg)
                brun, trials, falses, bevents = await _barge_session(server, clips)
                stages = stage_medians(events)
                v2v_pct = _pct(v2v)
                stages["heard_ms"] = v2v_pct["p50"]
                stages["transport_ms"] = transport_ms(v2v, events)
                stages.update(link_ms(run, events))
                result[name] = {
                    "v2v_ms": v2v_pct,
                    "unanswered": missing,
                    "v2v_all_ms": [round(v, 1) for v in v2v],
                    **barge_in_figures(brun, trials, falses, bevents),
                    "stages_ms": stages,
                    "interim_on_page": interim_on_page(run.line),
                    "acks": sum(1 for e in events + bevents if e["event"] == "ack"),
                }
                if name == "ours":
                    result[name]["asr_rtf"] = asr_rtf(events)
                    result[name]["speculation_kept_rate"] = speculation_kept_rate(events)
                    result[name]["llm_ttft_pipeline_ms"] = ttft_in_pipeline(events)
                    if sessions > 1:
                        log.info("bench: ours, %d sessions at once", sessions)
                        server.pipeline_builder = builder
                        result[f"sessions_{sessions}"] = await _measure_together(
                            server, tmp / "turns.wav", turns_s, sessions
                        )
        finally:
            await server.stop()
            server.runtime.stop()
    if stock and result["stock"]["v2v_ms"]["p50"]:
        result["v2v_p50_ratio"] = round(result["ours"]["v2v_ms"]["p50"] / result["stock"]["v2v_ms"]["p50"], 3)
    short = [
        f"{n}: {result[n]['barge_in_trials']['valid']} of {result[n]['barge_in_trials']['run']}"
        for n in ("ours", "stock")
        if n in result and result[n]["barge_in_trials"]["valid"] < MIN_VALID_TRIALS
    ]
    if short:
        result["error"] = (
            f"fewer than {MIN_VALID_TRIALS} valid barge-in trials (the bot audible when the "
            f"interruption began) — {'; '.join(short)}"
        )
    return result
