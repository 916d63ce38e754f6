"""The one legal turn tool a seat is offered: its JSON schema, a tight GBNF grammar, and the
mapping between tool arguments and typed actions.

A :class:`ToolSpec` is built by :func:`appliance.judge.rules.next_turn` from the current
state, so its enums hold exactly the legal choices (living seats, ``"abstain"``, potions
still unused). Decoding with :meth:`ToolSpec.grammar` (compact JSON, no free whitespace,
derived from :meth:`ToolSpec.schema`) or the schema itself makes even a small model
produce legal arguments; :meth:`ToolSpec.to_action` still checks everything and raises on
anything else.

``speak`` takes ``{text, cites}``: the words, and the public facts they cite
(:class:`~appliance.judge.grounding.Cite`, at most
:data:`~appliance.judge.grounding.MAX_CITES`; a person's speech cites nothing). The table
hears only the words (:class:`~appliance.judge.state.Speak`); whether the cites are true
and the words name nothing else is :func:`appliance.judge.grounding.check`'s to say.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from appliance.judge.grounding import MAX_CITES, Cite, cites_of
from appliance.judge.state import Action, IllegalAction, NightKill, SeerCheck, Speak, Vote, WitchAct

ABSTAIN = "abstain"

NIGHT_KILL = "night_kill"
SEER_CHECK = "seer_check"
WITCH_ACT = "witch_act"
SPEAK = "speak"
VOTE = "vote"


@dataclass(frozen=True)
class ToolSpec:
    """One turn tool with its legal argument values.

    ``targets``: legal seat ids for ``target`` (night_kill, seer_check, vote) or ``poison``
    (witch_act); for speak, the other living seats (a hint for decoding, not a limit). ``can_abstain``: vote only. ``victim``: the night's victim the Witch may
    save (set only while she holds the antidote). ``can_poison``: the Witch still holds
    the poison. ``max_chars``: longest speech's words (speak).
    """

    name: str
    targets: tuple[str, ...] = ()
    can_abstain: bool = False
    victim: str | None = None
    can_poison: bool = False
    max_chars: int = 200

    def to_json(self) -> dict[str, Any]:
        """The spec as a JSON-able dict (a turn envelope's ``tool``)."""
        d = asdict(self)
        d["targets"] = list(self.targets)
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "ToolSpec":
        """The spec back from :meth:`to_json`'s dict."""
        return cls(**{**d, "targets": tuple(d.get("targets", ()))})

    # --- what the model sees -----------------------------------------------------------

    def schema(self) -> dict[str, Any]:
        """JSON Schema of the arguments (an object whose every property is required)."""
        props: dict[str, Any] = {}
        if self.name in (NIGHT_KILL, SEER_CHECK):
            props["target"] = {"type": "string", "enum": list(self.targets)}
        elif self.name == VOTE:
            props["target"] = {"type": "string", "enum": list(self.targets) + ([ABSTAIN] if self.can_abstain else [])}
        elif self.name == WITCH_ACT:
            if self.victim is not None:
                props["save"] = {"type": "boolean"}
            if self.can_poison:
                props["poison"] = {"enum": list(self.targets) + [None]}
        elif self.name == SPEAK:
            props["text"] = {"type": "string", "minLength": 1, "maxLength": self.max_chars}
            props["cites"] = {"type": "array", "maxItems": MAX_CITES, "items": Cite.schema()}
        else:
            raise IllegalAction(f"unknown tool {self.name!r}")
        return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}

    def grammar(self, max_chars: int | None = None) -> str:
        """GBNF for the arguments as compact JSON (keys in schema order, no whitespace).

        ``max_chars`` tightens the speech length below the tool's legal limit (a model's
        token budget); it is ignored for other tools.
        """
        return "root ::= " + gbnf(self.schema(), max_chars)

    # --- arguments ⇄ actions -----------------------------------------------------------

    def to_action(self, args: dict[str, Any]) -> Action:
        """Tool arguments → typed action.

        Raises:
            IllegalAction: a missing or extra key, or a value outside the legal set.
        """
        if not isinstance(args, dict):
            raise IllegalAction(f"{self.name}: arguments must be an object, got {type(args).__name__}")
        props = self.schema()["properties"]
        if set(args) != set(props):
            raise IllegalAction(f"{self.name}: arguments must be exactly {sorted(props)}, got {sorted(args)}")
        for key, prop in props.items():
            v = args[key]
            if "enum" in prop and v not in prop["enum"]:
                raise IllegalAction(f"{self.name}.{key}: {v!r} is not one of {prop['enum']}")
            if prop.get("type") == "boolean" and not isinstance(v, bool):
                raise IllegalAction(f"{self.name}.{key}: must be true or false, got {v!r}")
        if self.name == SPEAK:
            v = args["text"]
            if not (isinstance(v, str) and 1 <= len(v.strip()) and len(v) <= self.max_chars):
                raise IllegalAction(f"speak.text: must be 1–{self.max_chars} characters")
            cites_of(args)
        if self.name == NIGHT_KILL:
            return NightKill(args["target"])
        if self.name == SEER_CHECK:
            return SeerCheck(args["target"])
        if self.name == VOTE:
            return Vote(None if args["target"] == ABSTAIN else args["target"])
        if self.name == WITCH_ACT:
            return WitchAct(save=bool(args.get("save", False)), poison=args.get("poison"))
        return Speak(args["text"].strip())

    def check(self, action: Action) -> None:
        """Raise ``IllegalAction`` unless ``action`` is a legal use of this tool."""
        self.to_action(self.arguments(action))

    def arguments(self, action: Action) -> dict[str, Any]:
        """Typed action → tool arguments (the inverse of :meth:`to_action`).

        Raises:
            IllegalAction: the action is of another tool, or uses a potion that is spent.
        """
        expected = {NIGHT_KILL: NightKill, SEER_CHECK: SeerCheck, WITCH_ACT: WitchAct, SPEAK: Speak, VOTE: Vote}
        if not isinstance(action, expected[self.name]):
            raise IllegalAction(f"this turn's tool is {self.name}, not {type(action).__name__}")
        if isinstance(action, (NightKill, SeerCheck)):
            return {"target": action.target}
        if isinstance(action, Vote):
            return {"target": ABSTAIN if action.target is None else action.target}
        if isinstance(action, Speak):
            return {"text": action.text, "cites": []}
        args: dict[str, Any] = {}
        if self.victim is not None:
            args["save"] = action.save
        elif action.save:
            raise IllegalAction("witch_act: the antidote is already used")
        if self.can_poison:
            args["poison"] = action.poison
        elif action.poison is not None:
            raise IllegalAction("witch_act: the poison is already used")
        return args


