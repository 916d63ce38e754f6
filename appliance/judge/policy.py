"""Role strategies in code: a seat's beliefs and its one legal tool → its action. Pure.

:func:`choose` returns the action for the turn; :func:`position` the day speech's
position (stance, target, cited evidence), which the LLM words and :func:`template`
words as the counted fallback. Every action is checked with the turn's
:class:`~appliance.judge.tools.ToolSpec` before it is returned: a policy that would pick
an illegal value raises :class:`IllegalAction`, it never guesses another.

Ties are broken by a hash of ``salt`` (the game's seed, the same for every seat), the
round, the deciding seat and the candidate — except the werewolves', which hash the team
instead of the seat, so both pick the same victim and the same ballot.

**Seer.** Checks the most suspicious seat she has not checked. She claims the seer from
the first day after a check finds a werewolf, or after her second check, or once
another seat claims the seer, or when a seat accuses her and the table suspects her
most; from then on every day she claims it, reveals every check so far (found
werewolves and cleared seats), accuses a living werewolf she found (else the false
claimant, else her most suspected seat) and votes for it. Until then she keeps quiet
about her role and reasons like a villager.

**Villager.** Accuses and votes for the seat it suspects most (claims, counter-claims and
voting records, :func:`~appliance.judge.beliefs.assess`), citing the strongest reason;
when it suspects nobody in particular and a credible seer is under attack, it defends
the seer instead.

**Witch.** *Save policy:* she saves the night's victim on night 1 — nobody has spoken,
so the antidote is worth most there, and a saved victim is a seat she knows is no
werewolf; on a later night she still holding the antidote (the first victim she was
told of came later) she saves it too. *Poison policy:* only on evidence — the seat
a credible seer claimant (not caught lying) named a werewolf, or a seer claimant she
caught lying — and only when she suspects it at least :data:`POISON_MIN`; otherwise
she keeps the poison. By day she speaks and votes like a villager and never claims.

**Werewolf.** Plays to win, with common Werewolf/Mafia strategy (each rule a small
function below, from its own view only: its team is its own fact, the table's opinion
is :func:`~appliance.judge.beliefs.assess` on the public record). Never proposes or
accuses a partner, and never names one. At night it follows a partner's proposal made
before it; else, sparing a seat that a werewolf's seer claim framed, it attacks a
living seer claimant (the most credible first), else the seat that spoke or voted most
against the team, else the seat the table trusts most. By day it accuses, and the team
votes for, a seer claimant who named a werewolf while the table doubts her, else the
non-werewolf the table suspects most — never a seat the team attacked and saw
survive. It claims the seer, naming the rival claimant (else the table's most
suspected seat) a werewolf, when a seer claimant named it (its partner stays hidden)
or when the table suspects it most, at least :data:`PRESSED`; then it keeps that claim
on later days. It votes out a partner the table suspects most, at least :data:`LOST`
(bussing: that partner goes out anyway).
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from appliance.judge import claims, grounding, tools
from appliance.judge.beliefs import CAUGHT, CHECK, CLAIM, TEAM, VOTE, Assessment, Beliefs, Evidence, assess
from appliance.judge.grounding import Cite
from appliance.judge.state import Action, IllegalAction, NightKill, Role, SeerCheck, Speak, Vote, WitchAct
from appliance.judge.tools import ToolSpec

CLAIM_SEER = "claim"
COUNTER_CLAIM = "counter_claim"
ACCUSE = "accuse"
DEFEND = "defend"
STANCES = (CLAIM_SEER, COUNTER_CLAIM, ACCUSE, DEFEND)

#: the Witch poisons only a seat she suspects at least this much, on evidence
POISON_MIN = 0.75
#: a werewolf the table suspects most at least this much is lost: its partner votes it out
LOST = 0.6
#: a werewolf the table suspects most at least this much claims the seer to survive
PRESSED = 0.5
#: a seer claimant is "credible" from this credibility on
CREDIBLE = 0.5
#: the Seer claims early when this many seats accused her today and the table suspects her most
PRESSURE = 1
#: the Seer claims (revealing her clears) once she holds this many checks, found or not
REVEAL_CLEARS = 2


@dataclass(frozen=True)
class Position:
    """What a day speech says: ``stance`` on ``target``, citing ``evidence``.

    ``checks`` (claims only): the check results the speech reveals, as ``(seat, is a
    werewolf)`` — the Seer's real ones, a counter-claiming werewolf's invented one.
    """

    stance: str
    target: str | None
    evidence: tuple[Evidence, ...] = ()
    checks: tuple[tuple[str, bool], ...] = ()


def choose(b: Beliefs, tool: ToolSpec, salt: int = 0) -> Action:
    """The action of ``b``'s seat for its turn ``tool`` (checked legal).

    Raises:
        IllegalAction: the strategy has no legal choice for this tool (never replaced).
    """
    if tool.name == tools.NIGHT_KILL:
        action: Action = NightKill(wolf_target(b, tool, salt))
    elif tool.name == tools.SEER_CHECK:
        action = SeerCheck(check_target(b, tool, salt))
    elif tool.name == tools.WITCH_ACT:
        action = witch_action(b, tool)
    elif tool.name == tools.VOTE:
        action = Vote(vote_target(b, tool, salt))
    else:
        action = Speak(template(position(b, tool, salt), tool.max_chars, salt))
    tool.check(action)
    return action


# --- night ------------------------------------------------------------------------------


def check_target(b: Beliefs, tool: ToolSpec, salt: int = 0) -> str:
    """Seer: the most suspicious seat among the legal (unchecked, living) ones."""
    a = assess(b)
    return _top(tool.targets, a.score, _key(salt, b.round, b.seat))


def wolf_target(b: Beliefs, tool: ToolSpec, salt: int = 0) -> str:
    """Werewolf: a partner's proposal tonight; else, never a seat a werewolf's seer claim
    framed (:func:`_unframed`), a seer claimant (the most credible), else the team's
    most dangerous accuser, else the seat the table trusts most. Common Werewolf/Mafia
    play: kill the seer, then whoever hunts you, then the village's trusted voice."""
    prey = [s for s in tool.targets if s not in b.team]
    if not prey:
        raise IllegalAction(f"{b.seat}: no seat to attack but partners")
    tonight = [t for r, seat, t in b.proposals if r == b.round and seat != b.seat and t in prey]
    if tonight:
        return tonight[0]
    public = assess(b, public=True)
    prey = _unframed(b, prey)
    claimants = [s for s in b.seer_claimants() if s in prey]
    if claimants:
        return max(claimants, key=lambda s: (public.credibility.get(s, 0.0), -prey.index(s)))
    danger = {s: _danger(b, s) for s in prey}
    if max(danger.values()) > 0:
        return _top(prey, danger, _key(salt, b.round, *b.team))
    return _top(prey, {s: -public.score.get(s, 0.0) for s in prey}, _key(salt, b.round, *b.team))


