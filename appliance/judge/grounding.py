"""Speeches that cite what happened: the public facts a speech cites, checked against the
public log, and what its words name, read by a parser of its own. Pure.

An AI seat's ``speak`` tool carries, beside its words, the public facts it cites
(:class:`Cite`, ``{kind, day, by, target}``, seat ids or ``null``):

- ``vote`` — on day ``day`` ``by`` voted for ``target`` (``None``: abstained), as the
  revealed ballots say;
- ``accusation`` — on day ``day`` ``by`` said ``target`` is a werewolf, or suspected it;
- ``defence`` — on day ``day`` ``by`` trusted, defended or cleared ``target``;
- ``claim`` — on day ``day`` ``by`` claimed the seer (``target`` ``None``) or reported a
  check of ``target``;
- ``death`` — ``target`` died in the night before day ``day``, or was voted out on day
  ``day`` (``by`` ``None``); ``target`` ``None``: nobody died in the night before day ``day``.

:func:`public_facts` lists every fact of a seat's log — its **public** events only (ballots,
speeches as :func:`appliance.judge.claims.read` reads them, dawns, exiles): a werewolf's
team or the Seer's checks are never a citable fact. :func:`check` says what is wrong with a
speech, or ``None``:

1. it cites nothing;
2. a cite is no fact of the log (a vote that never happened, a day still to come);
3. its words name a seat, a role, an event or a day beyond the cited ones and the
   speaker's own statements.

**The speaker's own statements** are its own, true or not: its stance today ("I suspect
P4", "vote P4 out", "P4 is a werewolf", "I trust P2") and what it says of itself (its role,
its checks: "I am the seer. My check found P2 is a werewolf."), as
:func:`~appliance.judge.claims.read` reads them. So a werewolf may lie about its own role
and its night, never about a public fact.

**The words** are read by :func:`mentions` (lower case, number words → digits, "player 3"
→ ``p3``), never by the grammar that generated them:

- *seats*: every ``p1``–``p9``;
- *roles*: seer, witch, villager, werewolf (wolf, wolves) — the speaker's own role claim
  ("I am the seer", "as the seer") left out;
- *events*: vote ("voted", "votes", "abstained", "ballot"), accusation ("accused",
  "suspected", "blamed", "named … a wolf", "called … a wolf"), defence ("defended",
  "vouched", "trusted"), claim ("claimed", "lied"), death ("died", "dead", "killed",
  "voted out", "exiled", "eliminated") and any speech ("said", "told") — first-person
  verbs ("I suspect", "I trust", "my check cleared") are the speaker's own stance;
- *days*: "day 2", "night 2", "yesterday", "last night" (today's dawn).

A seat is allowed when the speaker said it in its own statements or a cite names it; a
werewolf is allowed with an accusation of the speaker's own or a cited accusation or claim;
the seer with the speaker's own seer claim or a cited claim; the witch and a villager
never; an event with a cite of its kind ("said" with any speech cite); a day with a cite
of that day; "X voted for Y" only with that very ballot cited, "X died" only with X's
death cited, and any death only with a death cited that is not "nobody died". The check is per speech,
not per sentence: "P4 voted for P2" with the ballot cited and a cited accusation of P4 by
P2 passes, however the sentences pair them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from appliance.judge import claims
from appliance.judge.events import Deaths, Eliminated, Event, Speech, Votes
from appliance.judge.state import PUBLIC, IllegalAction

VOTE = "vote"
ACCUSATION = "accusation"
CLAIM = "claim"
DEATH = "death"
DEFENCE = "defence"
#: the kinds of public fact a speech may cite
KINDS = (VOTE, ACCUSATION, CLAIM, DEATH, DEFENCE)
#: the most facts one speech cites
MAX_CITES = 3
#: the seat ids a cite may hold (the largest table has P8; P9 is a seat that is not there)
SEAT_IDS = tuple(f"P{i}" for i in range(1, 10))
#: the latest day a cite may name
MAX_DAY = 99

_SPEECH = "speech"  # "said", "told": any of the speech kinds


@dataclass(frozen=True)
class Cite:
    """One public fact a speech cites (see the module docstring for each kind)."""

    kind: str
    day: int
    by: str | None = None
    target: str | None = None

    @staticmethod
    def schema() -> dict[str, Any]:
        """JSON Schema of one cite (every property required), as the ``speak`` tool offers it."""
        seat = {"enum": [*SEAT_IDS, None]}
        return {
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": list(KINDS)},
                "day": {"type": "integer", "minimum": 1, "maximum": MAX_DAY},
                "by": seat,
                "target": seat,
            },
            "required": ["kind", "day", "by", "target"],
            "additionalProperties": False,
        }

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "day": self.day, "by": self.by, "target": self.target}

    @classmethod
    def from_json(cls, d: Any) -> Cite:
        """A cite from the ``speak`` tool's arguments.

        Raises:
            IllegalAction: not an object of exactly the four keys with legal values.
        """
        if not isinstance(d, Mapping) or set(d) != {"kind", "day", "by", "target"}:
            raise IllegalAction(f"speak.cites: each cite is {{kind, day, by, target}}, got {d!r}")
        day = d["day"]
        if d["kind"] not in KINDS:
            raise IllegalAction(f"speak.cites: kind {d['kind']!r} is not one of {list(KINDS)}")
        if not isinstance(day, int) or isinstance(day, bool) or not 1 <= day <= MAX_DAY:
            raise IllegalAction(f"speak.cites: day must be 1–{MAX_DAY}, got {day!r}")
        for key in ("by", "target"):
            if d[key] is not None and d[key] not in SEAT_IDS:
                raise IllegalAction(f"speak.cites: {key} must be a seat id or null, got {d[key]!r}")
        return cls(d["kind"], day, d["by"], d["target"])

    def __str__(self) -> str:
        return (
            f"{self.kind} on day {self.day}"
            + (f" by {self.by}" if self.by else "")
            + (f" of {self.target}" if self.target else "")
        )


def cites_of(args: Mapping[str, Any]) -> tuple[Cite, ...]:
    """The cites of a ``speak`` tool's arguments (``()`` when it has none).

    Raises:
        IllegalAction: ``cites`` is not a list of at most :data:`MAX_CITES` legal cites.
    """
    raw = args.get("cites", [])
    if not isinstance(raw, list) or len(raw) > MAX_CITES:
        raise IllegalAction(f"speak.cites: a list of at most {MAX_CITES} cites, got {raw!r}")
    return tuple(Cite.from_json(c) for c in raw)


def public_facts(log: Iterable[Event]) -> dict[Cite, str]:
    """Every citable fact of ``log`` (a seat's view; its public events only), in log order,
    each with its plain sentence (what :func:`appliance.judge.policy.grounded` says of it)."""
    out: dict[Cite, str] = {}
    for e in log:
        if e.audience != PUBLIC:
            continue
        d = e.round
        match e.what:
            case Votes(votes=votes):
                for voter, target in votes.items():
                    out[Cite(VOTE, d, voter, target)] = (
                        f"On day {d} {voter} voted for {target}." if target else f"On day {d} {voter} abstained."
                    )
            case Deaths(seats=dead):
                for seat in dead:
                    out[Cite(DEATH, d, None, seat)] = f"{seat} died in the night before day {d}."
                if not dead:
                    out[Cite(DEATH, d, None, None)] = f"Nobody died in the night before day {d}."
            case Eliminated(seat=str() as seat):
                out[Cite(DEATH, d, None, seat)] = f"{seat} was voted out on day {d}."
            case Speech(seat=speaker, text=text):
                for c in claims.read(speaker, text, d):
                    for cite in _speech_facts(c):
                        out.setdefault(cite, _SENTENCES[cite.kind](cite))
    return out


def _speech_facts(c: claims.Claim) -> tuple[Cite, ...]:
    """The facts one claim of a speech makes: a check report is a claim and an accusation
    (or a defence); a seer claim is a claim."""
    d, by, t = c.round, c.speaker, c.target
    if c.kind == claims.SEER:
        return (Cite(CLAIM, d, by, None),)
    stance = ACCUSATION if c.kind in (claims.WOLF, claims.SUSPECT) else DEFENCE
    return ((Cite(CLAIM, d, by, t),) if c.checked else ()) + (Cite(stance, d, by, t),)


_SENTENCES = {
    ACCUSATION: lambda c: f"On day {c.day} {c.by} accused {c.target}.",
    DEFENCE: lambda c: f"On day {c.day} {c.by} defended {c.target}.",
    CLAIM: lambda c: (
        f"On day {c.day} {c.by} claimed the seer."
        if c.target is None
        else f"On day {c.day} {c.by} claimed a check of {c.target}."
    ),
}


# --- the words ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Mentions:
    """What a speech's words name (see the module docstring): seats, roles, event kinds
    (``"speech"``: any speech kind), days, ballots stated as ``(voter, target)``, and the
    speaker's own statements (:class:`~appliance.judge.claims.Claim`)."""

    seats: frozenset[str]
    roles: frozenset[str]
    events: frozenset[str]
    days: frozenset[int]
    ballots: frozenset[tuple[str, str]]
    own: tuple[claims.Claim, ...]


_OWN_ROLE = re.compile(
    r"\b(?:i am|i'm|im|as)(?: the| a| an| your)?(?: real| true| only| actual)? "
    r"(?:seer|witch|villager|(?:were ?)?wolf)\b|\bseer here\b"
)
#: first-person verbs: the speaker's own stance and checks, not past events
_OWN_VERB = re.compile(
    r"\b(?:i|we)(?: \w+)?? (?:strongly |really |still |also |fully )?(?:suspect|accuse|trust|defend|believe|"
    r"vouch for|doubt|distrust|checked|vote|am voting|'m voting|claim)\b|\bmy (?:checks?|visions?) \w+"
)
_DEATH = re.compile(
    r"\b(?:died|dies|dead|death|killed|murdered|eaten|voted (?:\w+ )?(?:out|off)|exiled|eliminated|lynched)\b"
)
_EVENTS = (
    (VOTE, re.compile(r"\b(?:voted|votes|voting for|abstain\w*|ballots?)\b")),
    (ACCUSATION, re.compile(r"\b(?:accus\w+|suspected|suspects|blam\w+|(?:named|called) [\w ]{0,20}?wol(?:f|ves))\b")),
    (DEFENCE, re.compile(r"\b(?:defend\w+|vouch\w+|trusted|trusts|stood up for)\b")),
    (CLAIM, re.compile(r"\b(?:claim\w*|lied|lies|lying|liar)\b")),
    (_SPEECH, re.compile(r"\b(?:said|says|told|tells|mentioned)\b")),
)
_ROLES = (
    ("werewolf", re.compile(r"\b(?:were ?)?wol(?:f|ves)\b")),
    ("seer", re.compile(r"\bseers?\b")),
    ("witch", re.compile(r"\bwitch\w*\b")),
    ("villager", re.compile(r"\bvillagers?\b")),
)
_BALLOT = re.compile(r"\b(p[1-9]) voted (?:for |against )?(p[1-9])\b")
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}


