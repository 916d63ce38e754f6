"""The simulated user seat for Werewolf: an independent LLM that acts only through what it says.

It sees only its seat's view (the same ``werewolf_turn`` a human's page would get), calls
the one legal tool with its own LLM conversation and slot, then *says* its choice: the
utterance is synthesised with Piper in a voice no AI seat uses, resampled to 16 kHz and
transcribed with Whisper. Its reply carries both the tool call and the transcript; the
judge applies only what the transcript says, and only if it matches the tool call.

*Typed* (no synth and no ASR given: ``bench werewolf --user text``), the utterance itself
is the transcript — the same fail-closed parser reads it, without the audio's errors.

:class:`SimulatedUser` hands this seat to :func:`appliance.werewolf.game.play_game`;
:func:`run_game` plays a whole simulated game (``appliance werewolf --user sim``).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from appliance.bus import Bus, Subscription
from appliance.config import Config, ConfigError
from appliance.judge import tools
from appliance.judge.state import Role
from appliance.judge.strategy import RULES, STRATEGIES
from appliance.judge.tools import ToolSpec
from appliance.protocol.werewolf import ACTION, ActionPayload, TurnPayload
from appliance.voice.asr import SAMPLE_RATE_HZ, WhisperASR
from appliance.voice.piper_synth import PiperSynth, VoiceStyle, resample
from appliance.voice.runtime import VoiceRuntime
from appliance.voice.wav import write_wav
from appliance.werewolf import voices
from appliance.werewolf.game import GameResult, GameState, SeatAgent, play_game

log = logging.getLogger(__name__)

_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}

#: ways a person says each choice; ``{n}`` is the seat number in words
_PHRASES = {
    tools.VOTE: ("I vote for player {n}.", "My vote goes to player {n}.", "I vote to eliminate player {n}."),
    tools.NIGHT_KILL: ("Attack player {n}.", "We attack player {n} tonight."),
    tools.SEER_CHECK: ("I check player {n}.", "Check player {n}, please."),
}
_ABSTAIN = ("I abstain.", "I abstain this round.")
_SAVE = {True: "I save the victim.", False: "I do not save."}


class TurnLLM(Protocol):
    """The seat's own LLM conversation, as the game gives it (a Werewolf ``SeatLLM``)."""

    async def call(
        self,
        lines: list[str] | tuple[str, ...],
        instruction: str,
        tool: ToolSpec,
        *,
        round: int,
        phase: str,
        attempt: int = 0,
    ) -> dict[str, Any]:
        """The turn tool's arguments, legal by construction.

        Raises:
            SeatError: the LLM gave no usable answer.
        """


def system_prompt(seat: str, role: Role, n_seats: int) -> str:
    """The simulated person's system prompt (its own wording, its own slot)."""
    return (
        f"You are the person in seat {seat}, playing the {role.value} in a spoken game of Werewolf with "
        f"{n_seats} seats. Everyone else is a computer player.\n{RULES}\nPlay to win: {STRATEGIES[role]}\n"
        "When you speak, talk like a person at a table: short and plain. Answer only with the JSON asked for."
    )


def utterance(tool: ToolSpec, args: dict[str, Any], rng: random.Random) -> str:
    """What the person says for a tool call: one phrase picked by ``rng`` per choice.

    Seats are said as "player <number word>"; an abstention and "no poison" are said
    explicitly, since the judge never reads silence or vagueness as either.
    """
    if tool.name == tools.SPEAK:
        return args["text"]
    if tool.name == tools.WITCH_ACT:
        parts = []
        if "save" in args:
            parts.append(_SAVE[bool(args["save"])])
        if "poison" in args:
            p = args["poison"]
            parts.append(f"I poison player {_WORDS[int(p[1:])]}." if p else "No poison.")
        return " ".join(parts)
    target = args["target"]
    if target == tools.ABSTAIN:
        return rng.choice(_ABSTAIN)
    return rng.choice(_PHRASES[tool.name]).format(n=_WORDS[int(target[1:])])


