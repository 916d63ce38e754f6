"""The simulated person's turn-taking on a call (issue 27, item 7: a fair simulated person
answers ≤ 600 ms after the bot stops): the client hands over the bot's utterance so far at a
pause, the person gets its answer ready on a rehearsal twin and takes the floor after a
question once :data:`~appliance.simulate.call.ANSWER_GAP_MS` of silence has passed; when the
bot goes on, the rehearsed turn leaves no trace. No models, no WebRTC."""

from __future__ import annotations

import asyncio

import av
import numpy as np
from aiortc.mediastreams import MediaStreamError

from appliance.demo.profile import Profile
from appliance.simulate.call import ANSWER_GAP_MS, PersonOnCall
from appliance.simulate.person import SimulatedPerson
from appliance.simulate.webrtc_client import RATE_HZ, BotAudio, WebRTCClient
from appliance.voice.asr.base import Transcript
from appliance.voice.piper_synth import VoiceStyle

LOUD, QUIET = 0.3, 0.0


class Track:
    """The bot's track: 20 ms frames at 48 kHz, each loud or quiet, then the end."""

    def __init__(self, frames: list[float]):
        self.frames = list(frames)

    async def recv(self) -> av.AudioFrame:
        if not self.frames:
            await asyncio.sleep(3600)
            raise MediaStreamError
        level = self.frames.pop(0)
        pcm = (np.full((1, 960), level * 32767)).astype(np.int16)
        frame = av.AudioFrame.from_ndarray(pcm, format="s16", layout="mono")
        frame.sample_rate = RATE_HZ
        await asyncio.sleep(0)
        return frame


async def _received(client: WebRTCClient, frames: list[float]) -> None:
    task = asyncio.create_task(client._receive(Track(frames)))
    for _ in range(len(frames) * 3):
        await asyncio.sleep(0)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def test_the_client_hands_over_the_utterance_so_far_at_a_pause_and_whole_at_its_end():
    client = WebRTCClient("http://x", gap_ms=500, pause_ms=120)
    # 0.2 s of speech, a 140 ms pause (a pause, not the end), 0.2 s more, then 600 ms of silence
    await _received(client, [LOUD] * 10 + [QUIET] * 7 + [LOUD] * 10 + [QUIET] * 30)
    got = [await client.next_bot_audio(1) for _ in range(client._heard.qsize())]
    assert [(g.final, g.mark) for g in got] == [(False, 10), (False, 20), (True, 20)]
    assert len(got[0].audio) < len(got[1].audio) <= len(got[2].audio)  # 16 kHz, so far, then whole
    assert not client.receiving
    await _received(client, [LOUD] * 10 + [QUIET] * 7 + [LOUD] * 10 + [QUIET] * 30)
    assert len(await client.next_bot_utterance(1)) == len(got[2].audio)  # the end, past the pauses


async def test_taking_the_floor_ends_the_utterance_only_if_the_bot_has_not_gone_on():
    client = WebRTCClient("http://x", gap_ms=500, pause_ms=120)
    await _received(client, [LOUD] * 10 + [QUIET] * 8)
    paused = client._heard.get_nowait()
    await _received(client, [LOUD] * 5 + [QUIET] * 8)  # the bot went on
    assert not client.take(paused.mark)
    later = [client._heard.get_nowait() for _ in range(client._heard.qsize())][-1]
    assert client.take(later.mark)  # taken: no final follows for that utterance
    await _received(client, [QUIET] * 30)
    assert client._heard.empty() and not client.receiving


class Ear:
    """Whisper, scripted: the text for audio of each length (samples at 16 kHz)."""

    def __init__(self, by_length: dict[int, str]):
        self.by_length = by_length

    def transcribe(self, audio, context=""):
        return Transcript(self.by_length[len(audio)], 0.0, 0.0, len(audio) / 16_000)


class Synth:
    sample_rate_hz = 16_000

    def synthesize(self, text, style):
        return np.zeros(1600, np.int16)


class Line:
    """The call as the person's loop uses it: bot audio handed over from a queue, the client's
    mark and silence set by the test, what the person says recorded (with the mark it spoke at)."""

    def __init__(self):
        self.queue: asyncio.Queue[BotAudio] = asyncio.Queue()
        self.mark, self.silent_ms, self.receiving = 0, 0.0, True
        self.said: list[int] = []
        self.taken: list[int] = []
        self.last_span = None

    async def next_bot_audio(self, timeout_s):
        return await asyncio.wait_for(self.queue.get(), timeout_s)

    def take(self, mark):
        if mark != self.mark or not self.receiving:
            return False
        self.taken.append(mark)
        self.receiving = False
        return True

    async def say(self, audio, rate_hz):
        self.said.append(self.mark)


class NoLLM:
    async def json(self, *a, **k):
        raise AssertionError("the question names its detail: no LLM")

    async def warm(self, system):
        pass


def _bot(samples: int, mark: int, final: bool) -> BotAudio:
    return BotAudio(np.full(samples, 0.2, np.float32), (1.0, 2.0), mark, final)


