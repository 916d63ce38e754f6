"""Does constraining faster-whisper to letters help on spelled speech?

Piper speaks spelled values (hard names, codes, an e-mail) in four styles — bare letters,
"X as in Word", the spelling alphabet alone, and with "double" — in the bot's voice and
the simulated person's, each synthesised twice (Piper's noise differs per run). Each clip is
transcribed by:

* ``ours``: the appliance's :class:`~appliance.voice.asr.WhisperASR` (short window, greedy);
* ``plain``: faster-whisper's ``transcribe()`` (30 s window, beam 1, no prompt);
* ``prompt``: the same with ``initial_prompt`` listing the letters and the spelling alphabet;
* ``hotwords``: the same with ``hotwords`` set to that list;
* ``ours_prompt``: ours with that list as the previous-text prompt (``<|startofprev|>`` …).

The first five values tuned the decoder's table of misheard spelling-alphabet words; the
last four are held out (``held_out`` in the table).

and decoded with :func:`appliance.phone_agent.spelling.decode`. Printed: per engine and
style, the share of clips decoded exactly and the character error rate of the decoded value
(a clip decoded to nothing counts as every character wrong), and the mean ASR seconds.

    PYTHONPATH=. .venv/bin/python scripts/measure_spelling_asr.py [--json]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from appliance import config
from appliance.phone_agent import spelling, words
from appliance.simulate import speech
from appliance.voice.asr import WhisperASR
from appliance.voice.piper_synth import PiperSynth, VoiceStyle, resample

VALUES = (
    ("Siobhan", "name"),
    ("O'Neill", "name"),
    ("Nguyen", "name"),
    ("Wojcik-Nowak", "name"),
    ("Oyelaran", "name"),
    ("PX4729183", "code"),
    ("jose.m91@example.com", "email"),
    # held out: not looked at while the decoder was written
    ("Oluwaseun", "name"),
    ("Xiaoling", "name"),
    ("C01X00T47", "code"),
    ("hoa-ng88@example.net", "email"),
)
HELD_OUT = {"Oluwaseun", "Xiaoling", "C01X00T47", "hoa-ng88@example.net"}
LETTERS = ", ".join("ABCDEFGHIJKLMNOPQRSTUVWXYZ") + ". " + ", ".join(words.SPELLING.values()) + "."
_SYM = {"'": "apostrophe", "-": "dash", ".": "dot", "_": "underscore"}


def _char(c: str, as_in: bool = False) -> str:
    if c in _SYM:
        return _SYM[c]
    if c.isdigit():
        return words.DIGITS[int(c)]
    return f"{c.upper()} as in {words.SPELLING[c.upper()]}" if as_in else c.upper()


def _letters(value: str) -> str:
    return ", ".join(_char(c) for c in value)


def _as_in(value: str) -> str:
    return ", ".join(_char(c, as_in=True) for c in value)


def _double(value: str) -> str:
    out, i = [], 0
    while i < len(value):
        c = value[i]
        if i + 1 < len(value) and value[i + 1] == c and c.isalnum():
            out.append(f"double {_char(c)}")
            i += 2
            continue
        out.append(_char(c))
        i += 1
    return ", ".join(out)


STYLES = {"letters": _letters, "as_in": _as_in, "icao": speech.say_spelled, "double": _double}


def _spoken(style: str, value: str, kind: str) -> str:
    if style == "icao":
        return speech.say_spelled(value) + "."
    if kind == "email":
        local, _, domain = value.partition("@")
        return f"{STYLES[style](local)}, at {domain.replace('.', ' dot ')}."
    return STYLES[style](value) + "."


def cer(want: str, got: str | None) -> float:
    if not got:
        return 1.0
    a, b = want.casefold(), got.casefold()
    d = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, cb in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (ca != cb))
    return min(1.0, d[len(b)] / len(a))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    cfg = config.load()
    ours = WhisperASR(cfg.asr)
    model = ours._model  # the same CTranslate2 model, through faster-whisper's own transcribe()
    synth = PiperSynth(cfg.tts.voice)
    voices = {
        "bot": VoiceStyle(),
        "person": VoiceStyle(
            length_scale=cfg.forms.person_length_scale, pitch_semitones=cfg.forms.person_pitch_semitones
        ),
    }

    def fw(audio: np.ndarray, **kw) -> str:
        segs, _ = model.transcribe(
            audio,
            beam_size=1,
            language="en",
            without_timestamps=True,
            condition_on_previous_text=False,
            vad_filter=False,
            **kw,
        )
        return " ".join(s.text.strip() for s in segs)

    tok = model.hf_tokenizer
    prev = [tok.token_to_id("<|startofprev|>")] + tok.encode(" " + LETTERS, add_special_tokens=False).ids

    def ours_prompt(audio: np.ndarray) -> str:
        """WhisperASR's short-window greedy decode, with the previous-text prompt (CTranslate2
        counts the prompt in ``max_length``, so it is added to the budget)."""
        from faster_whisper.transcribe import get_ctranslate2_storage

        padded = np.concatenate([audio, np.zeros(max(8000, 160_000 - len(audio)), np.float32)])
        feats = model.feature_extractor(padded)
        n = min(3000, int(np.ceil(feats.shape[1] / 100)) * 100)
        mel = np.zeros((feats.shape[0], n), dtype=np.float32)
        mel[:, : min(n, feats.shape[1])] = feats[:, :n]
        enc = model.model.encode(get_ctranslate2_storage(mel[None]), to_cpu=False)
        budget = len(prev) + min(224, 20 + int(len(audio) / 16_000 * 8))
        res = model.model.generate(
            enc,
            [prev + ours._prompt],
            beam_size=1,
            max_length=budget,
            suppress_blank=True,
            suppress_tokens=[-1],
            no_repeat_ngram_size=4,
        )[0]
        eot = tok.token_to_id("<|endoftext|>")
        return tok.decode([t for t in res.sequences_ids[0] if t < eot]).strip()

    engines = {
        "ours": lambda a: ours.transcribe(a).text,
        "plain": fw,
        "prompt": lambda a: fw(a, initial_prompt=LETTERS),
        "hotwords": lambda a: fw(a, hotwords=LETTERS),
        "ours_prompt": ours_prompt,
    }
    rows = []
    for value, kind in VALUES:
        for style in STYLES:
            text = _spoken(style, value, kind)
            for voice, vs in voices.items():
                for rep in range(args.repeats):
                    audio = synth.synthesize(text, vs)
                    clip = resample(audio.astype(np.float32) / 32768, synth.sample_rate_hz, 16_000)
                    for name, asr in engines.items():
                        t0 = time.monotonic()
                        heard = asr(clip)
                        secs = time.monotonic() - t0
                        got = spelling.decode(heard, kind)
                        rows.append(
                            {
                                "value": value,
                                "style": style,
                                "voice": voice,
                                "rep": rep,
                                "engine": name,
                                "heard": heard,
                                "decoded": got,
                                "ok": got == value,
                                "cer": cer(value, got),
                                "asr_s": round(secs, 3),
                            }
                        )
    table: dict = {}
    for name in engines:
        table[name] = {}
        for style in (*STYLES, "all", "held_out"):
            sel = [
                r
                for r in rows
                if r["engine"] == name
                and (style in (r["style"], "all") or (style == "held_out" and r["value"] in HELD_OUT))
            ]
            table[name][style] = {
                "exact": round(sum(r["ok"] for r in sel) / len(sel), 3),
                "cer": round(sum(r["cer"] for r in sel) / len(sel), 3),
                "asr_s": round(sum(r["asr_s"] for r in sel) / len(sel), 3),
                "n": len(sel),
            }
    if args.json:
        print(json.dumps({"table": table, "rows": rows}))
        return
    cols = (*STYLES, "all", "held_out")
    print(f"{'engine':12} " + " ".join(f"{s:>17}" for s in cols))
    for name, by in table.items():
        print(
            f"{name:12} "
            + " ".join(f"{by[s]['exact']:5.2f} ex {by[s]['cer']:4.2f} cer" for s in cols)
            + f"   {by['all']['asr_s']:.2f} s/clip"
        )
    for r in rows:
        if r["engine"] in ("ours", "prompt") and not r["ok"]:
            print(
                f"  {r['engine']:7} {r['voice']:6} {r['style']:7} {r['value']:22} heard {r['heard']!r} -> "
                f"{r['decoded']!r}"
            )


if __name__ == "__main__":
    main()
