"""Werewolf with a human at the user seat: the ``werewolf`` mode of the voice server.

``appliance werewolf --user human`` serves the page; its "Werewolf" card connects with
``{"mode": "werewolf", "seats": N, "seed": S}`` in the offer. The session's voice
pipeline gets a :class:`~appliance.voice.line.LineProcessor` in the LLM's place and
:func:`play_on_line` runs one :class:`~appliance.werewolf.game.Judge` game on it: the AI
seats use the server's LLM; the user seat is a :class:`HumanSeat`, which on each turn
asks the question and takes the person's next final transcript. The judge applies only
that transcript, through the same fail-closed parser as the simulated user (there is no
tool call to compare with): what does not parse to a legal action is asked again, up to
``werewolf.asr_retry_limit`` times, then the game stops ``failed_closed``. VAD and
barge-in are the pipeline's: the person may answer while the question is still said.

**A table you can hear.** Everything the user seat's view gains is said on the line as
it happens (:class:`~appliance.werewolf.table_voice.TableVoice`): each AI seat's speech
as its own utterance in the seat's own voice (``voices/werewolf.yaml``) as soon as it is
made, every other line (dawn, ballots, the seat's own results) and the questions in the
narrator's voice; the person's question waits for what was queued before it.

**A table you can follow.** The seat listens all the time, not only on its turn: a final
transcript that asks for a recap ("what happened last night?", "who voted for whom?",
:func:`appliance.judge.recap.request`) is answered on the line in the narrator's voice,
from the seat's own view only (:func:`appliance.judge.recap.answer`), and never given to
the judge as speech or a move; asked during the seat's own move, the move goes on
listening and no attempt is counted. Any other talk outside the move answers nothing.

The page draws the table from these session events, all built from the user seat's own
view (events whose audience includes it, plus the public seats / alive / phase):

- ``ww_table`` ``{seat, role, seats, alive, dead, phase, round}`` whenever one of them changes;
- ``ww_speaker`` ``{seat, phase}``: whose public turn it is (day speech and votes; at
  night only the user's own turn is named, since who acts at night is private);
- ``ww_caption`` ``{seat, text}``: a seat's public speech (the user's own is its transcript);
- ``ww_claim`` ``{seat, text}``: what that speech claims, in a few words
  (:func:`appliance.judge.claims.summary`), when it claims anything: the seat's card shows its last;
- ``ww_ballots`` ``{round, votes}``: every ballot of the vote (voter → seat, None: abstained),
  once all are in and the judge reveals them (never a ballot before);
- ``ww_recap`` ``{question, kind, text}``: the person asked ``question`` and was answered ``text``;
- ``ww_playing`` ``{seat, text, voice}``: that speech is being heard now, in the seat's voice;
- ``ww_log`` ``{text}``: any other line of the seat's view (deaths, ballots, its own checks);
- ``ww_ask`` ``{tool, question, attempt}``: the question was spoken, the seat listens;
- ``ww_heard`` ``{transcript, attempt}`` / ``ww_retry`` ``{attempt}`` / ``ww_applied`` ``{action}``;
- ``ww_over`` ``{status, winner, roles, complete_rounds}`` (roles only once the game is over).

When the user seat dies before the game ends, the line tells the person once (it gets no
more turns); the page keeps showing the table.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Callable

from appliance.bus import Bus, Subscription, open_bus
from appliance.config import Config, WerewolfConfig
from appliance.judge import claims, events, recap, rules, tools, views
from appliance.judge.state import GameState, Phase
from appliance.judge.tools import ToolSpec
from appliance.judge.views import SeatView
from appliance.protocol import Emit
from appliance.protocol.werewolf import TURN, ActionPayload, TurnPayload
from appliance.voice.session import recording_notice
from appliance.werewolf import voices
from appliance.werewolf.game import Judge, _first
from appliance.werewolf.seats import AISeat, SeatLLM, system_prompt
from appliance.werewolf.table_voice import TableVoice, spoken
from appliance.werewolf.trace import Tracer

log = logging.getLogger(__name__)

#: a person is slower than a model: the judge waits at least this long for the user seat
HUMAN_TURN_TIMEOUT_S = 600.0


def question(tool: ToolSpec, round_: int) -> str:
    """The spoken question for the user seat's turn, with how to answer."""
    choices = _or(tool.targets)
    if tool.name == tools.NIGHT_KILL:
        return f"Night {round_}. Choose a player to attack: {choices}. Say attack player, and the number."
    if tool.name == tools.SEER_CHECK:
        return f"Night {round_}. Choose a player to check: {choices}."
    if tool.name == tools.WITCH_ACT:
        parts = [f"Night {round_}. Your potions."]
        if tool.victim is not None:
            parts.append(f"The werewolves attacked {tool.victim}. Say I save, or no save.")
        if tool.can_poison:
            parts.append(f"Then say poison player and a number, from {choices}; or no poison.")
        return " ".join(parts)
    if tool.name == tools.SPEAK:
        return f"Day {round_}. Your turn to speak to the table."
    return f"Vote {round_}. Vote for {choices}, or say I abstain."