def _unframed(b: Beliefs, prey: list[str]) -> list[str]:
    """Werewolf: ``prey`` less the seats a werewolf's seer claim named a werewolf — the
    real seer a counter-claim named included (all of ``prey`` when nothing else is
    left). Killing one would clear it (night victims are villagers: the table reasons
    so) and expose the claim; common Werewolf play for a fake seer is to let the
    village exile the seat it framed."""
    framed = {c.target for c in b.claims if c.speaker in b.team and c.kind == claims.WOLF}
    return [s for s in prey if s not in framed] or prey


def _danger(b: Beliefs, seat: str) -> float:
    """How much ``seat`` spoke and voted against the werewolf team."""
    said = sum(
        1 for c in b.claims if c.speaker == seat and c.target in b.team and c.kind in (claims.WOLF, claims.SUSPECT)
    )
    voted = sum(1 for _, v, t in b.ballots if v == seat and t in b.team)
    return said + voted


def witch_action(b: Beliefs, tool: ToolSpec) -> WitchAct:
    """Witch: the save and poison policies of the module docstring."""
    save = tool.victim is not None  # the first victim she is told of: night 1 under our rules
    poison = poison_target(b, tool) if tool.can_poison else None
    if poison == tool.victim and save:
        poison = None
    return WitchAct(save=save, poison=poison)


def poison_target(b: Beliefs, tool: ToolSpec) -> str | None:
    """The seat the Witch poisons tonight, or ``None``: only a seat with evidence (named a
    werewolf by a credible seer claimant, or a seer claimant caught lying) that she
    suspects at least :data:`POISON_MIN`."""
    a = assess(b)
    grounded = [s for s in tool.targets if s != b.seat and _hard_evidence(a, s) and a.score.get(s, 0.0) >= POISON_MIN]
    return _top(grounded, a.score, _key(0, b.round, b.seat)) if grounded else None


def _hard_evidence(a: Assessment, seat: str) -> Evidence | None:
    for w, ev in a.reasons.get(seat, ()):
        if w <= 0:
            continue
        if ev.kind == CAUGHT:
            return ev
        if (
            ev.kind == CLAIM
            and ev.claim is not None
            and ev.claim.kind == claims.WOLF
            and a.credibility.get(ev.seat, 0.0) >= CREDIBLE
        ):
            return ev
    return None


