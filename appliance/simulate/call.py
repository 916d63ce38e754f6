"""The simulated person on a WebRTC call with the appliance, joined as a browser joins it.

The person is an aiortc client (:class:`~appliance.simulate.webrtc_client.WebRTCClient`) of
the appliance's voice server. It hears the bot only through Whisper transcripts of the
audio that comes back on the call, and answers only with Piper audio in its own voice (a
:class:`~appliance.voice.piper_synth.VoiceStyle` that differs from the bot's), sent in real time
over the Opus track into the phone agent's real pipeline: Silero VAD, streaming Whisper,
end of turn, barge-in. No text crosses the line unspoken.

Turn-taking, by ear: the person listens until the bot pauses (the client cuts the bot's
audio into utterances at :data:`TURN_GAP_MS` of silence) and answers when what it heard since it
last spoke asks something — a question, a read-back, a request to submit. After a
statement ("One moment.") it stays silent and keeps listening;
after "I have …" without its question it waits :data:`READ_BACK_WAIT_S` for the rest (the
bot's next clause may be late) before it answers. As people do, it gets its answer ready
while the bot may still go on: at each pause of :data:`PAUSE_MS` it hears the utterance so far
(what an earlier pause heard is not heard again) and, when that ends in a question, decides and
voices its answer on a rehearsal twin of itself; if the bot stays silent for
:data:`ANSWER_GAP_MS`, it takes the floor with that answer (issue 27: ≤ 600 ms from the bot's
last audio); if the bot goes on, the rehearsal leaves no trace.

The person also has the appliance's page in front of them (:class:`Screen`): the events it
shows (``type_requested`` highlights a field's box) and the box to type a value in.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import numpy as np

from appliance.simulate.hearing import clean, sentences
from appliance.simulate.person import PERMISSION, SimulatedPerson, mouth
from appliance.simulate.speech import ICAO
from appliance.simulate.webrtc_client import BotAudio, WebRTCClient
from appliance.voice.piper_synth import VoiceStyle
from appliance.voice.wav import write_wav

log = logging.getLogger(__name__)

ASR_RATE_HZ = 16_000  # what WebRTCClient.next_bot_audio gives

_GREETING = re.compile(r"^\W*(?:(?:hello|hi|hey|good (?:morning|afternoon|evening))\W*)+$", re.I)
#: a question even where the ASR left out its question mark: a wh-word opening a clause ("Thanks, what
#: is …", not "Here's what I'll submit"), an opening auxiliary, a choice ("Country: United Kingdom, Ireland
#: or Portugal"), a read-back ("I have Manchester, …"), "what is your" anywhere ("… shows where what is
#: your full name": a long greeting and the first question heard as one piece, without punctuation)
_ASKING = re.compile(
    r"(?:^|[,;:]|\b(?:and|or|so)\b)\W*(what|when|which|where|who|how)\b|\bor\b|"
    r"^\W*(do|does|did|is|are|shall|should|may|can|could|would|will|i have)\b|"
    r"\bis that (right|correct)\b|\b(what|which) (is|are) your\b",
    re.I,
)


#: the bot's silence (ms) after which the person takes what it heard as said (the client's ``gap_ms``): longer
#: than the pauses inside one of the bot's lines (Piper's comma and sentence breaks, clause by clause: at most
#: 340 ms in the bench's recordings, heard-*.wav), about what a listener waits at the end of a question (people
#: answer 200–500 ms after it); a pause inside a line that is longer still only ends a piece that asks nothing
#: or only reads back ("I have …"), which the person waits on
TURN_GAP_MS = 500

#: the pause (ms) in the bot's audio at which the person gets its answer ready (the client's ``pause_ms``): it hears
#: the utterance so far and, when that ends in a question, decides and voices its answer while the bot may still
#: go on; longer than the gaps between the words of one clause
PAUSE_MS = 120
#: the silence (ms) after a question at which the person answers when its answer is ready: a little over the
#: longest pause inside one of the bot's lines (340 ms, :data:`TURN_GAP_MS`); issue 27 asks ≤ 600 ms from the
#: bot's last audio to the answer's first (people answer ~200 ms after a question ends)
ANSWER_GAP_MS = 360

#: the least audio heard at a pause that is not heard again with what follows it, and the least that follows (s):
#: as :data:`PIECE_S` says, tiny.en hears a short piece worse than a long one (a digit read-back cut at 5 s lost a
#: group); below this the whole utterance is heard again at its end
KEPT_S = 2.0

#: how long the person waits after "I have …" for the rest of a read-back: the client hands over an utterance
#: only once the bot is silent again, so the rest of a long spelled read-back arrives after all of it was played
READ_BACK_WAIT_S = 10.0


#: a transcript with fewer words per second of audio than this may have been cut short (see
#: ``PersonOnCall._transcribe``): the bot's speech comes through at 2–3.5 words a second, pauses included
#: (CI: "I have David Miller at example." for 4.1 s of "I have david miller, at example dot com. Is that right?")
MIN_WORDS_PER_S = 1.6
#: the longest stretch of bot audio the person's Whisper hears in one pass: a longer utterance is cut at its
#: pauses first (tiny.en drops the tail of a long one: the bench's 18 s summary came back without its
#: closing "Shall I submit the form now?", and the person waited for a question it had been asked, so its last
#: clause is heard again alone too). Not shorter: a digit read-back cut at 5 s lost a group ("I have 077. 0 0 1
#: 2, 3" for "… zero seven seven, zero zero nine, zero zero one, two three"), and the person said no to it
PIECE_S = 8.0


#: what a listener who knows the spelling alphabet expects while the bot spells: the person's Whisper hears a
#: spelled read-back again after it (``context`` of ``WhisperASR.transcribe``). Measured on the bench's
#: recorded read-backs: "…, India, Fox strut, at home, is that right?" → "…, India, Foxtrot, Echo, is that
#: right?", "Romale" → "Romeo", "Fokstrat" → "Foxtrot"; an e-mail said in words came back worse with it
#: ("F a .darcif at example .com" → "F, a dot, Darce, Fifth"), so only a spelling is heard again
ALPHABET_CONTEXT = f"Spelled letter by letter: {', '.join(c.upper() for c in ICAO)}. {', '.join(ICAO.values())}."
_ALPHABET_WORDS = {w.casefold().replace("-", "") for w in ICAO.values()}


def _alphabet_words(text: str) -> int:
    """How many spelling-alphabet words ``text`` holds ("I have it as Delta, Alpha" → 2)."""
    return sum(w in _ALPHABET_WORDS for w in re.findall(r"[a-z]+", text.casefold().replace("x-ray", "xray")))


def _halves(audio: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``audio`` cut in two at the longest pause in its middle 60 % (20 ms windows under the
    audible level), or None when there is none."""
    win = ASR_RATE_HZ // 50
    n = len(audio) // win
    if n < 10:
        return None
    quiet = np.sqrt((audio[: n * win].reshape(n, win) ** 2).mean(axis=1)) < 0.01
    best, run, start = (0, 0), 0, 0
    for i in range(int(n * 0.2), int(n * 0.8)):
        if quiet[i]:
            start, run = (i, 1) if run == 0 else (start, run + 1)
            if run > best[1]:
                best = (start, run)
        else:
            run = 0
    if best[1] == 0:
        return None
    cut = (best[0] + best[1] // 2) * win
    return audio[:cut], audio[cut:]


#: the least audio the person hears again alone at the end of a long utterance (:func:`last_clause`): bench, the
#: summary's closing "Shall I submit the form now?" (1.9 s) followed "… as you confirmed them." after a pause of
#: under 160 ms, and its own "submit the | form now" pause left 1.1 s: "Form now." The tail after the last 100 ms
#: pause that left 4.3 s came back without it too; the 2.1 s one as "cell I submit the form now." (the person
#: had waited 20 s for a question until the bot asked "Are you still there?" and read the summary again)
TAIL_S = 2.0


def pieces(audio: np.ndarray, max_s: float = PIECE_S) -> list[np.ndarray]:
    """``audio`` (16 kHz) cut at pauses (:func:`_halves`, again and again) into pieces of at
    most ``max_s`` seconds, in order; a stretch with no pause to cut at stays whole."""
    if len(audio) <= max_s * ASR_RATE_HZ or (halves := _halves(audio)) is None:
        return [audio]
    return [p for half in halves for p in pieces(half, max_s)]


def last_clause(audio: np.ndarray, min_pause_ms: int = 100, min_s: float = TAIL_S) -> np.ndarray | None:
    """The end of ``audio`` (16 kHz) after its last pause of at least ``min_pause_ms`` (20 ms
    windows under the audible level, trailing silence aside) that leaves at least ``min_s``
    seconds, or None when it has none."""
    win = ASR_RATE_HZ // 50
    n = len(audio) // win
    quiet = np.sqrt((audio[: n * win].reshape(n, win) ** 2).mean(axis=1)) < 0.01
    i = n - 1
    while i > 0 and quiet[i]:
        i -= 1
    run = 0
    while i > 0:
        if quiet[i]:
            run += 1
        else:
            cut = (i + 1 + run // 2) * win
            if run * 20 >= min_pause_ms and len(audio) - cut >= min_s * ASR_RATE_HZ:
                return audio[cut:]
            run = 0
        i -= 1
    return None


def unfinished(text: str) -> bool:
    """Whether an utterance asks only by its read-back frame ("I have Papa,"): the question
    ("Is that right?") may still be coming."""
    return bool(re.search(r"\bi have\b", text, re.I)) and not re.search(
        r"\?|\b(is that (right|correct)|shall i|what|which|when|where|how)\b", text, re.I
    )


def asks(text: str) -> bool:
    """Whether an utterance (as ASR wrote it) asks the listener something: one of its
    sentences is a question (ASR may split "…? Email, Phone or Post?" into "…? Email.
    Phone were post."). A greeting alone asks nothing: the first words of a long greeting,
    heard on their own, come back as "Hello?", and a person waits for the rest."""
    return any(
        not _GREETING.match(sent) and ("?" in sent or _ASKING.search(sent) or PERMISSION.search(sent))
        for sent in sentences(text)
    )


@dataclass
class _Ready:
    """An answer got ready at a pause of the bot (:meth:`PersonOnCall._get_ready`): the utterance so
    far (``heard``), its text and ``person_asr`` fields, the words answered (``said``: what the bot
    said since the person last spoke, "" for nothing heard), the ``checkpoints`` of its hearing
    (:meth:`PersonOnCall._hear`), and, when they end in a question, the
    rehearsed turn (``twin``: the twin and its events), the ``reply`` and its ``voice``; ``taken``:
    the person took the floor with it."""

    heard: BotAudio
    text: str
    asr: dict
    said: str
    checkpoints: list[tuple[int, list[tuple[str, str]]]]
    twin: tuple[SimulatedPerson, list[tuple[str, dict]]] | None = None
    reply: str | None = None
    voice: tuple[str, np.ndarray] | None = None
    taken: bool = False


class Screen:
    """The person's page on a form call, as far as the person uses it: the box the phone
    agent offers (the session's ``type_requested`` events, over ``GET /api/events``) and
    typing a value in it (``POST /api/form/value``). ``await run()`` follows the events
    until cancelled or the call ends; :meth:`type_in` is the person's hands."""

    def __init__(self, url: str, pc_id: str, emit: Callable[..., Any]):
        self.url, self.pc_id, self.emit = url.rstrip("/"), pc_id, emit
        self.box: dict | None = None  # the offered field: {"field", "label"}
        self._http: aiohttp.ClientSession | None = None

    async def run(self) -> None:
        async with aiohttp.ClientSession() as self._http:
            async with self._http.ws_connect(f"{self.url}/api/events", params={"pc_id": self.pc_id}) as ws:
                async for msg in ws:
                    if msg.type != aiohttp.WSMsgType.TEXT:
                        break
                    ev = json.loads(msg.data)
                    if ev.get("event") == "type_requested":
                        self.box = {"field": ev["field"], "label": ev.get("label", "")}
            await asyncio.Event().wait()  # the call ended: keep the session for a last type_in

    async def type_in(self, value: str) -> bool:
        """Type ``value`` in the offered box and press Set: whether the page took it (False
        when no box is offered; the page's refusal is logged as ``person_type_refused``)."""
        if self.box is None or self._http is None:
            return False
        field, self.box = self.box["field"], None  # a box is typed in once; the next offer highlights it again
        async with self._http.post(
            f"{self.url}/api/form/value", json={"pc_id": self.pc_id, "field": field, "value": value}
        ) as r:
            if r.status == 200:
                return True
            self.emit("person_type_refused", field=field, value=value, status=r.status, error=await r.text())
            return False


class PersonOnCall:
    """The person's side of one call: ``await run()`` listens and answers until cancelled.

    Args:
        person: the persona (decides what to say).
        client: a connected :class:`WebRTCClient`.
        synth: Piper (``synthesize(text, style) -> int16`` at ``synth.sample_rate_hz``).
        asr: Whisper (``transcribe(float32 16 kHz) -> Transcript``).
        style: the person's voice.
        emit: ``emit(event, **fields)``: each bot utterance as the person heard it, and each
            answer (written, spoken words, seconds of audio).
        folder: where the person's side is recorded: each bot utterance as it arrived
            (``heard-NNN.wav``, 16 kHz, numbered as the ``person_asr`` events).
        screen: the person's page (None: a person without one, who only talks).
    """

    def __init__(
        self,
        person: SimulatedPerson,
        client: WebRTCClient,
        synth,
        asr,
        *,
        style: VoiceStyle,
        emit: Callable[..., Any],
        folder: Path | None = None,
        screen: Screen | None = None,
    ):
        self.person, self.client, self.synth, self.asr = person, client, synth, asr
        self.style, self.emit, self.folder, self.screen = style, emit, folder, screen
        self._heard_n = 0
        self.vocabulary = [v for k, v in person.profile.facts.items() if k in ("given_name", "family_name", "city")]
        self.spoken_s = 0.0

    async def run(self) -> None:
        if self.screen is None:
            await self._listen()
            return
        async with asyncio.TaskGroup() as tg:
            watching = tg.create_task(self.screen.run(), name="person's screen")
            try:
                await self._listen()
            finally:
                watching.cancel()

    async def _listen(self) -> None:
        heard: list[str] = []  # what the bot said since the person last spoke
        waiting = False  # a read-back ("I have …") without its question yet: give the bot a moment
        getting: asyncio.Task[BotAudio] | None = None  # the next audio from the call
        ready: asyncio.Task[_Ready] | None = None  # an answer got ready at a pause (one at a time)
        ready_mark = 0  # the client's mark at that pause
        kept: _Ready | None = None  # the last answer got ready and not given: its hearing serves the utterance's end
        try:
            while True:
                if getting is None:
                    getting = asyncio.create_task(self.client.next_bot_audio(READ_BACK_WAIT_S if waiting else 86_400))
                await asyncio.wait({getting, *([ready] if ready else [])}, return_when=asyncio.FIRST_COMPLETED)
                if ready is not None and ready.done():
                    try:
                        kept = ready.result()
                    except Exception:  # the utterance's end is heard again
                        log.exception("simulated person: getting ready failed")
                        kept = None
                    ready = None
                    if kept is not None and kept.taken:  # the person took the floor after the question: answer now
                        self._record(kept.heard, kept.asr)
                        heard, waiting = [], False
                        self.emit("person_heard", text=kept.said)
                        self.person.adopt(*kept.twin)
                        await self._speak(kept.reply, kept.voice)
                        kept = None
                    continue
                try:
                    bot = getting.result()
                except TimeoutError:
                    bot = None  # the bot paused long enough: the read-back is all there is
                getting = None
                if bot is not None and not bot.final:
                    if ready is not None:  # the bot went on: what that pause asked is not the question
                        ready.cancel()
                        await asyncio.gather(ready, return_exceptions=True)
                    ready, ready_mark = asyncio.create_task(self._get_ready(bot, heard, kept)), bot.mark
                    continue
                prepared = None
                if bot is not None:
                    if ready is not None:  # got ready for this utterance's last pause: its end; else stale
                        if ready_mark != bot.mark:
                            ready.cancel()
                        (got,) = await asyncio.gather(ready, return_exceptions=True)
                        kept = got if isinstance(got, _Ready) else None
                        ready = None
                    prepared = kept if kept is not None and kept.heard.mark == bot.mark else None
                    if prepared is not None:
                        text, asr = prepared.text, prepared.asr
                    else:
                        text, asr, _ = await self._hear(bot, kept)
                    kept = None
                    self._record(bot, asr)
                    if text:
                        heard.append(text)
                    if not heard or not asks(text):
                        continue  # a statement, or nothing understood: keep listening
                    if unfinished(text) and not waiting:
                        waiting = True  # its synthesis may lag behind: "Is that right?" may still come
                        continue
                waiting = False
                said, heard = " ".join(heard), []
                self.emit("person_heard", text=said)
                try:
                    if prepared is not None and prepared.twin is not None and prepared.said == said:
                        self.person.adopt(*prepared.twin)
                        reply, voice = prepared.reply, prepared.voice
                    else:
                        reply = await self.person.respond(
                            said, type_in=self.screen.type_in if self.screen else None, box=self._box()
                        )
                        voice = await self._voice(reply, self.person.repeat) if reply else None
                    if reply:
                        await self._speak(reply, voice)
                except Exception:  # one broken turn must not silence the person for the rest of the call
                    log.exception("simulated person: turn failed")
        finally:
            for t in (getting, ready):
                if t is not None:
                    t.cancel()
                    await asyncio.gather(t, return_exceptions=True)

    async def _get_ready(self, bot: BotAudio, heard: list[str], before: _Ready | None) -> _Ready:
        """At a pause of the bot (``bot``: the utterance so far): hear it, and when it ends in a
        question, decide the answer on a :meth:`~appliance.simulate.person.SimulatedPerson.rehearsal`
        twin and voice it; then, unless the bot goes on, take the floor after :data:`ANSWER_GAP_MS` of
        silence. ``heard``: what the bot said before this utterance since the person last spoke (not changed);
        ``before``: what was got ready at an earlier pause (its hearing may serve, :meth:`_hear`)."""
        text, asr, checkpoints = await self._hear(bot, before)
        said = " ".join([*heard, text]) if text else ""
        ready = _Ready(bot, text, asr, said, checkpoints)
        if not text or not asks(text) or unfinished(text):
            return ready  # nothing asked yet, or a read-back whose question may still come: the end decides
        twin, events = self.person.rehearsal()
        typing = False

        async def would_type(value: str) -> bool:  # the rehearsal types nothing: the box is the real turn's
            nonlocal typing
            typing = True
            return False

        try:
            reply = await twin.respond(said, type_in=would_type if self.screen else None, box=self._box())
            voice = await self._voice(reply, twin.repeat) if reply else None
        except Exception:  # the real turn decides again, and logs it
            log.debug("simulated person: rehearsal failed", exc_info=True)
            return ready
        if typing or not reply:
            return ready
        ready.twin, ready.reply, ready.voice = (twin, events), reply, voice
        while self.client.mark == bot.mark and self.client.receiving and self.client.silent_ms < ANSWER_GAP_MS:
            await asyncio.sleep(0.01)
        ready.taken = self.client.take(bot.mark)
        return ready

    def _box(self) -> str | None:
        """The label of the box the person's screen offers now, or None."""
        return self.screen.box["label"] if self.screen is not None and self.screen.box is not None else None

    async def _hear(
        self, bot: BotAudio, before: _Ready | None = None
    ) -> tuple[str, dict, list[tuple[int, list[tuple[str, str]]]]]:
        """What the person hears in one bot utterance (``bot``, or the utterance so far): Whisper's
        text of each of its :func:`pieces`, repetition loops undone
        (:func:`~appliance.simulate.hearing.clean`), joined; an utterance heard in pieces that ends
        with no question (a read-back's frame alone is none: "I have …") has its
        :func:`last_clause` heard again alone, and the question in it added. Also the fields of
        its ``person_asr`` event (:meth:`_record`), and its checkpoints: ``(samples, passes)`` for
        the audio heard at each pause so far (each piece's passes, :meth:`_transcribe_piece`).
        What was heard up to a checkpoint of an earlier pause of the same utterance (``before``)
        is not heard again: the latest one at least :data:`KEPT_S` into the utterance and
        :data:`KEPT_S` before its end is kept, and only the rest is heard."""
        t0 = time.monotonic()
        audio, start, passes = bot.audio, 0, []
        checkpoints = list(before.checkpoints) if before is not None and before.heard.span[0] == bot.span[0] else []
        for samples, heard in reversed(checkpoints):
            if KEPT_S * ASR_RATE_HZ <= samples <= len(audio) - KEPT_S * ASR_RATE_HZ:
                start, passes = samples, list(heard)
                break
        passes += [await self._transcribe_piece(p) for p in pieces(audio[start:])]
        checkpoints.append((len(audio), passes))
        text = " ".join(c for t, _ in passes if (c := clean(t)))
        last = sentences(text)[-1]
        if len(passes) > 1 and (not asks(last) or unfinished(last)) and (tail := last_clause(audio)) is not None:
            # the end, heard again on its own: tiny.en drops a long line's closing question even from a 5 s
            # piece ("… as you confirmed them." without "Shall I submit the form now?"); a listener hears it
            asked = [
                x
                for x in sentences(clean((await asyncio.to_thread(self.asr.transcribe, tail)).text))
                if asks(x) and not unfinished(x)
            ]
            text = " ".join([text, *asked])
        first_pass = " ".join(f for _, f in passes if f)
        asr = {
            "text": text,
            "audio_s": round(len(audio) / ASR_RATE_HZ, 2),
            "asr_ms": round((time.monotonic() - t0) * 1000),
            "pieces": len(passes),
            "first_pass": first_pass if first_pass != text else None,
        }
        return text, asr, checkpoints

    def _record(self, bot: BotAudio, asr: dict) -> None:
        """Event ``person_asr`` for one bot utterance (``asr``: from :meth:`_hear`), with its
        audible span as ``bot_start_ts``/``bot_end_ts`` (ms since the epoch), and its audio kept
        as ``heard-NNN.wav``."""
        self._heard_n += 1
        if self.folder is not None:
            write_wav(
                self.folder / f"heard-{self._heard_n:03d}.wav",
                (np.clip(bot.audio, -1, 1) * 32767).astype(np.int16),
                ASR_RATE_HZ,
            )
        self.emit(
            "person_asr",
            n=self._heard_n,
            **asr,
            bot_start_ts=round(bot.span[0] * 1000),
            bot_end_ts=round(bot.span[1] * 1000),
        )

    async def _transcribe_piece(self, audio: np.ndarray) -> tuple[str, str]:
        """Whisper's text for one piece of bot audio, and its first pass's. Whisper may have
        stopped early (it does on long runs of short words: "I have C for Charlie." for 7 s
        of a spelled read-back): a listener hears it all, so a transcript too sparse for its
        audio (under :data:`MIN_WORDS_PER_S`) is heard again in two halves, and what holds
        more words is kept. Right after an answer in plain words, the piece is heard again
        after that answer (:meth:`~appliance.simulate.person.SimulatedPerson.expecting`: a
        listener expects "halal" back), and kept unless it holds fewer words: a context makes
        tiny.en stop early ("I have Emma Johnson at example." for "… dot com. What is your
        phone number?" after "standard."). A spelling (two spelling-alphabet words or more) is
        heard again after :data:`ALPHABET_CONTEXT`, and kept unless it holds fewer of those
        words."""
        tr = await asyncio.to_thread(self.asr.transcribe, audio)
        text = tr.text
        if tr.audio_s > 3 and len(text.split()) < MIN_WORDS_PER_S * tr.audio_s and (halves := _halves(audio)):
            again = " ".join(t for t in [(await asyncio.to_thread(self.asr.transcribe, h)).text for h in halves] if t)
            text = again if len(again.split()) > len(text.split()) else text
        if expects := self.person.expecting():
            primed = (await asyncio.to_thread(self.asr.transcribe, audio, expects)).text
            text = primed if len(primed.split()) >= len(text.split()) else text
        if _alphabet_words(text) >= 2:
            spelled = (await asyncio.to_thread(self.asr.transcribe, audio, ALPHABET_CONTEXT)).text
            text = spelled if _alphabet_words(spelled) >= _alphabet_words(text) else text
        return text, tr.text

    async def _voice(self, reply: str, repeat: int) -> tuple[str, np.ndarray]:
        """The words a person says for the written ``reply`` and their audio, after being asked
        ``repeat`` times in a row for the same thing."""
        # asked again, or correcting a read-back, a person spells codes with the spelling alphabet
        spoken = mouth(reply, self.vocabulary, spell=repeat >= 1 or reply.startswith("No"))
        # asked again for the same thing, a person says it again more slowly
        slower = 1 + 0.15 * min(repeat, 3)
        style = dataclasses.replace(self.style, length_scale=self.style.length_scale * slower)
        return spoken, await asyncio.to_thread(self.synth.synthesize, spoken, style)

    async def _speak(self, reply: str, voice: tuple[str, np.ndarray]) -> None:
        spoken, audio = voice
        seconds = len(audio) / self.synth.sample_rate_hz
        self.spoken_s += seconds
        self.emit("person_said", written=reply, spoken=spoken, audio_s=round(seconds, 2))
        await self.client.say(audio, self.synth.sample_rate_hz)