def _or(seats: tuple[str, ...]) -> str:
    s = list(seats)
    return s[0] if len(s) == 1 else ", ".join(s[:-1]) + " or " + s[-1]


class HumanSeat:
    """The user seat played by a person through the voice line.

    Listens to ``line`` for as long as it runs. On each ``werewolf_turn`` it asks the
    question on ``table`` (after whatever the table still has to say), then replies with
    the person's next transcript (never a tool call: the judge applies only what it can
    parse from the transcript). A transcript that asks for a recap is answered on
    ``table`` from :attr:`view` instead, whenever it comes (see the module docstring).
    ``table`` defaults to one on ``line`` with the default voices.
    """

    def __init__(self, seat: str, line, emit: Emit, table: TableVoice | None = None):
        self.seat = seat
        self.line = line
        self.emit = emit
        self.table = table or TableVoice(line, voices.load(WerewolfConfig().voices), emit)
        #: the seat's own view as the judge last showed it (:meth:`see`); None before the game
        self.view: SeatView | None = None
        self._move: asyncio.Queue[str] | None = None  # open while a question waits for its answer

    def see(self, view: SeatView) -> None:
        """The seat's own view changed: recaps answer from ``view`` from now on."""
        self.view = view

    async def run(self, bus: Bus, sub: Subscription) -> None:
        async with asyncio.TaskGroup() as tg:
            ear = tg.create_task(self._listen(), name=f"werewolf-{self.seat}-ear")
            async for env in sub:
                await self._turn(bus, env)
            ear.cancel()

    async def _turn(self, bus: Bus, env) -> None:
        p: TurnPayload = env.payload
        tool = ToolSpec.from_json(p.tool)
        ask = question(tool, p.round)
        await self.table.drain()
        phase = ask.split(". ", 1)[0] + "."
        if self.table.last == phase:  # "Night 1." was just said: not twice
            ask = ask.split(". ", 1)[1]
        if p.attempt:
            ask = "Sorry, I could not take a legal choice from that. " + ask
        self.emit("ww_speaker", seat=self.seat, phase=p.phase)
        self._move = asyncio.Queue()  # talk before the question answers nothing; barge-in during it does
        try:
            await self.table.say(ask)
            self.emit("ww_ask", tool=tool.name, question=question(tool, p.round), attempt=p.attempt)
            heard = await self._move.get()
        finally:
            self._move = None
        self.emit("ww_heard", transcript=heard, attempt=p.attempt)
        await bus.publish(env.reply(ActionPayload(game_id=p.game_id, seat=self.seat, tool=tool.name, transcript=heard)))

    async def _listen(self) -> None:
        """Each final transcript: a recap question is answered; anything else goes to the
        open move, or answers nothing when no move is open."""
        while True:
            heard = await self.line.hear()
            asked = recap.request(heard)
            if asked is not None:
                text = recap.answer(asked, self.view) if self.view is not None else "The game has not begun yet."
                self.emit("ww_recap", question=heard, kind=asked.kind, text=text)
                self.table.announce(text)
            elif self._move is not None:
                self._move.put_nowait(heard)
            else:
                log.info("werewolf: %r answers no question: not taken", heard)


