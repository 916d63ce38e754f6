"""Spelling through real audio: Piper speaks, Whisper tiny.en hears (no WebRTC, no LLM, no
Chromium). Piper runs without its noise (``noise_scale`` 0) so each clip is the same on every
run; what is asserted is the value decoded or confirmed, never an ASR string."""

from __future__ import annotations

import asyncio
import dataclasses

import numpy as np
import pytest

from appliance.bus import Envelope, InProcBus
from appliance.config import FormsConfig
from appliance.demo.profile import load_profile
from appliance.phone_agent import spelling
from appliance.phone_agent.agent import PhoneAgent
from appliance.protocol import FieldSpec, InfoCollected, StatusUpdate
from appliance.protocol.line import SayOutcome
from appliance.simulate.call import asks
from appliance.simulate.person import SimulatedPerson, mouth
from appliance.voice.asr.base import Transcript
from appliance.voice.piper_synth import VoiceStyle, resample

pytestmark = pytest.mark.e2e

BOT = VoiceStyle(noise_scale=0.0, noise_w_scale=0.0)
PERSON = VoiceStyle(length_scale=0.95, pitch_semitones=-2.0, noise_scale=0.0, noise_w_scale=0.0)


def transcribe(runtime, text: str, style: VoiceStyle, context: str = "") -> Transcript:
    """``text`` said by Piper in ``style``, as Whisper hears it (after ``context``)."""
    audio = runtime.synth.synthesize(text, style)
    return runtime.asr.transcribe(
        resample(audio.astype(np.float32) / 32768, runtime.synth.sample_rate_hz, 16_000), context
    )


def hear(runtime, text: str, style: VoiceStyle, context: str = "") -> str:
    """``text`` said by Piper in ``style``, as Whisper writes it (after ``context``)."""
    return transcribe(runtime, text, style, context).text


@pytest.mark.parametrize("voice", [BOT, PERSON], ids=["bot", "person"])
@pytest.mark.parametrize(
    "said, kind, value, exact",
    [
        ("W, O, J, C, I, K.", "name", "Wojcik", False),  # letters
        ("K, four seven one, one eight six, three nine.", "code", "K47118639", False),
        (
            "N as in November, G as in Golf, U as in Uniform, Y as in Yankee, E as in Echo, N as in November.",
            "name",
            "Nguyen",
            True,
        ),  # "as in"
        ("Sierra, India, Oscar, Bravo, Hotel, Alpha, November.", "name", "Siobhan", True),  # the spelling alphabet
        ("P for Papa, X-ray, four, seven, two, nine, one, eight, three.", "code", "PX4729183", True),
        ("O, apostrophe, N, E, I, double L.", "name", "O'Neill", False),  # "double"
        ("Double Lima, Oscar, Yankee, Delta.", "name", "Lloyd", True),
    ],
    ids=["letters", "letters-code", "as-in", "icao", "icao-code", "double", "double-icao"],
)
def test_spelled_speech_is_decoded(forms_runtime, voice, said, kind, value, exact):
    """The spelling alphabet and "as in" are decoded exactly. Bare letters are decoded to a
    value of the right shape with at most one letter heard wrong: single letters are what
    a small ASR confuses (I/A, B/D/E), which one it slips on changes with as little as its
    thread count, and the spelled read-back is there to catch it (an exact ASR string is
    never asserted over real audio: CONTRACTS.md)."""
    got = spelling.decode(hear(forms_runtime, said, voice), kind)
    if exact:
        assert got == value
    else:
        assert len(got) == len(value) and sum(a != b for a, b in zip(got, value)) <= 1, (got, value)


class TopicLLM:
    """The persona's topic decision, fixed: the test's one field."""

    def __init__(self, topic: str):
        self.topic = topic

    async def json(self, system, user, **kw):
        return {"topic": self.topic}

    async def warm(self, system):
        pass


