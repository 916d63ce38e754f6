"""A reply in a speaker's own voice (a Werewolf seat's, the narrator's): VoiceFrame through
the clause chunker to Piper's per-clause synthesis, with a fake synth (no model)."""

from __future__ import annotations

from fakes import FakeSynth
from pipecat.frames.frames import LLMFullResponseEndFrame, LLMFullResponseStartFrame, LLMTextFrame, TTSAudioRawFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.tests.utils import run_test

from appliance import config
from appliance.voice.markers import ClauseChunker, SpeakableTextProcessor, VoiceFrame
from appliance.voice.piper_synth import VoiceStyle
from appliance.voice.piper_tts import PiperClauseTTSService

SEAT = VoiceStyle(length_scale=1.2, pitch_semitones=-5.0, noise_scale=0.4, noise_w_scale=0.6)


def reply(text: str, voice: VoiceStyle | None = None) -> list:
    return [
        LLMFullResponseStartFrame(),
        *([VoiceFrame(voice=voice)] if voice else []),
        LLMTextFrame(text),
        LLMFullResponseEndFrame(),
    ]


async def test_each_reply_is_said_in_its_speakers_voice_then_the_default_again():
    synth = FakeSynth()
    tts = PiperClauseTTSService(synth, config.Config().tts)
    down, _ = await run_test(
        Pipeline([SpeakableTextProcessor(), tts]),
        frames_to_send=[
            *reply("I suspect P4, because they voted for P2. [EMO:sad] Vote P4 out.", SEAT),
            *reply("Dawn: nobody died during the night."),
        ],
    )
    assert [f for f in down if isinstance(f, TTSAudioRawFrame)]
    seat = [s for t, s in synth.calls if "P4" in t or "P2" in t]
    narrator = [s for t, s in synth.calls if "Dawn" in t or "night" in t]
    assert len(seat) >= 2 and narrator
    assert all(s.pitch_semitones <= -5.0 and s.noise_w_scale == 0.6 for s in seat)  # the seat's voice (sad: lower)
    assert seat[0].noise_scale == SEAT.noise_scale and seat[0].length_scale == SEAT.length_scale
    assert all(s == VoiceStyle() for s in narrator)  # the next reply is back to the service's voice


def test_the_chunker_keeps_the_voice_through_markers_until_the_reply_ends():
    c = ClauseChunker(first_words=2)
    c.set_voice(SEAT)
    out = c.feed("One two three. [SPEED:1.5] Four five. ") + c.flush()
    assert [style.voice for _, style in out] == [SEAT, SEAT] and out[1][1].speed == 1.5
    assert c.feed("Six seven. ")[0][1].voice is None