# --- day --------------------------------------------------------------------------------


def vote_target(b: Beliefs, tool: ToolSpec, salt: int = 0) -> str | None:
    """The seat to vote out (``None``: abstain, only when no legal target is left)."""
    legal = [t for t in tool.targets if t != tools.ABSTAIN]
    if b.role is Role.WEREWOLF:
        target = _lost_partner(b, legal) or _wolf_focus(b, [t for t in legal if t not in b.team], salt)
    elif b.role is Role.SEER and (found := _found_alive(b, legal)):
        target = found[0]
    else:
        a = assess(b)
        target = _top(legal, a.score, _key(salt, b.round, b.seat)) if legal else None
    if target is None and not tool.can_abstain:
        raise IllegalAction(f"{b.seat}: nobody to vote for")
    return target


def position(b: Beliefs, tool: ToolSpec, salt: int = 0) -> Position:
    """The stance of ``b``'s seat in today's speech (see the module docstring)."""
    legal = [t for t in tool.targets]
    if b.role is Role.SEER:
        return _seer_position(b, legal, salt)
    if b.role is Role.WEREWOLF:
        return _wolf_position(b, legal, salt)
    return _village_position(b, legal, salt)


def _seer_position(b: Beliefs, legal: list[str], salt: int) -> Position:
    a = assess(b)
    others = [s for s in b.seer_claimants() if s != b.seat]
    found = [t for _, t, wolf in b.checks if wolf]
    if found or others or b.seat in b.seer_claimants() or _under_pressure(b) or len(b.checks) >= REVEAL_CLEARS:
        checks = tuple((t, wolf) for _, t, wolf in b.checks)
        alive_found = _found_alive(b, legal)
        liars = [s for s in others if s in legal]
        target = (alive_found or liars or [_top(legal, a.score, _key(salt, b.round, b.seat))])[0] if legal else None
        evidence = tuple(Evidence(CHECK, r, b.seat, t, wolf=w) for r, t, w in b.checks)
        if target in liars:
            evidence += (replace(_claim_of(b, target), kind=CAUGHT),)
        elif target is not None and target not in alive_found:
            evidence += _cite(a, target, b)
        stance = COUNTER_CLAIM if others and b.claims and _first_claimant(b) != b.seat else CLAIM_SEER
        return Position(stance, target, evidence, checks)
    return _accusation(b, a, legal, salt)


def _under_pressure(b: Beliefs) -> bool:
    """Today at least :data:`PRESSURE` seats accused this seat and the table suspects it most."""
    accusers = {
        c.speaker
        for c in b.claims
        if c.round == b.round and c.target == b.seat and c.kind in (claims.WOLF, claims.SUSPECT)
    }
    if len(accusers) < PRESSURE:
        return False
    public = assess(b, public=True)
    return public.ranked(b.alive)[0] == b.seat


def _village_position(b: Beliefs, legal: list[str], salt: int) -> Position:
    a = assess(b)
    target = _top(legal, a.score, _key(salt, b.round, b.seat)) if legal else None
    if target is not None and not _cited(a, target):
        seer = max((s for s in a.credibility if s in legal), key=lambda s: a.credibility[s], default=None)
        if seer is not None and a.credibility[seer] >= CREDIBLE and _attacked_by(b, seer):
            return Position(DEFEND, seer, (_claim_of(b, seer),))
    return _accusation(b, a, legal, salt)


def _wolf_position(b: Beliefs, legal: list[str], salt: int) -> Position:
    rivals = [s for s in b.seer_claimants() if s not in b.team]
    accusers = [
        s for s in rivals if any(c.speaker == s and c.kind == claims.WOLF and c.target in b.team for c in b.claims)
    ]
    if _fakes_seer(b, accusers):
        living = [s for s in accusers + rivals if s in legal]
        target = (living or [_wolf_focus(b, [s for s in legal if s not in b.team], salt)])[0]
        ev = tuple(_claim_of(b, s) for s in accusers[:1])
        return Position(COUNTER_CLAIM if rivals else CLAIM_SEER, target, ev, ((target, True),) if target else ())
    target = _wolf_focus(b, [s for s in legal if s not in b.team], salt)
    public = assess(b, public=True)
    if target is None:
        return Position(ACCUSE, None)
    return Position(ACCUSE, target, _cite(public, target, b))


