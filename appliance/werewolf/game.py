"""One game of Werewolf on the bus: the judge, the seats, the recording and the result.

The :class:`Judge` owns the state and talks to seats only through addressed envelopes
(recipient = seat id): a ``werewolf_view`` after every phase change and a
``werewolf_turn`` (view + the one legal tool) whenever a seat must act. An AI seat's
answer is applied after the tool checks it. The user seat's answer is applied only from
its **transcript**: it must parse to a legal action (:mod:`appliance.judge.transcript`)
and, when the seat also sent its tool call (the simulated user), equal it. Otherwise the
action is not applied and the seat is asked again, at most ``werewolf.asr_retry_limit``
times; then the game stops with status ``failed_closed``.

``asr_checks`` counts the user seat's attempts: ``matched`` (applied), ``mismatched``
(a transcript that did not parse or differed from the tool call) and ``failed_closed``
(actions given up on after the last retry; the game stops at the first).

:func:`play_game` plays one game on a started :class:`~appliance.voice.runtime.VoiceRuntime`
(Whisper, Piper, and one LLM slot per seat) with the :class:`UserSeat` it is handed
(the simulated person: :class:`appliance.simulate.werewolf_user.SimulatedUser`) and records it
under ``<recording.dir>/werewolf/<time>-seed<S>-n<N>/``: ``config.json``,
``events.jsonl`` (every judge event with its audience), ``bus.jsonl`` (every envelope),
``trace/`` (every seat prompt, unless ``--trace`` points elsewhere), ``audio/`` (the
user seat's spoken attempts; AI speeches too with ``ai_voices``) and ``result.json``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from appliance.bus import Bus, Envelope, Subscription, open_bus
from appliance.config import Config
from appliance.judge import events, isolation, rules, tools, views
from appliance.judge.state import Action, GameState, IllegalAction, Phase, Role
from appliance.judge.transcript import TranscriptRejected, parse
from appliance.protocol.werewolf import ACTION, JUDGE, TURN, ActionPayload, SeatViewPayload, TurnPayload
from appliance.voice.runtime import VoiceRuntime
from appliance.werewolf import voices
from appliance.werewolf.seats import AISeat, SeatLLM, Speech, system_prompt
from appliance.werewolf.trace import Tracer

log = logging.getLogger(__name__)


@dataclass
class AsrChecks:
    matched: int = 0
    mismatched: int = 0
    failed_closed: int = 0


@dataclass
class GameResult:
    """The outcome, printed by ``appliance werewolf --json`` in this key order."""

    status: str  # "finished" | "failed_closed"
    winner: str | None  # "villagers" | "werewolves" | None
    complete_rounds: int
    roles: dict[str, str]
    user_seat: str
    asr_checks: AsrChecks
    isolation_violations: int
    duration_s: float

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "winner": self.winner,
            "complete_rounds": self.complete_rounds,
            "roles": self.roles,
            "user_seat": self.user_seat,
            "asr_checks": {
                "matched": self.asr_checks.matched,
                "mismatched": self.asr_checks.mismatched,
                "failed_closed": self.asr_checks.failed_closed,
            },
            "isolation_violations": self.isolation_violations,
            "duration_s": self.duration_s,
        }


@dataclass
class Judge:
    """Drives the pure rules over the bus (see the module docstring).

    ``sent`` collects ``(seat, text)`` for every view and turn sent, for the isolation
    audit; ``events_out`` (optional) receives each judge event as a JSON line.
    """

    bus: Bus
    state: GameState
    game_id: str
    retry_limit: int
    turn_timeout_s: float
    events_out: IO[str] | None = None
    checks: AsrChecks = field(default_factory=AsrChecks)
    sent: list[tuple[str, str]] = field(default_factory=list)
    status: str = "running"
    _logged: int = 0

    async def play(self) -> GameState:
        """Play until the game is over or the user seat fails closed; returns the final state.

        Raises:
            BusTimeoutError: a seat did not answer within ``turn_timeout_s``.
            IllegalAction: an AI seat's tool call was illegal (never replaced by a guess).
        """
        self._log_events()
        await self._send_views()
        while self.state.phase is not Phase.OVER:
            turn = rules.next_turn(self.state)
            if turn is None:
                self.state = rules.advance(self.state)
                self._log_events()
                await self._send_views()
                continue
            if turn.seat == self.state.user_seat:
                action = await self._user_action(turn)
                if action is None:
                    self.status = "failed_closed"
                    return self.state
            else:
                action = turn.tool.to_action((await self._ask(turn, 0)).arguments or {})
            self.state = rules.act(self.state, turn.seat, action)
            self._log_events()
        self.status = "finished"
        return self.state

    async def _ask(self, turn: rules.Turn, attempt: int) -> ActionPayload:
        """Send ``turn`` to its seat and return the seat's action.

        Raises:
            BusTimeoutError: no answer within ``turn_timeout_s``.
            IllegalAction: the seat answered with something other than ``werewolf_action``.
        """
        v = views.view(self.state, turn.seat)
        lines = v.lines()
        instruction = views.instruction(turn, self.state.round)
        self.sent.append((turn.seat, "\n".join([*lines, instruction])))
        env = Envelope.new(
            TurnPayload(
                game_id=self.game_id,
                round=self.state.round,
                phase=self.state.phase.value,
                view=tuple(lines),
                instruction=instruction,
                tool=turn.tool.to_json(),
                attempt=attempt,
            ),
            sender=JUDGE,
            recipient=turn.seat,
            task_id=self.game_id,
        )
        reply = await self.bus.request(env, self.turn_timeout_s)
        if not isinstance(reply.payload, ActionPayload):
            raise IllegalAction(f"{turn.seat} answered its {turn.tool.name} turn with {reply.type}, not {ACTION}")
        return reply.payload

    async def _user_action(self, turn: rules.Turn) -> Action | None:
        for attempt in range(self.retry_limit + 1):
            p = await self._ask(turn, attempt)
            try:
                heard = parse(p.transcript or "", turn.tool)
                meant = turn.tool.to_action(p.arguments) if p.arguments is not None else None
            except TranscriptRejected as e:
                self.checks.mismatched += 1
                log.warning("user seat %s, attempt %d: not applied: %s", turn.seat, attempt + 1, e)
                continue
            if meant is not None and turn.tool.name != tools.SPEAK and heard != meant:
                self.checks.mismatched += 1
                log.warning(
                    "user seat %s, attempt %d: transcript %r gives %s but the tool call was %s; not applied",
                    turn.seat,
                    attempt + 1,
                    p.transcript,
                    heard,
                    meant,
                )
                continue
            self.checks.matched += 1
            return heard
        self.checks.failed_closed += 1
        log.error(
            "user seat %s: no matching action after %d attempts: the game fails closed", turn.seat, self.retry_limit + 1
        )
        return None

    async def _send_views(self) -> None:
        for seat in self.state.seats:
            v = views.view(self.state, seat)
            self.sent.append((seat, "\n".join(v.lines())))
            await self.bus.publish(
                Envelope.new(
                    SeatViewPayload(game_id=self.game_id, view=v.to_json()),
                    sender=JUDGE,
                    recipient=seat,
                    task_id=self.game_id,
                )
            )

    def _log_events(self) -> None:
        if self.events_out is not None:
            for e in self.state.events[self._logged :]:
                self.events_out.write(json.dumps(e.to_json(), ensure_ascii=False) + "\n")
            self.events_out.flush()
        self._logged = len(self.state.events)


def _first(eg: BaseExceptionGroup) -> BaseException:
    e: BaseException = eg
    while isinstance(e, BaseExceptionGroup):
        e = e.exceptions[0]
    return e


def game_dir(cfg: Config, seed: int, n_seats: int) -> Path:
    """A new recording folder for one game."""
    root = Path(cfg.recording.dir).expanduser() / "werewolf"
    d = root / f"{time.strftime('%Y%m%d-%H%M%S')}-seed{seed}-n{n_seats}"
    n = 1
    while d.exists():
        n += 1
        d = root / f"{time.strftime('%Y%m%d-%H%M%S')}-seed{seed}-n{n_seats}-{n}"
    d.mkdir(parents=True)
    return d


@dataclass
class GameRun:
    """One game played by :func:`play_game`: the result, the final state, its recording
    folder, the AI seats' speeches (:class:`~appliance.werewolf.seats.Speech`, in order)
    and ``play_s``, the seconds from the first turn to the end (models already loaded)."""

    result: GameResult
    final: GameState
    folder: Path
    speeches: list[Speech]
    play_s: float


class SeatAgent(Protocol):
    """A seat's agent: serves the ``werewolf_turn`` envelopes of its subscription."""

    async def run(self, bus: Bus, sub: Subscription) -> None:
        """Answer each turn on ``bus`` until ``sub`` closes or the task is cancelled."""


