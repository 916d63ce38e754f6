"""The word-accuracy set of ``appliance bench asr``: what is said, by which voices, in what noise.

:data:`UTTERANCES` lists each utterance with its reference text, in five sets: ``names``,
``digits`` (some read in groups with 400 ms pauses between them, as a phone number is),
``emails`` (said with "dot" and "at"), ``one_word`` ("Yes.", "No.", "Stop." …) and
``commands``. :data:`VOICES` are three styles of the one Piper speaker (tempo, pitch,
variation) and two espeak-ng voices. Each utterance is rendered by one Piper style and
one espeak-ng voice in turn; one-word answers, the easiest to lose, by every voice. Every
rendering is heard ``clean`` and ``noisy`` (pink noise, babble made of other utterances
played backwards, or sox's brown noise, in turn, at :data:`SNR_DB` under the speech).

A clip is framed as the voice pipeline hands speech to the ASR: :data:`LEAD_S` before the
first word (pipecat's VAD start comes ~0.2 s into the speech and the STT keeps 1 s before
it) and :data:`TAIL_S` after the last (the VAD's stop), the noise running through both.

:func:`build` renders the clips into a folder (16 kHz mono WAVs and ``clips.json``) and
reuses them while the set's definition is unchanged; nothing of it is committed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from appliance.voice.asr.base import SAMPLE_RATE_HZ
from appliance.voice.piper_synth import VoiceStyle, resample

log = logging.getLogger(__name__)

PAUSE_S = 0.4  # between the groups of an utterance read in parts
LEAD_S = 0.8
TAIL_S = 0.3
SNR_DB = 12.0
NOISES = ("pink", "babble", "brown")


@dataclass(frozen=True)
class Utterance:
    """One thing said: ``parts`` are spoken one after the other with :data:`PAUSE_S` of
    silence between them; the reference ``text`` is what a perfect transcript reads."""

    set: str
    parts: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.parts)


def _u(set_: str, *parts: str) -> Utterance:
    return Utterance(set_, parts)


UTTERANCES: tuple[Utterance, ...] = (
    _u("names", "My name is David Miller."),
    _u("names", "I'm Maria Garcia."),
    _u("names", "This is Aisha Khan calling."),
    _u("names", "Please call Oliver Bennett."),
    _u("names", "Her name is Sophie Laurent."),
    _u("names", "It's for Daniel O'Connor."),
    _u("names", "Ask for Priya Sharma."),
    _u("names", "The booking is under Thomas Weber."),
    _u("digits", "My number is five five five,", "two three four,", "nine nine eight one."),
    _u("digits", "The code is four seven,", "one nine."),
    _u("digits", "Flight two one five."),
    _u("digits", "Seat number fourteen."),
    _u("digits", "Zero seven seven,", "one two three,", "four five six."),
    _u("digits", "I need three tickets."),
    _u("digits", "My PIN is eight two six zero."),
    _u("digits", "Room four hundred and twelve."),
    _u("emails", "My e-mail is john dot smith at example dot com."),
    _u("emails", "It's maria at gmail dot com."),
    _u("emails", "Send it to david dot miller at example dot org."),
    _u("emails", "The address is info at acme dot co dot uk."),
    _u("emails", "It's a dot khan at outlook dot com."),
    _u("emails", "Write to sophie at mail dot com."),
    _u("one_word", "Yes."),
    _u("one_word", "No."),
    _u("one_word", "Stop."),
    _u("one_word", "Okay."),
    _u("one_word", "Wait."),
    _u("one_word", "Sure."),
    _u("one_word", "Correct."),
    _u("one_word", "Thanks."),
    _u("one_word", "Hello."),
    _u("one_word", "Right."),
    _u("commands", "Set a timer for ten minutes."),
    _u("commands", "Turn off the kitchen lights."),
    _u("commands", "Read me my last message."),
    _u("commands", "Cancel that."),
    _u("commands", "Go back to the previous page."),
    _u("commands", "Call my sister."),
    _u("commands", "Pause the music."),
    _u("commands", "What's the weather tomorrow?"),
)


@dataclass(frozen=True)
class Voice:
    """A Piper style (``style``) or an espeak-ng voice (``espeak``: ``-v`` name, ``-s``
    words per minute, ``-p`` pitch 0–99)."""

    name: str
    style: VoiceStyle | None = None
    espeak: tuple[str, int, int] | None = None


PIPER_VOICES = (
    Voice("piper", style=VoiceStyle()),
    Voice("piper-slow-low", style=VoiceStyle(length_scale=1.2, pitch_semitones=-3, noise_scale=0.5, noise_w_scale=0.6)),
    Voice(
        "piper-fast-high", style=VoiceStyle(length_scale=0.85, pitch_semitones=3, noise_scale=0.9, noise_w_scale=1.0)
    ),
)
ESPEAK_VOICES = (Voice("espeak-us", espeak=("en-us", 160, 50)), Voice("espeak-gb-f", espeak=("en-gb-x-rp+f3", 145, 60)))
VOICES = PIPER_VOICES + ESPEAK_VOICES


@dataclass(frozen=True)
class Clip:
    """One rendering: ``file`` (in the set's folder), its utterance's ``set`` and reference
    ``text``, the ``voice`` and the ``condition`` (``clean`` or ``noisy``) and ``noise`` kind."""

    file: str
    set: str
    text: str
    voice: str
    condition: str
    noise: str = ""


def plan() -> list[tuple[Utterance, Voice, str, str]]:
    """Every clip of the set: ``(utterance, voice, condition, noise kind)``, in a fixed order."""
    out = []
    k = 0
    for i, u in enumerate(UTTERANCES):
        voices = VOICES if u.set == "one_word" else (PIPER_VOICES[i % 3], ESPEAK_VOICES[i % 2])
        for v in voices:
            out.append((u, v, "clean", ""))
            out.append((u, v, "noisy", NOISES[k % len(NOISES)]))
            k += 1
    return out


def set_digest() -> str:
    """A short hash of the set's definition: the folder name, so a changed set is rebuilt."""
    spec = repr((UTTERANCES, VOICES, PAUSE_S, LEAD_S, TAIL_S, SNR_DB, NOISES, 1))
    return hashlib.sha256(spec.encode()).hexdigest()[:12]


def default_folder() -> Path:
    return Path(tempfile.gettempdir()) / "appliance-bench-asr" / set_digest()


def load(folder: Path) -> list[Clip] | None:
    """The clips already built in ``folder``, or None."""
    index = folder / "clips.json"
    if not index.is_file():
        return None
    return [Clip(**c) for c in json.loads(index.read_text())]


def read(folder: Path, clip: Clip) -> np.ndarray:
    """A clip's samples: float32 mono 16 kHz."""
    audio, rate = sf.read(str(folder / clip.file), dtype="float32")
    assert rate == SAMPLE_RATE_HZ
    return audio


def build(folder: Path | None = None, progress: Callable[[str], None] = log.info) -> tuple[Path, list[Clip]]:
    """Render every clip of :func:`plan` into ``folder`` (default: a temp folder named by
    :func:`set_digest`), unless it holds them already. Returns the folder and the clips.

    Raises:
        ModelError: the Piper voice is missing.
        subprocess.CalledProcessError: espeak-ng or sox failed (both are Debian packages
            the install script adds).
    """
    folder = folder or default_folder()
    if (clips := load(folder)) is not None:
        return folder, clips
    from appliance.voice.piper_synth import PiperSynth

    folder.mkdir(parents=True, exist_ok=True)
    items = plan()
    progress(f"rendering {len(items)} clips into {folder}")
    synth = PiperSynth()
    rng = np.random.default_rng(13)
    speech: dict[tuple[int, str], np.ndarray] = {}
    for u, v, _cond, _kind in items:
        key = (UTTERANCES.index(u), v.name)
        if key not in speech:
            speech[key] = say(synth, u, v)
    babble_pool = [a for (i, _name), a in speech.items() if UTTERANCES[i].set in ("commands", "names")]
    brown = _brown_noise(folder, 20.0)
    clips = []
    for n, (u, v, cond, noise) in enumerate(items):
        a = speech[(UTTERANCES.index(u), v.name)]
        framed = frame(a)
        if cond == "noisy":
            framed = framed + _noise(noise, len(framed), _active_rms(a) * 10 ** (-SNR_DB / 20), rng, babble_pool, brown)
        peak = float(np.abs(framed).max())
        if peak > 0.99:
            framed = framed * (0.99 / peak)
        clip = Clip(f"{n:03d}-{u.set}-{v.name}-{cond}.wav", u.set, u.text, v.name, cond, noise)
        sf.write(str(folder / clip.file), framed.astype(np.float32), SAMPLE_RATE_HZ, subtype="PCM_16")
        clips.append(clip)
    (folder / "clips.json").write_text(json.dumps([asdict(c) for c in clips], indent=1))
    return folder, clips


def say(synth, utterance: Utterance, voice: Voice) -> np.ndarray:
    """``utterance`` said by ``voice`` (``synth``: a :class:`~appliance.voice.piper_synth.PiperSynth`
    for a Piper style), its parts :data:`PAUSE_S` apart, no silence around it: float32 mono 16 kHz.

    Raises:
        subprocess.CalledProcessError: espeak-ng failed.
    """
    return _join([_trim(_render(synth, p, voice)) for p in utterance.parts])


def frame(speech: np.ndarray) -> np.ndarray:
    """``speech`` framed as the pipeline hands it to the ASR: :data:`LEAD_S` of silence before,
    :data:`TAIL_S` after."""
    return np.concatenate(
        [np.zeros(int(LEAD_S * SAMPLE_RATE_HZ), np.float32), speech, np.zeros(int(TAIL_S * SAMPLE_RATE_HZ), np.float32)]
    )


def _render(synth, text: str, voice: Voice) -> np.ndarray:
    """``text`` said by ``voice``: float32 mono 16 kHz."""
    if voice.style is not None:
        audio = synth.synthesize(text, voice.style)
        return resample(audio, synth.sample_rate_hz, SAMPLE_RATE_HZ).astype(np.float32) / 32768
    name, wpm, pitch = voice.espeak
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "e.wav"
        subprocess.run(
            ["espeak-ng", "-v", name, "-s", str(wpm), "-p", str(pitch), "-w", str(out), text],
            check=True,
            capture_output=True,
        )
        audio, rate = sf.read(str(out), dtype="float32")
    return resample(audio, rate, SAMPLE_RATE_HZ).astype(np.float32)


def _window_rms(a: np.ndarray) -> np.ndarray:
    w = SAMPLE_RATE_HZ // 50
    n = len(a) // w
    return np.sqrt((a[: n * w].reshape(n, w).astype(np.float64) ** 2).mean(axis=1))


def _trim(a: np.ndarray) -> np.ndarray:
    """``a`` without the silence a synthesiser puts around speech (20 ms windows 40 dB
    under the loudest), so the pauses and frames around it are exactly as planned."""
    rms = _window_rms(a)
    loud = np.flatnonzero(rms > rms.max() * 0.01)
    w = SAMPLE_RATE_HZ // 50
    return a[int(loud[0]) * w : (int(loud[-1]) + 1) * w]


def _join(parts: list[np.ndarray]) -> np.ndarray:
    gap = np.zeros(int(PAUSE_S * SAMPLE_RATE_HZ), np.float32)
    out = [parts[0]]
    for p in parts[1:]:
        out += [gap, p]
    return np.concatenate(out)


def _active_rms(a: np.ndarray) -> float:
    """RMS of the speech itself: the 20 ms windows within 30 dB of the loudest."""
    rms = _window_rms(a)
    active = rms[rms > rms.max() * 10 ** (-30 / 20)]
    return float(np.sqrt((active**2).mean()))


def _brown_noise(folder: Path, seconds: float) -> np.ndarray:
    """``seconds`` of sox's brown noise (``synth brownnoise``, repeatable seed), mean removed."""
    out = folder / "brown.tmp.wav"
    subprocess.run(
        [
            "sox",
            "-R",
            "-n",
            "-r",
            str(SAMPLE_RATE_HZ),
            "-c",
            "1",
            "-b",
            "16",
            str(out),
            "synth",
            f"{seconds:.1f}",
            "brownnoise",
            "vol",
            "0.5",
        ],
        check=True,
        capture_output=True,
    )
    x, _rate = sf.read(str(out), dtype="float64")
    out.unlink()
    return x - x.mean()


def _noise(
    kind: str, n: int, rms: float, rng: np.random.Generator, babble_pool: list[np.ndarray], brown: np.ndarray
) -> np.ndarray:
    """``n`` samples of noise ``kind`` at ``rms``: pink (numpy, 1/f power), babble (three
    utterances of the set played backwards, summed) or brown (a random stretch of ``brown``)."""
    if kind == "pink":
        spectrum = np.fft.rfft(rng.standard_normal(n))
        f = np.arange(len(spectrum), dtype=np.float64)
        f[0] = 1.0
        x = np.fft.irfft(spectrum / np.sqrt(f), n)
    elif kind == "babble":
        x = np.zeros(n)
        for j in rng.choice(len(babble_pool), size=3, replace=False):
            src = np.tile(babble_pool[j][::-1], n // len(babble_pool[j]) + 2)
            start = int(rng.integers(0, len(babble_pool[j])))
            x += src[start : start + n]
    else:
        start = int(rng.integers(0, len(brown) - n))
        x = brown[start : start + n]
    return (x / max(np.sqrt((x**2).mean()), 1e-12) * rms).astype(np.float32)
