"""A simulated phone call: the phone agent's :class:`~appliance.phone_agent.agent.Line`
whose far end is a :class:`~appliance.simulate.person.SimulatedPerson`, through real audio.

Each bot utterance is synthesised with Piper in the bot's voice and transcribed with
Whisper; the person hears only that transcript. The person's reply is turned into spoken
words (:func:`~appliance.simulate.person.mouth`), synthesised in the person's own voice (a
different :class:`~appliance.voice.tts.VoiceStyle`) and transcribed again; the phone agent
hears only that transcript. No text crosses the line unspoken.

Turn-taking: the person answers when the bot yields the floor (calls ``hear``), to
everything the bot said since the person last spoke — as a person waits for the other
side to stop talking. Not real time: audio is not played out at its own speed (``say``
returns once the bot's audio is made; its transcription runs in the background), and
there is no WebRTC — the PCM a WebRTC track would carry goes straight into ASR.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from appliance.phone_agent.agent import QueueLine
from appliance.phone_agent.normalise import clean
from appliance.simulate.person import SimulatedPerson, mouth
from appliance.voice.tts import VoiceStyle, resample

log = logging.getLogger(__name__)

ASR_RATE_HZ = 16_000


class SimulatedCall(QueueLine):
    """Use as ``async with SimulatedCall(...) as line:``; pass ``line`` to the phone agent.

    Args:
        person: the persona at the far end.
        synth: a Piper voice (``synthesize(text, style) -> int16``); ``asr``: Whisper.
        bot_style / person_style: the two voices (they should differ).
        emit: ``emit(event, **fields)`` — each utterance with what the other side heard
            and the ms spent in TTS and ASR.
    """

    def __init__(self, person: SimulatedPerson, synth, asr, *, bot_style: VoiceStyle, person_style: VoiceStyle,
                 emit: Callable[..., Any]):
        super().__init__()
        self.person, self.synth, self.asr = person, synth, asr
        self.bot_style, self.person_style, self.emit = bot_style, person_style, emit
        self.vocabulary = [v for k, v in person.profile.facts.items() if k in ("given_name", "family_name", "city")]
        self.audio_s = {"bot": 0.0, "person": 0.0}
        self._said: list[asyncio.Task[str]] = []  # the bot's utterances since the person last spoke
        self._turns: asyncio.Queue[list[asyncio.Task[str]]] = asyncio.Queue()
        self._worker: asyncio.Task | None = None

    async def __aenter__(self) -> "SimulatedCall":
        self._worker = asyncio.create_task(self._person_side())
        return self

    async def __aexit__(self, *exc) -> None:
        tasks = [t for t in (self._worker, *self._said) if t is not None]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def say(self, text: str) -> None:
        """The bot speaks ``text``: its audio is made now and transcribed for the person."""
        audio = await asyncio.to_thread(self.synth.synthesize, text, self.bot_style)
        self.audio_s["bot"] += len(audio) / self.synth.sample_rate_hz
        self._said.append(asyncio.create_task(self._transcribe(audio)))

    async def hear(self) -> str:
        """The bot yields the floor: the person answers everything said since they last spoke."""
        if self._said:
            self._turns.put_nowait(self._said)
            self._said = []
        return await super().hear()

    async def _transcribe(self, audio: np.ndarray) -> str:
        pcm = resample(audio, self.synth.sample_rate_hz, ASR_RATE_HZ).astype(np.float32) / 32768.0
        t0 = time.monotonic()
        tr = await asyncio.to_thread(self.asr.transcribe, pcm)
        self.emit("asr", text=tr.text, audio_s=round(tr.audio_s, 2), asr_ms=round((time.monotonic() - t0) * 1000))
        return clean(tr.text)

    async def _person_side(self) -> None:
        while True:
            turn = await self._turns.get()
            try:
                await self._answer(turn)
            except Exception:  # a broken turn must not silence the person for the rest of the call
                log.exception("simulated person: turn failed")

    async def _answer(self, turn: list[asyncio.Task[str]]) -> None:
        heard = " ".join(t for t in [await u for u in turn] if t)
        self.emit("person_heard", text=heard)
        reply = await self.person.respond(heard) if heard else None
        if not reply:
            return
        spoken = mouth(reply, self.vocabulary)
        # asked again for the same thing, a person says it again more slowly
        slower = 1 + 0.15 * min(self.person.repeat, 3)
        style = dataclasses.replace(self.person_style, length_scale=self.person_style.length_scale * slower)
        voice = await asyncio.to_thread(self.synth.synthesize, spoken, style)
        self.audio_s["person"] += len(voice) / self.synth.sample_rate_hz
        text = await self._transcribe(voice)
        self.emit("person_said", written=reply, spoken=spoken, bot_heard=text)
        self.heard(text)
