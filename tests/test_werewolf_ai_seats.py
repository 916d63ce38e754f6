"""AI seats on their own beliefs, with a scripted LLM (no model): the code strategy picks
every night action and vote, the LLM only words the speech, and what it may say is
checked — over 1,000 seeded games against an LLM that tries to leak private facts."""

from __future__ import annotations

import json
import re
import time

from fakes import ScriptedLLM
from judge_helpers import ROLES_8, offered_cites, opening_of, partner_ballots, scripted

from appliance import config
from appliance.judge import claims, grounding, isolation, views
from appliance.judge.events import Speech, VoteCast
from appliance.judge.rules import act, advance, new_game, next_turn
from appliance.judge.state import NightKill, Phase, Role, SeerCheck, Vote, WitchAct
from appliance.llm.base import LLMError, Reply
from appliance.protocol.werewolf import TurnPayload
from appliance.werewolf.seats import AISeat, SeatLLM, system_prompt
from appliance.werewolf.trace import Tracer

NIGHT_1 = (
    ("P1", NightKill("P5")),
    ("P2", NightKill("P5")),
    ("P3", SeerCheck("P2")),
    ("P4", WitchAct(save=True, poison=None)),
)


def payload(state, attempt: int = 0) -> TurnPayload:
    """The ``werewolf_turn`` the judge would send for the state's next turn."""
    turn = next_turn(state)
    return TurnPayload(
        game_id="g",
        round=state.round,
        phase=state.phase.value,
        view=tuple(views.view(state, turn.seat).lines()),
        instruction=views.instruction(turn, state.round),
        tool=turn.tool.to_json(),
        attempt=attempt,
    )


def ai_seat(seat: str, role: Role, llm, seed: int = 7, n_seats: int = 8) -> AISeat:
    return AISeat(
        seat,
        SeatLLM(
            llm=llm,
            seat=seat,
            role=role,
            system=system_prompt(seat, role, n_seats),
            cfg=config.Config().werewolf,
            tracer=Tracer(None),
            seed=seed,
        ),
    )


class WordingLLM(ScriptedLLM):
    """A seat's LLM that words every position the same way: the grammar's forced
    opening, then ``tail``, citing the first fact offered. ``requests``: (user prompt,
    grammar) of each request."""

    def __init__(self, tail: str):
        super().__init__()
        self.tail = tail
        self.requests: list[tuple[str, str]] = []

    async def complete(self, system: str, user: str, *, grammar: str, **options) -> Reply:
        self.requests.append((user, grammar))
        args = {"text": opening_of(grammar) + self.tail, "cites": offered_cites(grammar)[:1]}
        return Reply(json.dumps(args), None, None, None, 0)


async def test_seer_with_a_found_wolf_accuses_it_the_next_day_through_the_ai_seat():
    s = scripted(*NIGHT_1, ("P1", "I suspect P6."), ("P2", "I suspect P6."))
    llm = WordingLLM("Vote them out today.")
    seat = ai_seat("P3", Role.SEER, llm)
    args = await seat.answer(payload(s))
    said = claims.read("P3", args["text"], 1)
    assert claims.Claim(1, "P3", claims.SEER) in said and claims.Claim(1, "P3", claims.WOLF, "P2", True) in said, args
    assert args["text"].endswith("Vote them out today.") and seat.templates == 0
    ((user, _),) = llm.requests
    brief = next(line for line in user.splitlines() if line.startswith("Your position today"))  # before the fact
    assert brief.startswith("Your position today: say you are the seer") and "Your check: P2 is a werewolf." in brief
    assert user.splitlines()[-1].startswith("Day 1: your turn to speak")

    # the LLM fails: the counted template says the same claim
    again = ai_seat("P3", Role.SEER, ScriptedLLM(json=[LLMError("server down")]))
    args = await again.answer(payload(s))
    said = claims.read("P3", args["text"], 1)
    assert claims.Claim(1, "P3", claims.WOLF, "P2", True) in said and again.templates == 1
    assert again.speeches[0].template == "P3: server down"

    # and she votes for it, without asking the LLM
    s = scripted(*NIGHT_1, *[(f"P{i}", "Hmm.") for i in range(1, 9)], ("P1", Vote("P6")), ("P2", Vote("P6")))
    voter = ai_seat("P3", Role.SEER, ScriptedLLM())
    assert await voter.answer(payload(s)) == {"target": "P2"}


