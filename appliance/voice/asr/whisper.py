"""ASR engine ``whisper``: faster-whisper's CTranslate2 model, fed only the audio there is.

faster-whisper pads every call to Whisper's 30 s window, so tiny.en costs ~0.5–0.65 s
per call whatever the clip length (measured here, 2 threads, int8). CTranslate2's Whisper encoder also
accepts shorter mel inputs, so :class:`WhisperASR` encodes a shorter window and decodes
greedily: a 4 s clip drops from ~0.52 s to ~0.15–0.19 s here with the same transcript.
The window is the speech plus ``_TAIL_S`` of silence, and at least ``_MIN_WINDOW_S``:
with only a second or two of window tiny.en loops or stops early ("Yes, that's right.
Yes, that right. Yes. That's", "I have David Miller at example." for "… at example dot
com. Is that right?"); from 10 s on it gave the 28 s window's text on every clip tried,
for +40–60 ms on a 1–3 s clip (a loop's extra tokens cost more). Silence is decided as
openai-whisper does: no-speech probability above 0.6 *and* average token log-probability
below −1.0. Measured here: speech ≤0.35 / ≥−0.7 (quiet one-word clips included; a 22 s
prompt with pauses reached 0.62), hum and noise ≥0.79 / ≤−1.9 ("You", "I'm not going to
be able to do it."). The 30 s path is kept for clips longer than 28 s.

A greedy transcript that repeats itself (its text compresses by more than
``_LOOP_COMPRESSION_RATIO``, openai-whisper's rule for a failed decoding) is decoded again
with a beam of ``_LOOP_BEAM``, as openai-whisper and faster-whisper fall back on a failed
segment: ``bench asr``'s "Flight two one five." came back from tiny.en as "Flight 215 Flight
215 Flight 210 Flight 215 …" until the token limit (32 word errors), with the beam "Flight
215. Flight 215."; the set's WER 0.32 → 0.285 (digits 0.34 → 0.20), one clip of 220 decoded
twice. The words of a transcript decoded again carry no probabilities.

A ``context`` (words the person said earlier in the call: their names, as the phone agent
holds them) is decoded as Whisper's previous text (``<|startofprev|>``, as faster-whisper's
``initial_prompt``): names tiny.en does not know come back nearer the truth when the person
says them again inside an e-mail or a user name. Measured here on Piper audio with
"Oluwaseun Oyelaran": "seun dot oyelaran two at example dot org" went from
"soon.oilerin2atexample.org" to "seun.oyelaran2 at example.org"; "hoa dot nguyen" (with
"Hoa Nguyen") from "whole.new in" to "hoa.new in"; "Yes, that's right." and a date came back
the same. While the person spells, the context is the letters and the spelling alphabet
(:func:`appliance.phone_agent.fields.spelling_context`, where the figures are).
"""

from __future__ import annotations

import logging
import re
import threading
import time
import zlib
from pathlib import Path

import numpy as np

from appliance import models
from appliance.config import ASRConfig
from appliance.voice.asr.base import SAMPLE_RATE_HZ, Transcript

log = logging.getLogger(__name__)

#: ``asr.model`` names of the Whisper models in the model cache (:mod:`appliance.models`): tiny.en is
#: fetched by default, the multilingual base with ``python -m appliance.models fetch --with whisper-base``
WHISPER_MODELS = {"tiny.en": "whisper-tiny.en", "base": "whisper-base"}

_TAIL_S = 0.5  # silence appended so the last word is finished (pipecat's trailing_silence_secs)
_MIN_WINDOW_S = 10.0  # shortest encoder window (see above)
_FRAMES_PER_S = 100  # Whisper mel frames (10 ms hop)
_MAX_FRAMES = 3000  # Whisper's 30 s window
#: a greedy transcript that compresses better than this repeats itself (openai-whisper's
#: compression_ratio_threshold) and is decoded again with a beam of _LOOP_BEAM (faster-whisper's default)
_LOOP_COMPRESSION_RATIO = 2.4
_LOOP_BEAM = 5
_CONTEXT_TOKENS = 160  # the most of a context decoded as previous text (Whisper allows 223; the
#                       phone agent's spelling context is 119 tokens, 142 with the digits)