def _fakes_seer(b: Beliefs, accusers: list[str]) -> bool:
    """Werewolf: this seat claims the seer today. It keeps a claim it made; else, unless a
    partner claimed, it claims when a seer claimant (one of ``accusers``) named it a
    werewolf, or when the table suspects it most, at least :data:`PRESSED`. Common
    Werewolf/Mafia play: a wolf about to be voted out has nothing to lose by claiming
    the seer and naming its accuser a werewolf — the village must then choose between
    two claims — while a partner nobody named stays hidden."""
    if b.seat in b.seer_claimants():
        return True
    if any(p in b.seer_claimants() for p in b.partners):
        return False
    return _counter_claimer(b, accusers) == b.seat or _suspected_most(b, b.seat, PRESSED)


def _counter_claimer(b: Beliefs, accusers: list[str]) -> str | None:
    """The werewolf that counter-claims the seer: the first living one a claimant named
    (it is lost anyway), never its hidden partner."""
    named = {c.target for c in b.claims if c.speaker in accusers and c.kind == claims.WOLF}
    return next((s for s in b.team if s not in b.dead and s in named), None)


def _wolf_focus(b: Beliefs, legal: list[str], salt: int) -> str | None:
    """The non-werewolf the team pushes today: a seer claimant who named a werewolf while
    the table doubts her, else the seat the table suspects most but one the team
    attacked (:func:`_unspared`). Common Werewolf/Mafia play: go with the table's
    suspicion, and leave a seer the table believes alone by day — pushing her marks the
    pusher once she dies at night."""
    if not legal:
        return None
    public = assess(b, public=True)
    for s in b.seer_claimants():
        if (
            s in legal
            and public.credibility.get(s, 0.0) < CREDIBLE
            and any(c.speaker == s and c.kind == claims.WOLF and c.target in b.team for c in b.claims)
        ):
            return s
    return _top(_unspared(b, legal), public.score, _key(salt, b.round, *b.team))


def _lost_partner(b: Beliefs, legal: list[str]) -> str | None:
    """Werewolf: the partner to vote out with the village, or ``None``: one the table
    suspects most, at least :data:`LOST`. Bussing, common Werewolf/Mafia play: that
    partner goes out anyway, and the ballot buys this seat the village's trust."""
    return next((p for p in b.partners if p in legal and _suspected_most(b, p, LOST)), None)


def _suspected_most(b: Beliefs, seat: str, at: float) -> bool:
    """The table (the public record alone) suspects ``seat`` most, and at least ``at``."""
    public = assess(b, public=True)
    return public.ranked(b.alive)[0] == seat and public.score[seat] >= at


def _unspared(b: Beliefs, legal: list[str]) -> list[str]:
    """Werewolf: ``legal`` less the seats the team attacked and saw survive (all of
    ``legal`` when nothing else is left). A survivor was saved by the Witch, who knows
    it is no werewolf, so accusing it marks the accuser. Common Werewolf advice: never
    push your own failed kill."""
    attacked = {t for _, t in b.attacked}
    return [s for s in legal if s not in attacked] or legal


def _accusation(b: Beliefs, a: Assessment, legal: list[str], salt: int) -> Position:
    target = _top(legal, a.score, _key(salt, b.round, b.seat)) if legal else None
    if target is None:
        return Position(ACCUSE, None)
    return Position(ACCUSE, target, _cite(a, target, b))


def _cite(a: Assessment, target: str, b: Beliefs) -> tuple[Evidence, ...]:
    """The strongest public reasons (raising suspicion) for accusing ``target``; never a
    private fact of this seat but its own checks."""
    out = []
    for w, ev in a.reasons.get(target, ()):
        if w > 0 and ev.kind in (CLAIM, VOTE, CAUGHT) and ev.seat != b.seat and not _names_team(ev, b):
            out.append(ev)
    return tuple(out[:1])


def _names_team(ev: Evidence, b: Beliefs) -> bool:
    """Citing ``ev`` would name one of a werewolf's partners (a werewolf never does)."""
    named = {ev.seat, ev.target} | ({ev.claim.target} if ev.claim is not None else set())
    return bool(named & set(b.partners))


def _cited(a: Assessment, target: str) -> bool:
    return any(w > 0.3 for w, ev in a.reasons.get(target, ()) if ev.kind in (CLAIM, VOTE, CAUGHT, CHECK, TEAM))


def _attacked_by(b: Beliefs, seat: str) -> bool:
    return any(c.target == seat and c.kind in (claims.WOLF, claims.SUSPECT) for c in b.claims if c.speaker != b.seat)


def _claim_of(b: Beliefs, seat: str) -> Evidence:
    c = next(c for c in b.claims if c.speaker == seat and c.kind == claims.SEER)
    return Evidence(CLAIM, c.round, seat, None, c)