async def _person(line: Line, ear: Ear, facts: dict | None = None):
    events: list[tuple[str, dict]] = []
    facts = facts or {"email": "ada@example.com"}
    person = SimulatedPerson(Profile("p", facts), NoLLM(), lambda e, **f: events.append((e, f)))
    call = PersonOnCall(person, line, Synth(), ear, style=VoiceStyle(), emit=lambda e, **f: events.append((e, f)))
    return person, call, events


async def _until(check, s: float = 2.0) -> None:
    for _ in range(int(s * 100)):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


async def test_after_a_question_the_person_answers_at_a_pause_without_waiting_for_the_end():
    line = Line()
    person, call, events = await _person(line, Ear({8000: "What is your email?"}))
    listening = asyncio.create_task(call._listen())
    line.mark, line.silent_ms = 7, ANSWER_GAP_MS - 200
    await line.queue.put(_bot(8000, 7, final=False))
    await asyncio.sleep(0.1)
    assert line.said == []  # ready, but the silence is still short of the answer gap
    line.silent_ms = ANSWER_GAP_MS
    await _until(lambda: line.said)
    assert line.taken == [7]
    names = [e for e, _ in events]
    assert names == ["person_asr", "person_heard", "person", "person_said"]
    assert events[2][1]["topic"] == "email" and "ada" in events[3][1]["written"]
    assert person.turns[-1].topic == "email"  # the rehearsed turn is the person's own now
    listening.cancel()
    await asyncio.gather(listening, return_exceptions=True)


async def test_when_the_bot_goes_on_after_the_pause_the_rehearsed_answer_leaves_no_trace():
    line = Line()
    ear = Ear({8000: "What is your email?", 12000: "What is your email? You can spell it."})
    person, call, events = await _person(line, ear)
    listening = asyncio.create_task(call._listen())
    line.mark = 7
    await line.queue.put(_bot(8000, 7, final=False))
    await asyncio.sleep(0.05)
    line.mark, line.silent_ms = 9, 0.0  # the bot went on: the rehearsal must not take the floor
    await asyncio.sleep(0.1)
    assert line.said == [] and person.turns == [] and events == []
    line.receiving = False
    await line.queue.put(_bot(12000, 9, final=True))
    await _until(lambda: line.said)
    heard = [f for e, f in events if e == "person_heard"]
    assert [h["text"] for h in heard] == ["What is your email? You can spell it."]
    assert len(person.turns) == 1 and line.taken == []
    listening.cancel()
    await asyncio.gather(listening, return_exceptions=True)


async def test_a_rehearsal_twin_keeps_its_turn_to_itself_until_adopted():
    events: list[tuple[str, dict]] = []
    person = SimulatedPerson(
        Profile("p", {"username": "davidmiller84"}, {"username": "davidmiller"}),
        NoLLM(),
        lambda e, **f: events.append((e, f)),
    )
    twin, said = person.rehearsal()
    assert "davidmiller" in await twin.respond("What is your username?")
    assert person.turns == [] and not person._first_used and events == []
    person.adopt(twin, said)
    assert person.turns[-1].topic == "username" and "username" in person._first_used
    assert [e for e, _ in events] == ["person"]
    assert "davidmiller84" not in (await person.respond("What is your username?") or "")  # still the first answer


async def test_what_was_heard_at_an_earlier_pause_is_not_heard_again_at_the_end():
    line = Line()
    # 2.5 s read-back, a pause, then the question: the end hears only the 2.5 s after the pause
    ear = Ear({40_000: "I have Paris.", 40_001: "What is your travel date?"})
    person, call, events = await _person(line, ear, {"destination": "Paris", "travel_date": "2027-09-15"})
    listening = asyncio.create_task(call._listen())
    line.mark = 7
    await line.queue.put(_bot(40_000, 7, final=False))
    await asyncio.sleep(0.05)
    line.mark, line.receiving = 9, False
    await line.queue.put(_bot(80_001, 9, final=True))
    await _until(lambda: line.said)
    heard = [f["text"] for e, f in events if e == "person_heard"]
    assert heard == ["I have Paris. What is your travel date?"]
    listening.cancel()
    await asyncio.gather(listening, return_exceptions=True)


class SlowLLM(NoLLM):
    async def json(self, *a, **k):
        await asyncio.sleep(3600)  # a topic decision that takes longer than the bot's next words


async def test_a_pause_that_the_bot_talks_on_from_does_not_hold_up_the_answer_to_the_question():
    line = Line()
    ear = Ear({4000: "What is your?", 8000: "What is your email?"})
    events: list[tuple[str, dict]] = []
    person = SimulatedPerson(Profile("p", {"email": "ada@example.com"}), SlowLLM(), lambda e, **f: None)
    call = PersonOnCall(person, line, Synth(), ear, style=VoiceStyle(), emit=lambda e, **f: events.append((e, f)))
    listening = asyncio.create_task(call._listen())
    line.mark = 3
    await line.queue.put(_bot(4000, 3, final=False))  # "What is your?": its topic goes to the (slow) LLM
    await asyncio.sleep(0.05)
    line.mark, line.silent_ms = 7, ANSWER_GAP_MS
    await line.queue.put(_bot(8000, 7, final=False))
    await _until(lambda: line.said)
    assert line.taken == [7] and [f["text"] for e, f in events if e == "person_heard"] == ["What is your email?"]
    listening.cancel()
    await asyncio.gather(listening, return_exceptions=True)