def mentions(speaker: str, text: str, day: int) -> Mentions:
    """What ``speaker``'s speech ``text`` on day ``day`` names (the module docstring's parser)."""
    t = claims.normalise(text)
    t = re.sub(r"\b(" + "|".join(_ORDINALS) + r") (day|night)\b", lambda m: f"{m[2]} {_ORDINALS[m[1]]}", t)
    seats = frozenset(s.upper() for s in re.findall(r"\bp[1-9]\b", t))
    ballots = frozenset((a.upper(), b.upper()) for a, b in _BALLOT.findall(t))
    days = {int(n) for n in re.findall(r"\b(?:day|night) (\d+)\b", t)}
    days |= {day - 1} if re.search(r"\byesterday\b", t) else set()
    days |= {day} if re.search(r"\blast night\b", t) else set()
    rest = _OWN_VERB.sub(" ", _OWN_ROLE.sub(" ", t))
    events = {DEATH} if _DEATH.search(rest) else set()
    rest = _DEATH.sub(" ", rest)
    events |= {kind for kind, p in _EVENTS if p.search(rest)}
    roles = frozenset(role for role, p in _ROLES if p.search(rest))
    return Mentions(seats, roles, frozenset(events), frozenset(days), ballots, claims.read(speaker, text, day))


def check(speaker: str, text: str, cites: Sequence[Cite], log: Iterable[Event], day: int) -> str | None:
    """What is wrong with ``speaker``'s speech (``text`` citing ``cites``) on day ``day``,
    given its view's ``log``; ``None`` when it is grounded (the module docstring's rules)."""
    if not cites:
        return "cites nothing"
    facts = public_facts(log)
    for c in cites:
        if c not in facts:
            return f"cites a {c.kind} that never happened ({c})"
    m = mentions(speaker, text, day)
    own_seats = {c.target for c in m.own if c.target} | {speaker}
    cited_seats = {s for c in cites for s in (c.by, c.target) if s}
    extra = sorted(m.seats - own_seats - cited_seats, key=lambda s: int(s[1:]))
    if extra:
        return f"names {', '.join(extra)} beyond what it cites"
    kinds = {c.kind for c in cites}
    for kind in sorted(m.events):
        if kind == _SPEECH and not kinds & {ACCUSATION, DEFENCE, CLAIM}:
            return "speaks of what was said without citing it"
        if kind != _SPEECH and kind not in kinds:
            return f"speaks of {'an' if kind[0] in 'aeiou' else 'a'} {kind} it does not cite"
    why = _deaths_wrong(text, cites) if DEATH in m.events else None
    if why:
        return why
    voted = {(c.by, c.target) for c in cites if c.kind == VOTE}
    for ballot in sorted(m.ballots - voted):
        return f"says {ballot[0]} voted for {ballot[1]} without citing that ballot"
    days = sorted(m.days - {c.day for c in cites})
    if days:
        return f"names day {days[0]} beyond what it cites"
    for role in sorted(m.roles):
        if not _role_allowed(role, m.own, kinds):
            return f"names the {role} beyond what it cites"
    return None


