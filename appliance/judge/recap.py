"""A recap for the person at the table, asked by voice and answered from their own view.

The person playing a seat may ask, at any time, what happened; the answer is built from
that seat's :class:`~appliance.judge.views.SeatView` alone (what the judge has already
told the seat), so it can hold no fact the seat was not given. It is a question to the
judge, never a move: :func:`request` is how the voice seat and the transcript parser
(:mod:`~appliance.judge.transcript`) tell one from a move.

:func:`request` recognises a recap question in a transcript: after lower-casing, number
words → digits and "player three" → ``p3`` (:func:`~appliance.judge.claims.normalise`),
punctuation dropped and leading fillers and asks ("okay", "sorry", "can you tell me",
"remind me") removed, the *whole* rest must be one of these phrasings (so a speech that
only mentions last night stays a speech):

- ``night`` — "what happened last night?", "who died?", "did anyone die?", "last night?";
- ``votes`` — "who voted for whom?", "how did everyone vote?", "what were the votes?",
  "the ballots?", "who voted for P3?";
- ``claims`` — "who claimed what?", "what did everyone say?", "who claims to be the seer?",
  "what did P3 say?" (then :attr:`Question.seat` is ``P3``);
- ``table`` — "recap", "what happened?", "where are we?", "catch me up", "who is alive?",
  "what is my role?".

:func:`answer` says, in plain sentences:

- ``night`` — the latest night whose dawn has come: the seat's own lines of that night,
  exactly as it was told them (a werewolf's proposals, the Seer's check, the Witch's
  potions), then who died at dawn;
- ``votes`` — the last ballots revealed and the vote's result; while a vote is open, the
  seat's own ballot if cast (the others stay secret until every vote is in);
- ``claims`` — each seat's last speech that claimed something
  (:func:`~appliance.judge.claims.read`), quoted as it was said (``P3 said: "…"``); for one
  seat, its last speech;
- ``table`` — phase, round, who is alive and dead, the seat's own role (and a werewolf's
  team), the last dawn and the last vote's result.

A seat's private lines are said verbatim and speech is quoted as the views render it, so
:mod:`~appliance.judge.isolation` audits an answer like any text a seat receives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from appliance.judge import claims
from appliance.judge.events import (
    Deaths,
    Eliminated,
    Event,
    GameOver,
    RoleAssigned,
    SeerResult,
    Speech,
    VoteCast,
    Votes,
    WitchAction,
    WitchInfo,
    WolfProposal,
    WolfTeam,
    WolfVictim,
)
from appliance.judge.state import Phase
from appliance.judge.views import SeatView, render_event

Kind = Literal["night", "votes", "claims", "table"]


@dataclass(frozen=True)
class Question:
    """A recap question: its ``kind``, and the one seat it asks about (``claims`` only), or ``None``."""

    kind: Kind
    seat: str | None = None


_WHEN = r"(?: last night| tonight| overnight| in the night| during the night| at night)"
_ALL = r"(?:everyone|everybody|people|they|the others|the other players|the table|the players|each seat)"
_ROLE = r"(?:the )?(?:seer|witch|werewolf|wolf|villager)"
#: (kind, the whole utterance's pattern); a named group ``seat`` asks about one seat
_PHRASES: list[tuple[Kind, re.Pattern]] = [
    (kind, re.compile(p))
    for kind, p in (
        ("night", rf"what (?:happened|went on|has happened){_WHEN}"),
        ("night", rf"who (?:died|was killed|got killed|has died|did we lose|is gone){_WHEN}?"),
        ("night", rf"(?:did |has )?(?:anyone|anybody|someone|somebody) (?:die|died|get killed){_WHEN}?"),
        ("night", r"(?:what about |and )?last night"),
        ("votes", r"who voted(?: for| against)?(?: whom| who| what| p[1-9])?"),
        ("votes", rf"how did {_ALL} vote"),
        ("votes", r"(?:what|how) (?:were|was|are|is) the (?:votes|ballots|voting|vote result|result of the vote)"),
        ("votes", r"(?:the |read me the |read out the )?(?:votes|ballots)"),
        ("claims", rf"what did (?:(?P<seat>p[1-9])|{_ALL}) (?:say|claim)"),
        ("claims", r"what (?:has |is )?(?P<seat>p[1-9]) (?:said|claimed|claiming|saying)"),
        ("claims", rf"what {_ALL} (?:said|claimed)"),
        ("claims", r"who (?:claimed|claims|said|says) what"),
        ("claims", rf"who (?:claimed|claims|is claiming|said they are|says they are)(?: to be)? {_ROLE}"),
        ("claims", r"(?:what are |what were )?(?:the |their )?claims"),
        ("table", r"(?:a |quick |a quick )?(?:recap|summary|rundown)"),
        ("table", r"what(?: has| is|'s|s)? (?:happened|happening|going on)(?: so far| today| yet)?"),
        ("table", r"where are we(?: now)?"),
        ("table", r"(?:catch|fill) me (?:up|in)"),
        ("table", r"what did i miss"),
        ("table", r"who(?: is|'s|s) (?:still )?(?:alive|left|dead|in the game)"),
        ("table", r"what(?: is|'s|s) my role|who am i|what am i"),
    )
]
_LEAD = re.compile(
    r"^(?:(?:ok(?:ay)?|so|um+|uh+|hey|hi|well|wait|sorry|excuse me|judge|narrator|please|and|quickly)\b ?"
    r"|(?:(?:can|could|would|will) you (?:please )?)?(?:tell me|remind me(?: of)?|give me)\b ?"
    r"|(?:i (?:want|would like|'d like) to know|do you know)\b ?)+"
)
_TAIL = re.compile(r"(?: ?\b(?:please|again|now|then|exactly))+$")


def request(transcript: str) -> Question | None:
    """The recap question ``transcript`` asks (see the module docstring), or ``None`` when it
    is anything else (a move, a speech, talk)."""
    text = re.sub(r"[^a-z0-9' ]+", " ", claims.normalise(transcript))
    text = _TAIL.sub("", _LEAD.sub("", " ".join(text.split()))).strip()
    for kind, pattern in _PHRASES:
        m = pattern.fullmatch(text)
        if m:
            seat = m.groupdict().get("seat")
            return Question(kind, seat.upper() if seat else None)
    return None


def answer(question: Question, view: SeatView) -> str:
    """The reply to ``question``, built from ``view`` alone (see the module docstring)."""
    match question.kind:
        case "night":
            return _night(view)
        case "votes":
            return _votes(view)
        case "claims":
            return _claims(view, question.seat)
        case "table":
            return _table(view)


def _last(view: SeatView, kind: type) -> int | None:
    """The index in ``view.events`` of the last event of ``kind``, or ``None``."""
    return next((i for i in range(len(view.events) - 1, -1, -1) if isinstance(view.events[i].what, kind)), None)


def _night(view: SeatView) -> str:
    dawn = _last(view, Deaths)
    if dawn is None:
        return "No night has ended yet."
    r = view.events[dawn].round
    lines = [render_event(e) for e in view.events[: dawn + 1] if e.round == r and isinstance(e.what, _NIGHT)]
    return " ".join([f"Last night was night {r}.", *lines])


#: what a night is made of (the seat sees the kinds its role may see, and the dawn)
_NIGHT = (WolfProposal, WolfVictim, WitchInfo, SeerResult, WitchAction, Deaths)


def _votes(view: SeatView) -> str:
    out = []
    shown = _last(view, Votes)
    if shown is None:
        out.append("No ballots have been revealed yet.")
    else:
        e = view.events[shown]
        result = next((x for x in view.events[shown:] if isinstance(x.what, Eliminated)), None)
        out += [f"Vote {e.round}.", render_event(e)] + ([render_event(result)] if result is not None else [])
    mine = next((e for e in view.events[(shown or 0) :] if isinstance(e.what, VoteCast)), None)
    if mine is not None:
        out += [render_event(mine), "The other ballots are revealed once everyone has voted."]
    elif view.phase is Phase.VOTE:
        out.append("Voting is under way: the ballots are revealed once everyone has voted.")
    return " ".join(out)


def _claims(view: SeatView, seat: str | None) -> str:
    speeches = [e for e in view.events if isinstance(e.what, Speech)]
    if seat is not None:
        last = next((e for e in reversed(speeches) if e.what.seat == seat), None)
        return render_event(last) if last is not None else f"{seat} has not spoken yet."
    last_claim: dict[str, Event] = {}
    for e in speeches:
        if claims.read(e.what.seat, e.what.text, e.round):
            last_claim[e.what.seat] = e
    if not last_claim:
        return "Nobody has claimed anything yet."
    return " ".join(render_event(last_claim[s]) for s in sorted(last_claim, key=lambda s: int(s[1:])))


def _table(view: SeatView) -> str:
    over = _last(view, GameOver)
    if over is not None:
        dead = f" Dead: {', '.join(view.dead)}." if view.dead else ""
        out = [render_event(view.events[over]), f"Alive: {', '.join(view.alive)}.{dead}"]
    else:
        out = [view.status()]
    out += [render_event(e) for e in view.events if isinstance(e.what, (RoleAssigned, WolfTeam))]
    news = sorted(i for i in (_last(view, Deaths), _last(view, Eliminated)) if i is not None)
    return " ".join(out + [render_event(view.events[i]) for i in news])