class UserSeat(Protocol):
    """Who plays the user seat in :func:`play_game`.

    ``recorded``: what ``config.json`` says of it (e.g. ``{"user": "sim", "user_voice": "audio"}``).
    """

    recorded: dict[str, str]

    def system_prompt(self, seat: str, role: Role, n_seats: int) -> str:
        """The user seat's own system prompt (its LLM slot is its own)."""

    def agent(self, seat: str, llm: SeatLLM, seed: int, audio_dir: Path) -> SeatAgent:
        """The seat's agent; ``audio_dir``: where spoken attempts are saved."""


async def play_game(
    runtime: VoiceRuntime,
    cfg: Config,
    seed: int,
    n_seats: int,
    user: UserSeat,
    *,
    trace_dir: Path | None = None,
    ai_voices: bool = False,
    t0: float | None = None,
) -> GameRun:
    """Play one simulated game on a started ``runtime`` (sized by ``cfg.for_werewolf(n_seats)``)
    and record it (see the module docstring).

    ``user``: plays the user seat (its answers pass the transcript check, see the module docstring).
    ``t0``: the monotonic time ``duration_s`` counts from (default: now).
    The isolation audit covers every view and prompt sent and every AI speech
    (:func:`appliance.judge.isolation.speech_leaks`).

    Raises:
        SeatError, BusTimeoutError, IllegalAction: a seat failed (see :meth:`Judge.play`).
    """
    t0 = time.monotonic() if t0 is None else t0
    ww = cfg.werewolf
    state = rules.new_game(seed, n_seats)
    folder = game_dir(cfg, seed, n_seats)
    (folder / "config.json").write_text(
        json.dumps(
            {
                "seed": seed,
                "seats": n_seats,
                **user.recorded,
                "ai_voices": ai_voices,
                "llm": runtime.describe_llm(state.seats[0]),
                "config": cfg.model_dump(mode="json"),
            },
            indent=2,
        )
    )
    book = voices.load(ww.voices)
    tracer = Tracer(trace_dir or folder / "trace")
    log.info(
        "werewolf: seed %d, %d seats, user seat %s (%s)",
        seed,
        n_seats,
        state.user_seat,
        state.role(state.user_seat).value,
    )
    audio = folder / "audio"
    agents: dict[str, SeatAgent] = {}
    for seat in state.seats:
        role = state.role(seat)
        is_user = seat == state.user_seat
        llm = SeatLLM(
            llm=runtime.llm(seat),
            seat=seat,
            role=role,
            cfg=ww,
            tracer=tracer,
            seed=seed,
            system=(user.system_prompt if is_user else system_prompt)(seat, role, n_seats),
        )
        if is_user:
            agents[seat] = user.agent(seat, llm, seed, audio)
        else:
            agents[seat] = AISeat(seat, llm, (runtime.synth, book.seats[seat], audio) if ai_voices else None)
    bus_cfg = cfg.with_bus_log_dir(folder).bus
    t_play = time.monotonic()
    try:
        with open(folder / "events.jsonl", "w", encoding="utf-8") as events_out:
            async with open_bus(bus_cfg, session="bus") as bus:
                subs = {seat: bus.subscribe(seat, types=[TURN]) for seat in state.seats}
                judge = Judge(bus, state, folder.name, ww.asr_retry_limit, ww.turn_timeout_s, events_out)
                try:
                    async with asyncio.TaskGroup() as tg:
                        seat_tasks = [
                            tg.create_task(agents[s].run(bus, subs[s]), name=f"werewolf-{s}") for s in state.seats
                        ]
                        final = await tg.create_task(judge.play(), name="werewolf-judge")
                        for t in seat_tasks:
                            t.cancel()
                except ExceptionGroup as eg:  # the first failure (a seat or the judge) is the cause
                    raise _first(eg) from eg
    finally:
        tracer.close()
    play_s = time.monotonic() - t_play
    user_prompts, system_prompts = tracer.prompts()
    n_bad, bad = isolation.count_violations(judge.sent + user_prompts, final, static=system_prompts)
    for seat, sentence in bad:
        log.error("isolation violation: %s received %r", seat, sentence)
    leaks = isolation.speech_leaks(final)
    for seat, round_, text, why in leaks:
        log.error("isolation violation: %s said %r on day %d (%s)", seat, text, round_, why)
    result = GameResult(
        status=judge.status,
        winner=final.winner.value if final.winner else None,
        complete_rounds=final.complete_rounds,
        roles=final.roles_by_seat(),
        user_seat=final.user_seat,
        asr_checks=judge.checks,
        isolation_violations=n_bad + len(leaks),
        duration_s=round(time.monotonic() - t0, 1),
    )
    (folder / "result.json").write_text(json.dumps(result.to_json(), indent=2))
    speeches = [sp for seat in state.seats if isinstance(agents[seat], AISeat) for sp in agents[seat].speeches]
    speeches.sort(key=lambda sp: (sp.round, _speech_order(final, sp)))
    log.info(
        "werewolf: %s, winner %s after %d rounds in %.1f s (%d of %d AI speeches from templates); recorded in %s",
        result.status,
        result.winner,
        result.complete_rounds,
        play_s,
        sum(1 for sp in speeches if sp.template),
        len(speeches),
        folder,
    )
    return GameRun(result, final, folder, speeches, round(play_s, 1))


def _speech_order(final: GameState, sp: Speech) -> int:
    """Where ``sp`` stands among the game's events (its speech event's index)."""
    return next(
        (
            i
            for i, e in enumerate(final.events)
            if isinstance(e.what, events.Speech) and e.round == sp.round and e.what.seat == sp.seat
        ),
        len(final.events),
    )