def _echoes(text: str, context: str) -> bool:
    """Whether every word of ``text`` is a word of ``context``: on noise Whisper writes its
    previous text with confidence ("Oluwaseun", log-probability −0.5 to −0.7, where noise
    alone is ≤ −1.9), and only the no-speech probability (0.68–0.88 there) still tells."""
    said = re.findall(r"\w+", text.casefold())
    return bool(said) and set(said) <= set(re.findall(r"\w+", context.casefold()))


def _compression_ratio(text: str) -> float:
    """How well ``text`` compresses (its UTF-8 bytes ÷ zlib's): ~0.7–1.4 for a short
    utterance, above :data:`_LOOP_COMPRESSION_RATIO` when it repeats itself."""
    raw = text.encode()
    return len(raw) / len(zlib.compress(raw)) if raw else 0.0


def _prob(logits: np.ndarray, token: int) -> float:
    """The probability of ``token`` under one decoding step's logits (softmax over the vocabulary)."""
    z = logits.astype(np.float64) - float(logits.max())
    return float(np.exp(z[token]) / np.exp(z).sum())


def _words(pieces: list[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
    """Tokens (their text, their probability) joined into the words of the text (a token that
    starts with a space starts a word): each word with the least probability of its tokens
    that hold a letter or a digit (a closing full stop is often unsure, 0.4–0.6, on a sure
    word). Measured here on Piper answers through tiny.en, the least word of a name: 0.51–0.82
    when heard right ("David Miller", "Johnson", "O'Neill"), 0.03–0.46 when not ("Heath adarsi
    bion" for "Aoife D'Arcy-Byrne", "Nuyin" for "Nguyen"); of codes and e-mails heard right
    0.23–0.61, no better than heard wrong."""
    out: list[list] = []
    for text, p in pieces:
        if not out or text.startswith(" "):
            out.append([text.strip(), None])
        else:
            out[-1][0] += text
        if re.search(r"[^\W_]", text):
            out[-1][1] = p if out[-1][1] is None else min(out[-1][1], p)
    return tuple((w, 1.0 if p is None else round(p, 3)) for w, p in out if w)


class WhisperASR:
    """Whisper (faster-whisper's CTranslate2 model) for short utterances: ``asr.model`` names a
    model of :data:`WHISPER_MODELS` in the model cache, or is a CTranslate2 model folder.

    ``transcribe`` is thread-safe (calls are serialised) and blocking: call it from a
    worker thread in async code. Input: float32 mono at 16 kHz.

    Raises:
        ModelError: the model's files are missing or have the wrong size (naming the fetch
            command), or the folder holds no ``model.bin``.
    """

    name = "whisper"

    def __init__(self, cfg: ASRConfig):
        from faster_whisper import WhisperModel

        self.cfg = cfg
        model_dir = models.path(WHISPER_MODELS[cfg.model]) if cfg.model in WHISPER_MODELS else Path(cfg.model)
        if not (Path(model_dir) / "model.bin").is_file():
            raise models.ModelError(f"asr.model: no CTranslate2 model.bin in {model_dir}")
        self._model = WhisperModel(
            str(model_dir), device="cpu", compute_type=cfg.compute_type, cpu_threads=cfg.cpu_threads
        )
        tok = self._model.hf_tokenizer
        self._prompt = [tok.token_to_id("<|startoftranscript|>")]
        if self._model.model.is_multilingual:
            self._prompt += [tok.token_to_id(f"<|{cfg.language}|>"), tok.token_to_id("<|transcribe|>")]
        self._prompt.append(tok.token_to_id("<|notimestamps|>"))
        self._lock = threading.Lock()

    def transcribe(self, audio: np.ndarray, context: str = "") -> Transcript:
        """Transcribe one utterance (float32 mono 16 kHz), after ``context`` (see the module
        docstring; its last :data:`_CONTEXT_TOKENS` tokens). As in openai-whisper's
        ``transcribe()``, a result whose no-speech probability is above
        ``asr.no_speech_prob`` and whose average token log-probability is below
        ``asr.logprob_threshold`` is silence: ``''``; so is one above that probability
        whose words are all the context's (noise written as the previous text)."""
        t0 = time.monotonic()
        audio_s = len(audio) / SAMPLE_RATE_HZ
        if len(audio) < SAMPLE_RATE_HZ // 10:
            return Transcript("", 1.0, audio_s, 0.0)
        context = context.strip()
        words: tuple[tuple[str, float], ...] = ()
        with self._lock:
            if audio_s > 28:
                text, nsp, logprob = self._transcribe_long(audio, context)
            else:
                text, nsp, logprob, words = self._transcribe_short(audio, context)
        if nsp > self.cfg.no_speech_prob and (logprob < self.cfg.logprob_threshold or _echoes(text, context)):
            text, words = "", ()
        return Transcript(text, nsp, audio_s, time.monotonic() - t0, words)

    def _transcribe_short(
        self, audio: np.ndarray, context: str
    ) -> tuple[str, float, float, tuple[tuple[str, float], ...]]:
        from faster_whisper.transcribe import get_ctranslate2_storage

        pad = max(int(_TAIL_S * SAMPLE_RATE_HZ), int(_MIN_WINDOW_S * SAMPLE_RATE_HZ) - len(audio))
        padded = np.concatenate([audio, np.zeros(pad, np.float32)])
        feats = self._model.feature_extractor(padded)
        n = min(_MAX_FRAMES, int(np.ceil(feats.shape[1] / _FRAMES_PER_S)) * _FRAMES_PER_S)
        mel = np.zeros((feats.shape[0], n), dtype=np.float32)
        mel[:, : min(n, feats.shape[1])] = feats[:, :n]
        enc = self._model.model.encode(get_ctranslate2_storage(mel[None]), to_cpu=False)
        tok = self._model.hf_tokenizer
        prev = tok.encode(" " + context, add_special_tokens=False).ids[-_CONTEXT_TOKENS:] if context else []
        prompt = ([tok.token_to_id("<|startofprev|>"), *prev] if prev else []) + self._prompt
        max_len = min(224, 20 + int(len(audio) / SAMPLE_RATE_HZ * 8))  # ~4 tokens/s speech, generous
        heard = self._decode(enc, prompt, prev, len(prev) + max_len, self.cfg.beam_size)
        if self.cfg.beam_size < _LOOP_BEAM and _compression_ratio(heard[0]) > _LOOP_COMPRESSION_RATIO:
            heard = self._decode(enc, prompt, prev, len(prev) + max_len, _LOOP_BEAM)
        return heard

    def _decode(
        self, enc, prompt: list[int], prev: list[int], max_length: int, beam_size: int
    ) -> tuple[str, float, float, tuple[tuple[str, float], ...]]:
        """One decoding of the encoded audio ``enc`` after ``prompt`` (``prev`` is its previous
        text): the text, the no-speech probability, the average token log-probability and the
        words with their probabilities (none with a beam)."""
        tok = self._model.hf_tokenizer
        greedy = beam_size == 1  # CTranslate2 gives the steps' logits on the greedy path only
        res = self._model.model.generate(
            enc,
            [prompt],
            beam_size=beam_size,
            max_length=max_length,
            return_no_speech_prob=True,
            return_scores=True,
            return_logits_vocab=greedy,
            suppress_blank=True,
            suppress_tokens=[-1],
            no_repeat_ngram_size=4,
        )[0]
        ids = res.sequences_ids[0]  # the previous text first, when there is one
        probs = [_prob(np.asarray(step), t) for step, t in zip(res.logits[0], ids)] if greedy else [None] * len(ids)
        if ids[: len(prev)] == prev:
            ids, probs = ids[len(prev) :], probs[len(prev) :]
        kept = [(t, p) for t, p in zip(ids, probs) if t < tok.token_to_id("<|endoftext|>")]
        ids = [t for t, _ in kept]
        # the score is the sequence log-probability divided by its length (length_penalty 1)
        return (
            tok.decode(ids).strip(),
            float(res.no_speech_prob),
            float(res.scores[0]),
            _words([(tok.decode([t]), p) for t, p in kept]) if greedy else (),
        )

    def _transcribe_long(self, audio: np.ndarray, context: str) -> tuple[str, float, float]:
        segs, _ = self._model.transcribe(
            audio,
            beam_size=self.cfg.beam_size,
            language=self.cfg.language,
            initial_prompt=context or None,
            without_timestamps=True,
            condition_on_previous_text=False,
            no_speech_threshold=self.cfg.no_speech_prob,
            log_prob_threshold=self.cfg.logprob_threshold,
            vad_filter=False,
        )
        segs = list(segs)  # faster-whisper already dropped the silent ones by the same rule
        nsp = min((s.no_speech_prob for s in segs), default=1.0)
        logprob = max((s.avg_logprob for s in segs), default=-float("inf"))
        return " ".join(s.text.strip() for s in segs).strip(), nsp, logprob