class SimulatedUserSeat:
    """The agent of the simulated user seat (see the module docstring).

    ``audio_dir``: where each spoken attempt is saved as a WAV (None: not saved).
    ``synth`` and ``asr`` None: the seat types (its utterance is its transcript).
    """

    def __init__(
        self,
        seat: str,
        llm: TurnLLM,
        synth: PiperSynth | None,
        style: VoiceStyle,
        asr: WhisperASR | None,
        seed: int,
        audio_dir: Path | None = None,
    ):
        self.seat = seat
        self.llm = llm
        self.synth = synth
        self.style = style
        self.asr = asr
        self.audio_dir = audio_dir
        self._rng = random.Random(seed)

    async def run(self, bus: Bus, sub: Subscription) -> None:
        """Serve turns from ``sub`` until it closes or the task is cancelled.

        Raises:
            SeatError: the LLM gave no usable answer.
        """
        async for env in sub:
            p: TurnPayload = env.payload
            tool = ToolSpec.from_json(p.tool)
            instruction = p.instruction
            if p.attempt:
                instruction = "Your last answer was not understood. Answer again.\n" + instruction
            args = await self.llm.call(p.view, instruction, tool, round=p.round, phase=p.phase, attempt=p.attempt)
            said = utterance(tool, args, self._rng)
            if self.synth is None or self.asr is None:
                transcript = said
            else:
                transcript = await asyncio.to_thread(
                    self._say_and_hear, said, f"{p.phase}{p.round}-{tool.name}-{p.attempt}"
                )
            log.info("user seat %s: tool %s %s, said %r, heard %r", self.seat, tool.name, args, said, transcript)
            await bus.publish(
                env.reply(
                    ACTION,
                    ActionPayload(
                        game_id=p.game_id,
                        seat=self.seat,
                        tool=tool.name,
                        arguments=args,
                        transcript=transcript,
                        utterance=said,
                    ),
                )
            )

    def _say_and_hear(self, text: str, name: str) -> str:
        """Piper → 16 kHz → Whisper: the transcript of ``text`` as spoken (blocking)."""
        audio = self.synth.synthesize(text, self.style)
        if self.audio_dir is not None:
            write_wav(self.audio_dir / f"{self.seat}-{name}.wav", audio, self.synth.sample_rate_hz)
        pcm16k = resample(audio, self.synth.sample_rate_hz, SAMPLE_RATE_HZ).astype(np.float32) / 32768.0
        return self.asr.transcribe(pcm16k).text


@dataclass
class SimulatedUser:
    """The simulated person as :func:`~appliance.werewolf.game.play_game`'s user seat
    (a :class:`~appliance.werewolf.game.UserSeat`).

    ``voice``: ``"audio"`` — it speaks through the runtime's Piper → Whisper, in the voice
    book's ``user_sim`` style (``werewolf.voices``); ``"text"`` — it types (its utterance
    is the transcript, through the same parser).
    """

    runtime: VoiceRuntime
    cfg: Config
    voice: Literal["audio", "text"] = "audio"
    recorded: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.recorded = {"user": "sim", "user_voice": self.voice}

    def system_prompt(self, seat: str, role: Role, n_seats: int) -> str:
        return system_prompt(seat, role, n_seats)

    def agent(self, seat: str, llm: TurnLLM, seed: int, audio_dir: Path) -> SeatAgent:
        style = voices.load(self.cfg.werewolf.voices).user_sim
        if self.voice == "text":
            return SimulatedUserSeat(seat, llm, None, style, None, seed)
        return SimulatedUserSeat(seat, llm, self.runtime.synth, style, self.runtime.asr, seed, audio_dir)


def run_game(
    cfg: Config, seed: int, n_seats: int | None = None, trace_dir: Path | None = None, ai_voices: bool = False
) -> tuple[GameResult, GameState, Path]:
    """Play one simulated game with the embedded models; returns the result, the final
    state and the recording folder. Blocking (runs its own event loop).

    ``n_seats`` defaults to ``cfg.werewolf.seats``. ``duration_s`` covers everything from
    loading the models to the isolation audit.

    Raises:
        ConfigError: ``n_seats`` is outside 6–8, or ``tts.provider`` is not piper.
        ModelError: a model file is missing.
        LLMError: the embedded LLM did not come up.
        SeatError, BusTimeoutError, IllegalAction: a seat failed (see :meth:`Judge.play`).
    """
    return asyncio.run(_run_game(cfg, seed, n_seats or cfg.werewolf.seats, trace_dir, ai_voices))


async def _run_game(
    cfg: Config, seed: int, n_seats: int, trace_dir: Path | None, ai_voices: bool
) -> tuple[GameResult, GameState, Path]:
    t0 = time.monotonic()
    cfg = cfg.for_werewolf(n_seats)
    if cfg.tts.provider != "piper":
        raise ConfigError("werewolf --user sim: the simulated user speaks with Piper; set tts.provider: piper")
    runtime = VoiceRuntime(cfg)
    try:
        await asyncio.to_thread(runtime.start)
        log.info("werewolf: models ready in %.1f s", time.monotonic() - t0)
        run = await play_game(
            runtime, cfg, seed, n_seats, SimulatedUser(runtime, cfg), trace_dir=trace_dir, ai_voices=ai_voices, t0=t0
        )
    finally:
        runtime.stop()
    return run.result, run.final, run.folder