#: "P3 died", "P3 was voted out", "P3 has died": a seat stated dead (normalised text)
_DIED = re.compile(
    r"\b(p[1-9]),?(?: (?:sadly|also|then|just|already|has|had|who))* (?:died|dies|is dead|was killed|got killed|"
    r"was murdered|was eaten|"
    r"was voted (?:\w+ )?(?:out|off)|was exiled|was eliminated|was lynched)\b"
)
_NOBODY = re.compile(r"\b(?:nobody|no one|noone|no-one|none of us|not one of us)\b")


def _deaths_wrong(text: str, cites: Sequence[Cite]) -> str | None:
    """What a speech that speaks of a death says wrong about the deaths it cites: a seat
    stated dead that no cited death is ("P3 died" citing that P5 died), or a death at all
    when the only deaths cited are nights nobody died ("he died in the night" citing that
    nobody did); ``None`` otherwise. A pronoun is not resolved: "he died" citing a real
    death passes."""
    t = claims.normalise(text)
    dead = {c.target for c in cites if c.kind == DEATH and c.target}
    for seat in sorted({s.upper() for s in _DIED.findall(t)} - dead):
        return f"says {seat} died without citing that death"
    if not dead and not _NOBODY.search(t):
        return "says someone died where its cite says nobody did"
    return None


def _role_allowed(role: str, own: tuple[claims.Claim, ...], kinds: set[str]) -> bool:
    own_kinds = {c.kind for c in own}
    if role == "werewolf":
        return bool(own_kinds & {claims.WOLF, claims.SUSPECT, claims.CLEAR}) or bool(kinds & {ACCUSATION, CLAIM})
    if role == "seer":
        return claims.SEER in own_kinds or CLAIM in kinds
    return False