def _first_claimant(b: Beliefs) -> str | None:
    claimants = b.seer_claimants()
    return claimants[0] if claimants else None


def _found_alive(b: Beliefs, legal: list[str]) -> list[str]:
    return [t for _, t, wolf in b.checks if wolf and t in legal]


# --- words ------------------------------------------------------------------------------


def template(p: Position, max_chars: int = 200, salt: int = 0) -> str:
    """The position in plain words (the fallback when the LLM gives no speech), within
    ``max_chars``. :func:`appliance.judge.claims.read` reads its claims back."""
    parts: list[str] = []
    if p.stance in (CLAIM_SEER, COUNTER_CLAIM):
        parts.append("I am the real seer." if p.stance == COUNTER_CLAIM else "I am the seer.")
        found = [s for s, wolf in p.checks if wolf]
        cleared = [s for s, wolf in p.checks if not wolf]
        parts += [f"My check found {s} is a werewolf." for s in found]
        if cleared:
            parts.append(f"My check cleared {_and(cleared)}.")
        if p.target and p.target not in found:
            parts.append(f"I suspect {p.target} because they {_why(p, p.target)}.")
        if p.target:
            parts.append(f"Vote {p.target} out.")
    elif p.stance == DEFEND and p.target:
        why = _reason(p.evidence[0], p.target) if p.evidence else "sound honest"
        parts.append(f"I trust {p.target} because they {why}.")
    elif p.target:
        if p.evidence:
            parts.append(f"I suspect {p.target} because they {_reason(p.evidence[0], p.target)}.")
        else:
            parts.append(_VAGUE[_key(salt, p.target) % len(_VAGUE)].format(seat=p.target))
    else:
        parts.append("I have nothing to add.")
    text = ""
    for part in parts:
        if len(text) + len(part) + 1 > max_chars:
            break
        text = f"{text} {part}".strip()
    return text or parts[0][:max_chars]


def grounded(
    p: Position, b: Beliefs, facts: Mapping[Cite, str], max_chars: int = 200, salt: int = 0
) -> tuple[str, tuple[Cite, ...]]:
    """The counted fallback speech of ``b``'s seat: :func:`template`'s words and the public
    fact they cite (``facts``: :func:`appliance.judge.grounding.public_facts` of its view),
    so that :func:`appliance.judge.grounding.check` passes it. When the template's reason
    is no fact of the log (a vague accusation, "they sound like a werewolf", nothing to
    add), a sentence stating the fact :func:`offered` puts first follows its words
    ("On day 1 P4 voted for P2."); ``()`` cites only when the log has no fact a werewolf
    may name without naming a partner."""
    said = _said_cite(p, facts)
    if said is not None:
        return template(p, max_chars, salt), (said,)
    offer = offered(p, b, facts)
    if not offer:
        return template(p, max_chars, salt), ()
    sentence = facts[offer[0]]
    return f"{template(p, max_chars - len(sentence) - 1, salt)} {sentence}", (offer[0],)


def offered(p: Position, b: Beliefs, facts: Mapping[Cite, str], limit: int = 40) -> list[Cite]:
    """The public facts ``b``'s seat may cite in a speech of ``p``, at most ``limit``, the
    one its position rests on first: the fact its reason states, else the latest thing
    the target did (a ballot, an accusation, a defence, a claim), else the latest thing
    done to it, else the latest death; then the rest, latest first. A werewolf is never
    offered a fact that names a partner."""
    usable = [c for c in facts if not ({c.by, c.target} & set(b.partners))]
    said = _said_cite(p, facts)
    first = [said] if said is not None and said in usable else []
    if not first:
        for pick in (
            lambda c: p.target is not None and c.by == p.target,
            lambda c: p.target is not None and c.target == p.target,
            lambda c: c.kind == grounding.DEATH,
        ):
            found = [c for c in usable if pick(c)]
            if found:
                first = found[-1:]
                break
    return (first + [c for c in reversed(usable) if c not in first])[:limit]


def _said_cite(p: Position, facts: Mapping[Cite, str]) -> Cite | None:
    """The fact :func:`template`'s reason states, or ``None`` (a reason of no fact)."""
    ev = next((ev for ev in p.evidence if ev.kind != CHECK), None)
    if ev is None or p.target is None or _reason(ev, p.target) == "sound like a werewolf":
        return None
    cite = _cite_of(ev)
    return cite if cite in facts else None