class AudioLine:
    """The phone agent's line over real audio without WebRTC: each thing the agent says is
    spoken by Piper and heard by the person through Whisper; the person (its own ear, its own
    words, spelling when asked) answers in its own voice, which the agent hears through
    Whisper. ``turns``: (what the person heard, what it said) in order."""

    person_speaking = False  # each answer is heard whole
    heard_resumes = False

    def __init__(self, runtime, person: SimulatedPerson):
        self.runtime, self.person = runtime, person
        self.vocabulary = [person.profile.facts[k] for k in ("given_name", "family_name")]
        self.said: list[str] = []
        self.turns: list[tuple[str, str]] = []
        self._heard: asyncio.Queue[Transcript] = asyncio.Queue()
        self.heard_words: tuple[tuple[str, float], ...] = ()
        self.context = ""

    async def say(self, text: str) -> SayOutcome:
        self.said.append(text)
        heard = await asyncio.to_thread(hear, self.runtime, text, BOT)
        if not asks(heard):
            return SayOutcome(interrupted=False, heard=text)
        reply = await self.person.respond(heard)
        if reply:
            spoken = mouth(reply, self.vocabulary, spell=self.person.repeat >= 1 or reply.startswith("No"))
            style = dataclasses.replace(
                PERSON, length_scale=PERSON.length_scale * (1 + 0.15 * min(self.person.repeat, 3))
            )
            self.turns.append((heard, reply))
            self._heard.put_nowait(await asyncio.to_thread(transcribe, self.runtime, spoken, style, self.context))
        return SayOutcome(interrupted=False, heard=text)

    async def hear(self) -> str:
        heard = await self._heard.get()
        self.heard_words = heard.words
        return heard.text

    async def acknowledge(self) -> None:
        """No pipeline, no acknowledger: a slow step passes in silence."""

    async def hint(self, context: str, spelling: bool = False) -> None:
        self.context = context  # as the voice pipeline's STT takes it


async def _until(envelopes, run: asyncio.Task):
    """``envelopes`` as they come, until ``run`` (the agent) ends: its exception is raised then
    (a broken agent must fail the test, not leave it waiting for a message that never comes)."""
    it = aiter(envelopes)
    while True:
        nxt = asyncio.ensure_future(anext(it))
        await asyncio.wait({nxt, run}, return_when=asyncio.FIRST_COMPLETED)
        if not nxt.done():
            nxt.cancel()
            run.result()  # raises what ended the agent
            return
        yield nxt.result()


async def _interview_family_name(runtime, spell_below_prob: float) -> tuple[list[str], AudioLine]:
    """The hoa profile's family name ("Nguyen", which tiny.en hears as something else) asked
    over real audio until the agent confirms a value: (the values confirmed, the line)."""
    family = FieldSpec(name="family_name", label="Family name", type="text", required=True)
    person = SimulatedPerson(load_profile("hoa"), TopicLLM("family_name"), emit=lambda *a, **k: None)
    line = AudioLine(runtime, person)
    async with InProcBus(None) as bus:
        agent = PhoneAgent(
            bus,
            line,
            TopicLLM("none"),
            task_id="t",
            purpose="the test form",
            emit=lambda *a, **k: None,
            fields=(family,),
            answer_timeout_s=10,
            spell_below_prob=spell_below_prob,
        )
        computer = bus.subscribe("computer")
        run = asyncio.create_task(agent.run())
        confirmed = []
        async for env in _until(computer, run):
            if isinstance(env.payload, InfoCollected) and env.payload.confirmed:
                confirmed.append(env.payload.value)
                await bus.publish(
                    Envelope.new(
                        StatusUpdate(state="canceled", message="test over"), sender="computer", recipient="phone"
                    )
                )
                break
        await asyncio.wait_for(run, 60)
    return confirmed, line


async def test_a_misheard_name_is_corrected_by_spelling_within_three_exchanges(forms_runtime):
    """ "Nguyen" said as a word comes back from tiny.en as something else; after the person
    rejects that read-back, the agent asks for a spelling, and the value is confirmed right
    within three exchanges of the rejection (the "no", the spelling, the "yes")."""
    confirmed, line = await _interview_family_name(forms_runtime, spell_below_prob=0.0)  # no ASR-unsure check
    replies = [said for _, said in line.turns]
    first_no = next(i for i, said in enumerate(replies) if said.startswith("No"))
    assert confirmed == ["Nguyen"], line.turns
    assert len(replies) - first_no <= 3, line.turns  # the "no", the spelling, the "yes"
    assert any("spell" in s for s in line.said)
    assert replies[-1] == "Yes, that's right."


async def test_a_name_the_asr_is_unsure_of_is_spelled_at_once(forms_runtime):
    """The same name with the ASR's word probabilities looked at (``forms.spell_below_prob``):
    the misheard word is unsure, so the agent asks for the spelling at once — no read-back of
    the wrong name, no "no": the answer, the spelling, the "yes"."""
    confirmed, line = await _interview_family_name(forms_runtime, spell_below_prob=FormsConfig().spell_below_prob)
    replies = [said for _, said in line.turns]
    assert confirmed == ["Nguyen"], line.turns
    assert not [said for said in replies if said.startswith("No")], line.turns
    assert len(replies) == 3 and replies[-1] == "Yes, that's right.", line.turns