async def test_words_that_do_not_conform_fall_back_to_the_template():
    s = scripted(*NIGHT_1, ("P1", "Hmm."), ("P2", "Hmm."))
    llm = ScriptedLLM(
        json=[
            {"text": "I suspect P6 because they are quiet.", "cites": []},
            {"text": "I trust everyone here.", "cites": []},
        ]
    )
    seat = ai_seat("P3", Role.SEER, llm)
    args = await seat.answer(payload(s))
    assert seat.speeches[0].template == "does not claim the seer" and not llm.unused["json"]  # asked twice
    assert "Your last words were not said: they does not claim the seer." in llm.calls[1].user  # with the reason
    assert llm.calls[0].options["seed"] != llm.calls[1].options["seed"]
    assert args["text"].startswith("I am the seer. My check found P2 is a werewolf.")
    cut = ai_seat("P3", Role.SEER, ScriptedLLM(json=["[not json"]))
    await cut.answer(payload(s))
    assert "not the speak tool's JSON" in cut.speeches[0].template


async def test_a_speech_citing_a_vote_that_never_happened_is_never_said():
    s = scripted(*NIGHT_1, ("P1", "Hmm."), ("P2", "Hmm."), ("P3", "Hmm."), ("P4", "I suspect P6."))
    lie = {
        "text": "I suspect P6 because they voted for P4.",
        "cites": [{"kind": "vote", "day": 1, "by": "P6", "target": "P4"}],
    }
    llm = ScriptedLLM(json=[lie, lie])
    seat = ai_seat("P5", Role.VILLAGER, llm)
    args = await seat.answer(payload(s))
    (speech,) = seat.speeches
    assert args["text"] != lie["text"] and speech.text == args["text"] and not llm.unused["json"]  # re-worded once
    assert speech.template == "cites a vote that never happened (vote on day 1 by P6 of P4)"
    assert speech.draft is not None and speech.draft.text == lie["text"]
    assert "they cites a vote that never happened" in llm.calls[1].user
    # the fallback is the template, citing a fact of the log that its words state
    assert grounding.cites_of(args) == speech.cites and speech.cites
    assert grounding.check("P5", args["text"], speech.cites, views.view(s, "P5").events, 1) is None


async def test_a_seats_beliefs_come_from_its_own_log_only():
    s = scripted(*NIGHT_1, ("P1", "Hmm."), ("P2", "Hmm."))
    seat = ai_seat("P3", Role.SEER, ScriptedLLM())
    b = seat.beliefs(payload(s))
    assert b.checks == ((1, "P2", True),) and b.team == ()
    wolf = ai_seat("P3", Role.SEER, ScriptedLLM())
    p = payload(s)
    other = p.model_copy(update={"view": tuple(views.view(s, "P1").lines())})  # P1's log, not P3's
    try:
        wolf.beliefs(other)
    except ValueError as e:
        assert "P3" in str(e)
    else:
        raise AssertionError("a seat read another seat's log")


# --- 1,000 seeded games with an adversarial LLM ----------------------------------------


class LeakyLLM(ScriptedLLM):
    """A seat's LLM that tries to leak what its seat knows — all of its log, even the
    private lines its prompt leaves out (``log[0]``, set before each turn): a werewolf names its
    partner ("player two"), clears a seat, tells the night's attack; the Witch tells the
    victim and her save; the Seer reveals her check without the claim; anyone names a
    seat that is not at the table. Every third speech is an honest wording of the
    position, so the LLM's words are also said. Votes and night actions never reach it."""

    def __init__(self, counter: list[int], log: list[tuple[str, ...]], prompts: list[tuple[str, str]] | None = None):
        super().__init__()
        self.counter = counter
        self.log = log
        self.prompts = prompts

    async def complete(self, system: str, user: str, *, grammar: str, **options):
        assert grammar.startswith('root ::= "{\\"cites\\":["'), "only speeches reach the LLM"
        self.counter[0] += 1
        n = self.counter[0]
        if self.prompts is not None:
            self.prompts.append((re.match(r"You are (P\d)", system).group(1), user))
        opening = opening_of(grammar)
        facts = "\n".join(self.log[0])
        team = re.search(r"^Werewolf team: (.*)\.$", facts, re.M)
        me = re.search(r"^You are (P\d), the (\w+)\.$", facts, re.M)
        victims = re.findall(r"The werewolves attack(?:ed)? (P\d) tonight\.", facts)
        checks = re.findall(r"Your check: (P\d) is (not )?a werewolf\.", facts)
        words = ["one", "two", "three", "four", "five", "six", "seven", "eight"]
        leak = "they sound off."
        if n % 3:
            if team:
                partner = next(s for s in team.group(1).split(", ") if s != me.group(1))
                table = re.search(r"^Table: (.*?)\. ", facts, re.M).group(1).split(", ")
                villager = next(s for s in table if s not in team.group(1))
                leak = [
                    f"player {words[int(partner[1:]) - 1]} and I know the truth.",
                    f"{villager} is innocent, trust me.",
                    f"we attacked {victims[-1] if victims else villager} last night.",
                    f"seat {partner[1:]} is on my side.",
                    "I am a werewolf.",
                ][n % 5]
            elif me.group(2) == "witch" and victims:
                leak = [f"{victims[0]} was attacked and I saved them.", "I still have my poison.", "I am the witch."][
                    n % 3
                ]
            elif checks and "seer" not in opening:
                leak = f"My check found {checks[0][0]} is {checks[0][1] or ''}a werewolf."
            else:
                leak = "P9 is a werewolf."
        args = {"text": (opening + leak)[:200], "cites": offered_cites(grammar)[:1]}
        return Reply(json.dumps(args), None, None, None, 0)