def _cite_of(ev: Evidence) -> Cite | None:
    """The public fact of a piece of evidence: a ballot, or what a speech said (a seer
    claim that this seat caught lying is the claim)."""
    if ev.kind == VOTE:
        return Cite(grounding.VOTE, ev.round, ev.seat, ev.target)
    c = ev.claim
    if c is None:
        return None
    if ev.kind == CAUGHT or c.kind == claims.SEER:
        return Cite(grounding.CLAIM, ev.round if ev.kind == CAUGHT else c.round, c.speaker, None)
    kind = grounding.ACCUSATION if c.kind in (claims.WOLF, claims.SUSPECT) else grounding.DEFENCE
    return Cite(kind, c.round, c.speaker, c.target)


def opening(p: Position) -> str:
    """The words a speech of ``p`` must start with (its claim), ending in a space for the
    LLM to go on: ``I am the seer. My check found P2 is a werewolf. `` or
    ``I suspect P4 because ``; empty when the position names nobody."""
    if p.stance in (CLAIM_SEER, COUNTER_CLAIM):
        found = [s for s, wolf in p.checks if wolf]
        text = "I am the real seer. " if p.stance == COUNTER_CLAIM else "I am the seer. "
        text += "".join(f"My check found {s} is a werewolf. " for s in found)
        if p.target and p.target not in found:
            text += f"I suspect {p.target} because "
        return text
    if not p.target:
        return ""
    return f"I {'trust' if p.stance == DEFEND else 'suspect'} {p.target} because "