def gbnf(prop: dict[str, Any], max_chars: int | None = None) -> str:
    """A GBNF expression for the JSON values ``prop`` allows, as compact JSON (an object's
    keys in schema order, all of them): the subset of JSON Schema the turn tools use —
    ``enum``, ``boolean``, ``integer`` (``minimum`` 1, up to two digits), ``string`` with
    ``maxLength`` (no quote, backslash or new line; ``max_chars`` tightens it), ``array``
    (up to ``maxItems``) and ``object``."""
    if "enum" in prop:
        return "(" + " | ".join(_gbnf_literal(json.dumps(v)) for v in prop["enum"]) + ")"
    kind = prop.get("type")
    if kind == "boolean":
        return '("true" | "false")'
    if kind == "integer":
        return "([1-9] [0-9]?)"
    if kind == "string":
        limit = min(prop["maxLength"], max_chars or prop["maxLength"])
        return '"\\"" [^"\\\\\\n]{1,' + str(limit) + '} "\\""'
    if kind == "array":
        item = gbnf(prop["items"], max_chars)
        return f'"[" ({item} ("," {item}){{0,{prop["maxItems"] - 1}}})? "]"'
    if kind == "object":
        parts = [_gbnf_literal(json.dumps(k) + ":") + " " + gbnf(v, max_chars) for k, v in prop["properties"].items()]
        return '"{" ' + ' "," '.join(parts) + ' "}"'
    raise TypeError(f"no GBNF for the schema {prop!r}")


def _gbnf_literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