async def _play_with_ai_seats(seed: int, counter: list[int], prompts: list[tuple[str, str]] | None = None) -> tuple:
    s = new_game(seed, 6 + seed % 3)
    log: list[tuple[str, ...]] = [()]
    seats = {seat: ai_seat(seat, s.role(seat), LeakyLLM(counter, log, prompts), seed, len(s.seats)) for seat in s.seats}
    while s.phase is not Phase.OVER:
        turn = next_turn(s)
        if turn is None:
            s = advance(s)
            continue
        p = payload(s)
        log[0] = p.view
        args = await seats[turn.seat].answer(p)
        s = act(s, turn.seat, turn.tool.to_action(args))
    return s, seats


async def test_no_speech_states_another_seats_private_fact_over_1000_games_with_a_leaky_llm():
    t0 = time.monotonic()
    counter = [0]
    speeches = templates = wolf_votes = buses = decisive = 0
    reasons: set[str] = set()
    for seed in range(1, 1001):
        prompts: list[tuple[str, str]] = []
        final, seats = await _play_with_ai_seats(seed, counter, prompts if seed <= 100 else None)
        leaks = isolation.speech_leaks(final, seats=final.seats)
        assert leaks == [], (seed, leaks)
        n, found = isolation.count_violations(prompts, final)  # what the seats' LLMs were told
        assert n == 0, (seed, found)
        n_seats = sum(len(a.speeches) for a in seats.values())
        assert n_seats == sum(1 for e in final.events if isinstance(e.what, Speech))
        speeches += n_seats
        templates += sum(a.templates for a in seats.values())
        reasons |= {sp.template for a in seats.values() for sp in a.speeches if sp.template}
        wolves = set(final.seats_with(Role.WEREWOLF))
        wolf_votes += sum(1 for e in final.events if isinstance(e.what, VoteCast) and e.what.seat in wolves)
        n, d = partner_ballots(final)  # a wolf votes for its partner only when the village votes it out anyway
        buses, decisive = buses + n, decisive + d
    assert speeches < counter[0] < 2 * speeches and speeches > 10_000  # every speech went to the LLM, leaks twice
    assert 0.2 * speeches < templates < 0.6 * speeches  # leaked twice: the template; an honest wording was said
    assert {
        "names a partner",
        "talks about the night's actions",
        "gives away a role",
        "clears a seat (a werewolf knows who is none)",
        "claims the seer without that stance",
    } <= reasons
    assert any(r.startswith("names a seat not at the table") for r in reasons)
    assert wolf_votes > 3000 and buses > 100 and decisive <= 0.01 * buses, (buses, decisive)
    assert time.monotonic() - t0 < 60


def test_the_leak_audit_catches_each_kind_of_leak():
    s = scripted(
        *NIGHT_1,
        ("P1", "Player two and I will win."),
        ("P2", "P7 is innocent."),
        ("P3", "I saved nobody."),
        ("P4", "P5 was attacked last night."),
        ("P5", "P1 is a wolf."),
        roles=ROLES_8,
    )
    found = {(seat, why) for seat, _, _, why in isolation.speech_leaks(s, seats=s.seats)}
    assert found == {
        ("P1", "a werewolf named its partner"),
        ("P2", "a werewolf cleared a seat it knows is no werewolf"),
        ("P4", "the witch spoke of the night's actions"),
    }