class TableJudge(Judge):
    """A :class:`Judge` that also shows the user seat's table on the page and says it on
    ``table`` as it happens (its own view only)."""

    emit: Emit = staticmethod(lambda *a, **k: None)
    table: TableVoice | None = None
    #: called once when the user seat has died (it gets no more turns, so nothing else tells it)
    on_user_out: Callable[[list[str]], None] | None = None
    #: called with the user seat's view whenever it grows (the recaps answer from it)
    on_view: Callable[[SeatView], None] | None = None
    _out_told: bool = False
    _table: dict | None = None

    def _log_events(self) -> None:
        new = self.state.events[self._logged :]
        super()._log_events()
        seat = self.state.user_seat
        mine = [e for e in new if e.visible_to(seat)]
        for e in mine:
            match e.what:
                case events.Speech(seat=speaker, text=text):
                    self.emit("ww_caption", seat=speaker, text=text)
                    if said := claims.read(speaker, text, e.round):
                        self.emit("ww_claim", seat=speaker, text=claims.summary(said))
                    if self.table is not None and speaker != seat:
                        self.table.speech(speaker, text)
                    continue
                case events.Table() | events.RoleAssigned() | events.PhaseBegan():
                    line = views.render_event(e)  # on the page through ww_table
                case events.Votes(votes=ballots):  # public only now that every ballot is in
                    line = views.render_event(e)
                    self.emit("ww_log", text=line)
                    self.emit("ww_ballots", round=e.round, votes=dict(ballots))
                case _:
                    line = views.render_event(e)
                    self.emit("ww_log", text=line)
            if self.table is not None:
                self.table.announce(spoken(line))
        if mine and self.on_view is not None:
            self.on_view(views.view(self.state, seat))
        now = table(self.state)
        if mine and now != self._table:  # only when the seat's table changed
            self._table = now
            self.emit("ww_table", **now)
        if seat not in self.state.alive and not self._out_told and self.state.phase is not Phase.OVER:
            self._out_told = True
            if self.on_user_out is not None:
                self.on_user_out(
                    [views.render_event(e) for e in mine if isinstance(e.what, (events.Deaths, events.Eliminated))]
                )

    async def _ask(self, turn: rules.Turn, attempt: int):
        if turn.tool.name in (tools.SPEAK, tools.VOTE) and turn.seat != self.state.user_seat:
            self.emit("ww_speaker", seat=turn.seat, phase=self.state.phase.value)
        elif turn.seat != self.state.user_seat:
            self.emit("ww_speaker", seat=None, phase=self.state.phase.value)
        if attempt:
            self.emit("ww_retry", attempt=attempt)
        return await super()._ask(turn, attempt)

    async def _user_action(self, turn: rules.Turn):
        action = await super()._user_action(turn)
        if action is not None:
            self.emit("ww_applied", tool=turn.tool.name, action=turn.tool.arguments(action))
        return action


def table(state: GameState) -> dict[str, Any]:
    """The ``ww_table`` fields: the user seat's own view of the public table."""
    v = views.view(state, state.user_seat)
    return {
        "seat": v.seat,
        "role": v.role.value,
        "seats": list(state.seats),
        "alive": list(v.alive),
        "dead": list(v.dead),
        "phase": v.phase.value,
        "round": v.round,
    }


async def run_table(
    bus: Bus,
    state: GameState,
    agents: dict[str, Any],
    emit: Emit,
    game_id: str,
    retry_limit: int,
    turn_timeout_s: float,
    on_user_out: Callable[[list[str]], None] | None = None,
    table: TableVoice | None = None,
    on_view: Callable[[SeatView], None] | None = None,
) -> TableJudge:
    """Play ``state`` to the end (or fail closed) with ``agents`` (seat → object with
    ``run(bus, sub)``) on a started ``bus``; returns the judge (``judge.state`` is final).
    ``table``: where the user seat's view is said as it happens (None: nowhere);
    ``on_view``: called with the user seat's view whenever it grows (:meth:`HumanSeat.see`).

    Raises:
        SeatError, BusTimeoutError, IllegalAction: a seat failed (see :meth:`Judge.play`).
    """
    subs = {seat: bus.subscribe(seat, types=[TURN]) for seat in state.seats}
    judge = TableJudge(bus, state, game_id, retry_limit, turn_timeout_s)
    judge.emit = emit
    judge.on_user_out = on_user_out
    judge.table = table
    judge.on_view = on_view
    try:
        async with asyncio.TaskGroup() as tg:
            seat_tasks = [tg.create_task(agents[s].run(bus, subs[s]), name=f"werewolf-{s}") for s in state.seats]
            await judge.play()
            for t in seat_tasks:
                t.cancel()
    except ExceptionGroup as eg:  # the first failure (a seat or the judge) is the cause
        raise _first(eg) from eg
    return judge