def speech_grammar(
    p: Position,
    b: Beliefs,
    tool: ToolSpec,
    max_chars: int | None = None,
    one_sentence: bool = False,
    offer: Sequence[Cite] = (),
) -> str:
    """GBNF for the ``speak`` tool's arguments that words ``p``, **the cite first**: the
    JSON opens with one of the facts in ``offer`` (:func:`offered`, the first
    :data:`OFFER_IN_GRAMMAR`, each as the compact JSON of :meth:`Cite.to_json`; none when
    ``offer`` is empty), then the speech starts with :func:`opening` and goes on in the
    model's own words, in which the only digits are the seat ids the position and the
    chosen cite name (:func:`speech_seats`; for a werewolf, never a partner) and the cite's
    day, once ("day 2"). Each cite is its own
    alternative (rules ``cN``, ``stepN``, ``seatN``), so the words it allows depend on the
    cite chosen. Every speech it allows is a legal ``speak`` argument within
    ``max_chars`` (default: the tool's limit); check it with :func:`conforms` and
    :func:`appliance.judge.grounding.check` all the same (a seat can be named in words,
    "player three"; an event can be named that the cite is not).

    ``one_sentence``: the model's words are one sentence (no ``.``, ``!`` or ``?`` but
    the one that ends it), so a small model stops when its point is made instead of
    running on into the log's lines.

    Raises:
        IllegalAction: the opening alone is longer than the limit."""
    start = opening(p)
    limit = min(tool.max_chars, max_chars or tool.max_chars)
    if len(start) + (1 if one_sentence else 0) >= limit:
        raise IllegalAction(f"the opening of this position is longer than {limit} characters")
    room = (limit - len(start) - (1 if one_sentence else 0)) // 2  # a seat id is one step of two characters
    stops = ".!?" if one_sentence else ""
    end = " [.!?]" if one_sentence else ""
    head = _gbnf_text(start) + " " if start else ""
    alts = list(offer[:OFFER_IN_GRAMMAR]) or [None]
    lines = ['root ::= "{\\"cites\\":[" (' + " | ".join(f"c{i}" for i in range(len(alts))) + ') "\\"}"']
    for i, cite in enumerate(alts):
        seats = speech_seats(p, b, cite)
        first = f"step{i}" if start else "[A-Za-z]"  # a speech must have a letter
        cite_json = _gbnf_text(json.dumps(cite.to_json(), separators=(",", ":"))) + " " if cite else ""
        if cite is None:
            words = f"{first} step{i}{{0,{room - 1}}}"
        else:  # the cite's day at most once ("day 2": one step of up to six characters), halves around it
            half = max(0, (room - 4) // 2)
            words = f"{first} step{i}{{0,{half}}} (day{i} step{i}{{0,{half}}})?"
            lines.append(f'day{i} ::= ("day " | "Day ") "{cite.day}"')
        lines.append(f'c{i} ::= {cite_json}"],\\"text\\":\\"" {head}{words}{end}')
        lines.append(f'step{i} ::= [^"\\\\\\n0-9{stops}]' + (f" | seat{i}" if seats else ""))
        if seats:
            lines.append(f"seat{i} ::= " + " | ".join(f'"{s}"' for s in seats))
    return "\n".join(lines)


#: the facts of :func:`offered` a speech grammar lets the model choose its cite from: the
#: first only — offered three, the 0.5B model often chose a later one and then worded the
#: first (3 seeded games: 0.83 of drafts grounded)
OFFER_IN_GRAMMAR = 1


def speech_seats(p: Position, b: Beliefs, cite: Cite | None) -> list[str]:
    """The seat ids a speech of ``p`` citing ``cite`` may name in its own words, in seat
    order: the position's target and reported checks and the cite's seats; never the
    speaker's partners (:func:`appliance.judge.grounding.check` allows no other seat)."""
    named = {p.target, *(s for s, _ in p.checks)} | ({cite.by, cite.target} if cite else set())
    return [s for s in b.seats if s in named and s not in b.partners]


def _gbnf_text(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


_VAGUE = (
    "I suspect {seat}, but I have no proof yet.",
    "I suspect {seat} for now; tell me why I am wrong.",
    "I suspect {seat}, it is only a feeling so far.",
    "I suspect {seat} until I hear better.",
)


def _why(p: Position, target: str) -> str:
    cited = [ev for ev in p.evidence if ev.kind != CHECK]
    return _reason(cited[0], target) if cited else "sound like a werewolf"


def _reason(ev: Evidence, target: str) -> str:
    """Why, said of ``target`` ("they …")."""
    c = ev.claim
    if ev.kind == VOTE and ev.seat == target:
        return f"voted for {ev.target} on day {ev.round}"
    if ev.kind == CAUGHT:
        return "lied about being the seer"
    if ev.kind == CLAIM and c is not None:
        if ev.seat == target:
            if c.kind == claims.SEER:
                return "claimed the seer"
            if c.kind == claims.WOLF:
                return f"called {c.target} a wolf" if c.target else "accused others"
            if c.kind == claims.SUSPECT:
                return f"accused {c.target}"
            if c.kind == claims.TRUST:
                return f"defended {c.target}"
            return f"vouched for {c.target}"
        if c.kind == claims.WOLF:
            return f"were named a wolf by {ev.seat}"
        if c.kind == claims.SUSPECT:
            return f"are suspected by {ev.seat} too"
        if c.kind == claims.TRUST:
            return f"are defended by {ev.seat}"
    return "sound like a werewolf"


def _and(seats: list[str]) -> str:
    return seats[0] if len(seats) == 1 else ", ".join(seats[:-1]) + " and " + seats[-1]


def brief(p: Position, b: Beliefs, reads: bool = True, short_quotes: bool = False) -> str:
    """The position as the seat's LLM is told it: the stance, the target, the evidence —
    public facts quoted as the view shows them, the Seer's own checks as her view shows
    them — and the seat's reads (a werewolf's leave its partners out), so the prompt
    states nothing the seat may not know and no werewolf is nudged to name its partner.
    ``reads`` False leaves the reads out (a small model only recites the list);
    ``short_quotes`` quotes only the sentence of a speech that makes the cited claim, and
    an accusation or a defence not at all ("on day 1 P3 accused P4"): a small model
    repeats a quote from its start."""
    lines = [f"Your position today: {_STANCE_WORDS[p.stance]}."]
    if p.target:
        lines.append(f"Your target: {p.target}.")
    for ev in p.evidence:
        line = _evidence_line(ev, b, short_quotes)
        if line:
            lines.append(line)
    if not reads:
        return " ".join(lines)
    a = assess(b, public=b.role is Role.WEREWOLF)
    ranked = [s for s in a.ranked(s for s in b.alive if s != b.seat) if s not in b.team]
    if ranked:
        lines.append(f"Your reads, most doubtful first: {', '.join(ranked)}.")
    return " ".join(lines)


def conforms(text: str, p: Position, b: Beliefs, tool: ToolSpec) -> str | None:
    """Why the speech ``text`` (an LLM's wording of ``p``) may not be said, or ``None``.

    It must make the position's claim (the seer claim for a claim or counter-claim, an
    accusation of the target for accuse, a defence for defend), name only seats of the
    table, never claim the seer without a claim stance, and give away nothing private:
    no word of the night's actions (attacks, proposals, saves, poisons: only the
    werewolves and the Witch know them), no team or own role but a seer claim, and — for
    a werewolf — never a partner (named in any words) nor a seat cleared (it knows who
    is no werewolf).
    """
    said = claims.read(b.seat, text, b.round)
    plain = claims.normalise(text)
    named = {f"P{n}" for n in re.findall(r"\bp([1-9])\b", plain)}
    if named - set(b.seats):
        return f"names a seat not at the table: {', '.join(sorted(named - set(b.seats)))}"
    if b.role is Role.WEREWOLF and named & set(b.partners):
        return "names a partner"
    if _NIGHT_TALK.search(plain):
        return "talks about the night's actions"
    if _TEAM_TALK.search(plain) or _OWN_ROLE.search(plain):
        return "gives away a role"
    try:
        tool.check(Speak(text))
    except IllegalAction as e:
        return str(e)
    claims_seer = any(c.kind == claims.SEER for c in said)
    if p.stance in (CLAIM_SEER, COUNTER_CLAIM) and not claims_seer:
        return "does not claim the seer"
    if p.stance not in (CLAIM_SEER, COUNTER_CLAIM) and claims_seer:
        return "claims the seer without that stance"
    if b.role is Role.WEREWOLF and (any(c.kind == claims.CLEAR for c in said) or _CLEARS.search(plain)):
        return "clears a seat (a werewolf knows who is none)"
    if p.target:
        kinds = {claims.TRUST, claims.CLEAR} if p.stance == DEFEND else {claims.WOLF, claims.SUSPECT}
        if not any(c.target == p.target and c.kind in kinds for c in said):
            return f"does not {'defend' if p.stance == DEFEND else 'accuse'} {p.target}"
    return None


#: what only the werewolves and the Witch know of the night (who was attacked, proposed, saved, poisoned)
_NIGHT_TALK = re.compile(
    r"\b(?:attack\w*|kill\w*|victims?|propos\w*|sav(?:e|ed|es|ing)|poison\w*|antidotes?"
    r"|potions?)\b"
)
_TEAM_TALK = re.compile(
    r"\b(?:partners?|team ?mates?|my team|fellow (?:were ?)?wol\w*|we (?:are )?(?:were ?)?wolves"
    r"|(?:the )?other (?:were ?)?wolf)\b"
)
_CLEARS = re.compile(
    r"\bp[1-9] (?:is|was|'s|are) (?:not (?:a |an |one of the )?(?:were ?)?wol(?:f|ves)|innocent|clear"
    r"|cleared|a villager|good|on (?:our|my|the village'?s?) side)\b"
)
_OWN_ROLE = re.compile(
    r"\b(?:i am|i'm|im)(?: the| a| an| your)?(?: real| true| only)? (?:witch|(?:were ?)?wol(?:f|ves))\b"
)

_STANCE_WORDS = {
    CLAIM_SEER: "say you are the seer and reveal your results",
    COUNTER_CLAIM: "say you are the real seer and the other claimant lies",
    ACCUSE: "accuse your target",
    DEFEND: "defend your target",
}


def _evidence_line(ev: Evidence, b: Beliefs, short: bool = False) -> str | None:
    if ev.kind == CHECK:
        return f"Your check: {ev.target} is {'' if ev.wolf else 'not '}a werewolf."
    if ev.kind == VOTE:
        return f"Evidence: on day {ev.round} {ev.seat} voted for {ev.target}."
    if short and ev.kind == CLAIM and ev.claim is not None and ev.claim.kind in (claims.SUSPECT, claims.TRUST):
        did = "accused" if ev.claim.kind == claims.SUSPECT else "defended"  # not quoted: it would only be repeated
        return f"Evidence: on day {ev.round} {ev.seat} {did} {ev.claim.target}."
    if ev.kind in (CLAIM, CAUGHT) and ev.claim is not None:
        said = next(
            (t for r, s, t in b.speeches if s == ev.seat and r == ev.round and ev.claim in claims.read(s, t, r)), None
        )
        if said and short:
            said = next(
                (
                    x
                    for x in re.split(r"(?<=[.!?;])\s+|\n", said)
                    if (ev.claim.kind, ev.claim.target)
                    in {(c.kind, c.target) for c in claims.read(ev.seat, x, ev.round)}
                ),
                said,
            )
        return f"Evidence: {ev.seat} said: {json.dumps(said, ensure_ascii=False)}" if said else None
    return None


# --- ties -------------------------------------------------------------------------------


def _key(salt: int, *parts) -> int:
    return zlib.crc32(":".join(str(x) for x in (salt, *parts)).encode())


def _top(candidates, score: dict[str, float], key: int) -> str | None:
    """The highest-scoring candidate; ties broken by a hash of ``key`` and the seat."""
    candidates = list(candidates)
    if not candidates:
        return None
    return max(candidates, key=lambda s: (round(score.get(s, 0.0), 9), zlib.crc32(f"{key}:{s}".encode())))
