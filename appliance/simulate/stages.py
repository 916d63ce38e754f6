"""Where an audio form run's interview time goes, as the simulated person lived it.

The person's event log holds, per bot utterance, when it was audible at the person's end
of the call (``person_asr``: ``bot_start_ts``, ``bot_end_ts``, from
:attr:`~appliance.simulate.webrtc_client.WebRTCClient.last_span`), and per answer when the
person started to speak and for how long (``person_said``: its ``ts``, ``audio_s``), or
that it typed instead (``person_typed``: no speech). Each answer of the interview is one
*exchange*, cut into four consecutive stages (seconds):

* ``person_reaction``: the bot's last audible audio before the answer → the answer's
  first audio (the person's wait for a pause, its ear, its decision and its voice);
* ``person_speech``: the answer's audio;
* ``bot_reaction``: the end of the answer → the bot's first audible audio after it (VAD
  stop, end of turn, ASR, the phone agent, TTS, the call's transport);
* ``bot_speech``: what the bot says from that first audio to its last audible audio before
  the next answer: its utterances (cut at the person's ``TURN_GAP_MS`` of silence), their
  short pauses included;
* ``bot_wait``: the silences between those utterances (a hold for the browser after "One
  moment, please.", a late clause).

The interview is :attr:`~appliance.phone_agent.agent.CallStats.interview_s`'s span: the
answers before the first answer about submitting (``person`` event ``topic: submit``) or
to "Are you still there?" after the first answer (``kind: presence``: the person missed the
summary's question);
the last one's ``bot_speech`` and ``bot_wait`` lead into the summary and are left out, as is
the greeting before the first answer. So the five ``per_field`` figures add up to about the run's
``seconds_per_field`` (less the first question and the hold before the summary).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

STAGES = ("person_reaction", "person_speech", "bot_reaction", "bot_speech", "bot_wait")


def stages(events: Iterable[dict], fields: int) -> dict | None:
    """``{stage: {"median": s, "per_field": s}, "exchanges": n}`` from the person's events
    (dicts as :class:`~appliance.voice.events.EventLog` writes them, in order): each stage's
    median over the exchanges and its total ÷ ``fields`` (the fields filled; ``per_field``
    None when 0). None when the log has no audible bot utterance or no answer (a text run)."""
    bot: list[tuple[float, float]] = []
    answers: list[tuple[float, float]] = []
    submit = False  # the answer being decided is about submitting: the interview is over
    for e in events:
        match e["event"]:
            case "person_asr" if "bot_start_ts" in e:
                bot.append((e["bot_start_ts"] / 1000, e["bot_end_ts"] / 1000))
            case "person":
                # a presence check before any answer is the first question missed, not the summary's
                submit = submit or e.get("topic") == "submit" or (e.get("kind") == "presence" and bool(answers))
            case "person_said" | "person_typed" if not submit:
                start = e["ts"] / 1000
                answers.append((start, start + e.get("audio_s", 0.0)))
    if not bot or not answers:
        return None
    got: dict[str, list[float]] = {s: [] for s in STAGES}
    for i, (start, end) in enumerate(answers):
        before = [b_end for _, b_end in bot if b_end <= start]
        if before:
            got["person_reaction"].append(start - before[-1])
        got["person_speech"].append(end - start)
        after = [b for b in bot if b[0] >= end]
        if not after:
            continue
        got["bot_reaction"].append(after[0][0] - end)
        if i + 1 < len(answers):
            turn = [b for b in after if b[1] <= answers[i + 1][0]]
            if turn:
                spoken = sum(b_end - b_start for b_start, b_end in turn)
                got["bot_speech"].append(spoken)
                got["bot_wait"].append(turn[-1][1] - turn[0][0] - spoken)
    return {
        **{
            s: {
                "median": round(statistics.median(v), 2) if v else None,
                "per_field": round(sum(v) / fields, 2) if fields else None,
            }
            for s, v in got.items()
        },
        "exchanges": len(answers),
    }