async def play_on_line(cfg: Config, runtime, line, emit: Emit, *, seats: int, seed: int, folder=None) -> dict:
    """Play one game with the user seat on ``line``; returns the ``ww_over`` fields.

    ``runtime``: a started :class:`~appliance.voice.runtime.VoiceRuntime` whose config has
    a slot per seat (:meth:`~appliance.config.Config.for_werewolf_page`).

    Raises:
        ValueError: the runtime has no LLM slot for one of the seats.
        SeatError, BusTimeoutError, IllegalAction: an AI seat failed (see :meth:`Judge.play`).
    """
    ww = cfg.werewolf
    state = rules.new_game(seed, seats)
    user = state.user_seat
    tracer = Tracer(folder / "werewolf-trace" if folder is not None else None)
    game_id = f"werewolf-seed{seed}-n{seats}"
    emit("ww_started", seat=user, role=state.role(user).value, seats=list(state.seats), seed=seed)
    table = TableVoice(line, voices.load(ww.voices), emit)
    if folder is not None:  # before anything of the person's is stored (issue 30)
        await table.say(recording_notice(True))
    human = HumanSeat(user, line, emit, table)
    agents: dict[str, Any] = {user: human}
    for seat in state.seats:
        if seat != user:
            role = state.role(seat)
            agents[seat] = AISeat(
                seat,
                SeatLLM(
                    llm=runtime.llm(seat),
                    seat=seat,
                    role=role,
                    cfg=ww,
                    tracer=tracer,
                    seed=seed,
                    system=system_prompt(seat, role, seats),
                ),
            )

    def user_out(lines: list[str]) -> None:
        table.announce("You are out of the game. It goes on without you: follow it on the page.")

    bus_cfg = cfg.with_bus_log_dir(folder).bus if folder is not None else cfg.bus
    if folder is not None:
        (folder / "werewolf.json").write_text(
            json.dumps({"seed": seed, "seats": seats, "user": "human", "game_id": game_id})
        )
    try:
        async with open_bus(bus_cfg, session=f"werewolf-bus-{seed}") as bus:
            judge = await run_table(
                bus,
                state,
                agents,
                emit,
                game_id,
                ww.asr_retry_limit,
                max(ww.turn_timeout_s, HUMAN_TURN_TIMEOUT_S),
                on_user_out=user_out,
                table=table,
                on_view=human.see,
            )
    except BaseException:
        await table.close(drain=False)
        raise
    finally:
        tracer.close()
    final = judge.state
    over = {
        "status": judge.status,
        "winner": final.winner.value if final.winner else None,
        "complete_rounds": final.complete_rounds,
        "roles": final.roles_by_seat(),
    }
    emit("ww_over", **over)
    try:
        if judge.status == "failed_closed":
            await table.say("I could not understand a legal choice, so the game stops here.")
        else:
            await table.say(f"Game over: the {over['winner']} win.")
    finally:
        await table.close()
    return over


def _int(value, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


async def install(server):
    """Register the ``werewolf`` mode on ``server`` (a VoiceServer)."""
    import random

    async def werewolf_mode(srv, pc_id: str, session, line, body: dict) -> None:
        seats = _int(body.get("seats"), srv.cfg.werewolf.seats)
        seed = _int(body.get("seed"), random.randrange(1 << 31))
        await play_on_line(
            srv.cfg, srv.runtime, line, session.events.emit, seats=seats, seed=seed, folder=session.folder
        )

    server.modes["werewolf"] = werewolf_mode
    server.info["werewolf"] = {"seats": server.cfg.werewolf.seats}
    return None
