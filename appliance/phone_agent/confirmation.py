"""Getting one field's value (or a few asked together) from the person and confirming it, as
pure functions over a frozen :class:`Talk` that return typed steps.

:mod:`~appliance.phone_agent.interview` says *which* field comes next; this module says how
the exchange about it goes, and the loop (:mod:`~appliance.phone_agent.agent`) only carries
its steps out::

    turn = begin(state, talk, ask)            # ask: interview.next_step's Ask or AskTogether
    # or: turn = authorise(state, talk)       # next_step is Authorise: the summary, the yes to submit
    while True:
        for step in turn.steps:               # the last one waits for something, or ends the exchange
            match step:
                case Decision() | SpellingRequested() | TypeRequested(): ...  # session events
                case Send() | Say() | Prefix() | WatchSubmit(): ...          # done, nothing fed back
                case Question(): got = Heard(...) | Typed() | GaveUp()
                case PickOption(): got = Picked(option)                      # the LLM's
                case SideQuestion(): got = Answered(reply)                   # the LLM's
                case SubmitGrace(): got = Stopped(stopped)
                case Sync(): got = Synced()   # messages applied to the interview
                case Done() | EndCall(): ...  # the exchange (or, EndCall, the call) is over
        turn = carry(state, turn.talk, got)   # state: the interview as it stands now

A transition returns a :class:`Turn` (the new interview, the new talk, the steps); the
exchange in progress lives in :attr:`Talk.job`, so the same state in gives the same steps out.

**One field** (an :class:`~appliance.phone_agent.interview.Ask`), at most :data:`ATTEMPTS`
tries (answers that did not parse, side questions, page refusals), then given up:

- asked in words, spelled, or either with the offer of the box on the screen
  (:func:`~appliance.phone_agent.interview.ask_mode`; a spelling asked for is
  :class:`SpellingRequested`, the box offered :class:`TypeRequested`), after the page's
  reason for a refusal if any;
- "say that again" asks again; a question is a side question (:class:`SideQuestion`,
  answered by the LLM) and the field is asked again after the answer; an answer that names
  another field ("My username is …" to "What is your first name?") is pointed out;
- each answer is normalised in code (spelled or in words); a choice not named word for word
  is picked by the LLM (:class:`PickOption`); a yes/no or an option said word for word is
  sent confirmed with no read-back; an answer that gives no value is asked again;
- a name the ASR was unsure of (a word's probability below ``spell_below_prob``) is not
  read back but asked to be spelled at once (:data:`UNSURE`); an e-mail, code, number or
  phone it was unsure of (:data:`CHECKED_KINDS`) is read back on its own;
- each value is sent at once ``info_collected{confirmed: false}`` and read back; a "yes"
  sends it ``confirmed: true``. Where the next step is a plain question in words (not a
  yes/no, not a choice, not a re-ask, not typed), the read-back goes with it — *implicit
  confirmation*: "I have Miller. What is your date of birth?"; an answer to that question
  confirms the value and is the next field's answer; a "no …", a value of the read-back's
  strict kind that fits it and answers nothing else, or "My first name is …" naming the
  field read back, is the read-back's rejection (the next question goes back to the
  queue). A bare "Yes, that's right." to it confirms, and the next question is asked again.
  Where another question comes next but not a plain one, the value is confirmed unread and
  the summary states it by its label (:attr:`Talk.unread`, issue 27); where the summary
  comes next, it is read back on its own ("… Is that right?"). A value once rejected or
  asked to be spelled is read back on its own;
- a rejected read-back of a name, code, address, user name or e-mail leads to a spelling (a
  correction already spelled is read back at once; from the second "no" the field is asked
  again); other kinds read a "no, it's …" correction back, and when that leads nowhere ask
  again with the offer of the box; a page refusal during a read-back asks again with its
  reason; a page offering close matches ends the exchange (its pick comes next);
- an answer that resumes the one before (the line says the transcript began before the bot
  had said much, :attr:`Heard.resumes`) and makes a different value of a strict kind (code,
  number, phone, e-mail, date) is read back whole;
- a value the person typed for the field asked ends the exchange ("Thanks, I have what you
  typed."); a ``step_failed`` arriving while the agent waits (:class:`GaveUp`) puts the field
  back in the queue, to be asked after the explanation.

**Fields asked together** (:class:`~appliance.phone_agent.interview.AskTogether`: a given
and a family name, a date's day, month and year fields): one question, one read-back (with
the next question when it may be); a rejected joint read-back asks each on its own (a
date's "no, it's …" is read back first); a name with a word the ASR was unsure of, or one
not understood, is asked part by part.

**The page's close matches** (an ask with ``choices``): the person picks one, with no
read-back; three answers that name none give the field up.

**Several answers in one breath** (issue 27): an answer that says :data:`MORE_WORDS` words or
more besides the value asked for (or, asked together, besides the name or date) is searched
for the values of the fields still waiting (:class:`LookAhead`: the LLM's copy of the words,
kept by :func:`~appliance.phone_agent.told.copies`); the field asked takes its own words only.
The fields whose words their parsers take are never asked: their values and the one asked
are read back together, once, by their labels (an ``AskTogether`` of ``several``: "I have
Ada Lovelace, your date of birth, …, and your passport number, …. What is your email?");
an answer naming one of them ("No, my passport number is …") takes that one up again, a
plain "no" asks each on its own. Words no parser takes are that field's answer when it
comes (:attr:`Talk.ahead`).

**The person steering the call** (issue 27), instead of any answer but the summary's:
"stop", "cancel", "forget it" as the whole answer (:data:`CANCEL`) ends the task unsent and
says so (``status_update{canceled}``, :class:`EndCall`); "what's left?" (:data:`LEFT`) lists
the fields still to do and asks the question again; "wait", "hold on" (:data:`HOLD`) holds
the interview (:data:`HELD`, then the longer silence of :attr:`Question.hold` before "Are
you still there?"), and the person's next words answer the question asked before.

**A read-back cut off by barge-in** (this rule is ours, issue 31): the person's answer to a
read-back counts only if the read-back's statement ("I have Miller.") was heard fully —
:func:`heard_fully`: the line played it to the end, or the clauses played before the
barge-in hold the whole statement. Otherwise a "yes", or an answer to the next question
said with it, confirms nothing: the read-back is said again on its own (decision
``read_back_cut``); a "no …" still objects and a resumed answer is still taken whole.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal

from appliance.phone_agent import candidates, fields, interview, normalise, spelling, told
from appliance.phone_agent.interview import Ask, AskMode, AskTogether, Interview
from appliance.protocol import AddItem, FieldSpec, FieldValue, InfoCollected, StatusUpdate, SubmitAuthorized
from appliance.protocol.events import DecisionWhat
from appliance.protocol.line import SayOutcome

#: tries at one field (answers that did not parse, side questions, page refusals) before it is given up
ATTEMPTS = 4
#: read-backs of one value (corrections read back, cut read-backs said again) before it is judged unclear
READ_BACKS = 3
#: answers to a question asked together, or to the page's close matches, before giving up on them
TOGETHER_TRIES = CHOICE_TRIES = 3
#: words an answer holds besides its value (as said, lead-in included) before it is searched for other
#: fields' values: "I'm Ada Lovelace, born the tenth of December 1990" (issue 27: several answers in one breath)
MORE_WORDS = 6
#: said before a request to spell a name the ASR was unsure of, instead of a read-back
UNSURE = "I'm not sure I heard that right."
TYPED = "Thanks, I have what you typed."
#: kinds whose parser takes only a value of that kind (a name or free text would take any answer)
STRICT_KINDS: tuple[fields.FieldKind, ...] = ("date", "number", "phone", "email", "code")
#: kinds whose value the ASR may be unsure of and a person cannot check in a passing read-back:
#: read back on their own when it is (issue 27: "an explicit read-back only for strict kinds
#: (e-mail, codes, numbers) with low confidence")
CHECKED_KINDS: tuple[fields.FieldKind, ...] = ("number", "phone", "email", "code")
REPEAT = re.compile(r"\b(say that again|repeat|pardon|come again|didn't (catch|hear))\b", re.I)
#: an answer to the summary that asks for one more item rather than declining ("Not yet: add …")
ADD_ITEM = re.compile(
    r"\b(add|another|one more|second|third|also (travel|com|book)|as well|travell?ing with me|coming with me)\b", re.I
)
#: an explicit end: "don't submit", "stop", "cancel" (never read as a request for more)
STOP = re.compile(r"\b(don'?t (submit|send)|do not (submit|send)|stop|cancel|forget it|never mind)\b", re.I)
#: a "no" to submitting that states a detail ("No, I was born on the eleventh of June.", "No, it's 14 March.",
#: "No, my …"): a correction, not a refusal ("No.", "No, leave it." refuse)
STATES_DETAIL = re.compile(
    r"\b(?:my|i was|i am|i'?m|it'?s|it is|born|live|lives)\b|\d|@|\b(?:january|february|march|april|may|june|july|august|september|october|november|december)\b",
    re.I,
)
#: the person ends the task mid-interview: the whole answer is "stop", "cancel", "forget it" … (issue 27:
#: only an explicit stop ends it; "never mind, it's Miller" is an answer)
CANCEL = re.compile(
    r"^\W*(?:(?:ok|okay|no|actually|sorry|oh|please|look)\W+)*"
    r"(?:stop|cancel|forget it|never mind|i want to stop|let'?s stop|i'?ve changed my mind|"
    r"(?:stop|cancel|quit) (?:it|this|that|the form|filling(?: (?:it|this|the form))?|everything)|"
    r"i don'?t want to (?:do|fill (?:in|out)) (?:(?:this|that|the) form|this|that|it)(?: any ?more)?)"
    r"(?:\W+(?:please|now|then|thanks|thank you|sorry))*\W*$",
    re.I,
)
#: "what's left?", "where are we?", "how much more?": the fields still to do, then the question again
LEFT = re.compile(
    r"\b(?:what'?s left|what is left|where are we|how much (?:more|longer|is left)|how many more|"
    r"what else (?:do you need|is there)|what do you still need)\b",
    re.I,
)
#: "wait", "hold on", "one moment": the interview holds until the person speaks again
HOLD = re.compile(
    r"^\W*(?:(?:ok|okay|sorry|um+|uh+|er+)\W+)*"
    r"(?:wait|hold on|hang on|one moment|one sec(?:ond)?|just a (?:moment|second|sec|minute)|"
    r"give me a (?:moment|second|sec|minute))"
    r"(?:\W+(?:please|a (?:moment|second|sec|minute|bit)|i need to (?:check|look|find it)))*\W*$",
    re.I,
)
#: what the phone agent says when the person holds the interview ("wait")
HELD = "Sure, take your time."
#: an answer that gives no value ("I'm not sure", "I don't know", "skip", "no idea"): never typed
#: into a field (issue 26: "NOTSURE" was typed as an IBAN)
NO_VALUE = re.compile(
    r"^\W*(?:(?:um+|uh+|er+|hmm+|sorry|oh|well)\W+)*"
    r"(?:i'?m not sure|i am not sure|not sure|i don'?t know|i do not know|don'?t know|no idea|i have no idea|"
    r"skip(?: it| that| this(?: one)?)?|pass|i'?d rather not(?: say)?|i can'?t remember|i don'?t remember|"
    r"i don'?t have (?:one|it|that))"
    r"(?:\W+(?:sorry|to be honest|really|off hand|offhand|right now))*\W*$",
    re.I,
)


def is_question(text: str) -> bool:
    """Whether the person asked something rather than answered ("Why do you need it?")."""
    t = text.strip().casefold()
    return t.endswith("?") or bool(
        re.match(r"(why|what|how|who|where|when|which|can|could|do|does|is|are|will|would|should)\b", t)
    )


def _correction(text: str) -> str:
    """An objection without its "no" ("No, it's Leeds." → "it's Leeds."; tiny.en writes "no" as
    "now"), a request for a change without its asking ("Can you change my travel date to 12
    June?" → "12 June")."""
    text = re.sub(r"(?i)^\W*(no|now)\b[\W]*", "", text)
    asked = re.match(
        r"(?i)^\W*(?:(?:please|can you|could you|would you)\W+)*(?:change|make|set|correct|update)\b(.*)$", text
    )
    if asked:  # "change my travel date to 12 June?": the value after "to"
        to = re.search(r"(?i)\b(?:to|should be|is)\b\s*(.+?)[?.!]*$", asked.group(1))
        return to.group(1) if to else text
    return text


def _letters(text: str) -> str:
    """Letters and digits only, casefolded: "D'Arcy-Byrne," → "darcybyrne"."""
    return "".join(re.findall(r"[^\W_]+", text.casefold()))


def heard_fully(said: SayOutcome | None, statement: str) -> bool:
    """Whether the person heard all of ``statement`` (a read-back's "I have …."), said in an
    utterance whose outcome is ``said`` (None: unknown, taken as played): it was not
    interrupted, or the clauses played before the barge-in hold the whole statement (compared
    by letters and digits, so markers and punctuation do not matter)."""
    return said is None or not said.interrupted or _letters(statement) in _letters(said.heard)


# ---- steps: what the loop does ---------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """Emit session event ``decision{what, **details}``."""

    what: DecisionWhat
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SpellingRequested:
    """Emit ``spelling_requested{field, label, times}``: a spelling of ``field`` was asked for."""

    field: str
    label: str
    times: int


@dataclass(frozen=True)
class TypeRequested:
    """Emit ``type_requested{field, label}``: the box on the screen was offered for ``field``."""

    field: str
    label: str


@dataclass(frozen=True)
class Send:
    """Send ``payload`` to the computer agent."""

    payload: InfoCollected | SubmitAuthorized | StatusUpdate


@dataclass(frozen=True)
class Say:
    """Say ``text``; no answer is awaited."""

    text: str


@dataclass(frozen=True)
class Prefix:
    """Say ``text`` before the next utterance, whatever it is ('' = nothing)."""

    text: str


@dataclass(frozen=True)
class Question:
    """Say ``text`` and wait for the answer → :class:`Heard`, or :class:`Typed` (the person
    typed ``field``'s value meanwhile), or :class:`GaveUp`. ``field``: the field whose answer
    is awaited (None: fields asked together). ``sync``: apply the messages that arrived before
    feeding the answer back. ``counted``: the answer counts as an interview turn (not the
    answers at the summary). ``hold``: the person asked to wait (:data:`HOLD`); the silence
    before checking they are there is the longer hold."""

    text: str
    field: str | None
    sync: bool = False
    counted: bool = True
    hold: bool = False  # the person asked to wait: no "Are you still there?" for a longer while


@dataclass(frozen=True)
class PickOption:
    """Ask the LLM which of ``spec.options`` the person meant by ``text`` → :class:`Picked`."""

    spec: FieldSpec
    text: str


@dataclass(frozen=True)
class SideQuestion:
    """Have the LLM answer the person's question ``text`` about ``spec`` → :class:`Answered`."""

    spec: FieldSpec
    text: str


@dataclass(frozen=True)
class LookAhead:
    """Have the LLM find, in the person's answer ``text``, the words that give values of
    ``specs`` (fields not asked yet) → :class:`Ahead`."""

    specs: tuple[FieldSpec, ...]
    text: str


@dataclass(frozen=True)
class SubmitGrace:
    """The person said yes to submitting: say so and listen for a "wait"/"stop"/"no" within
    the grace time → :class:`Stopped`."""


@dataclass(frozen=True)
class WatchSubmit:
    """Until the page has answered, a "wait"/"stop"/"no" interrupts the submit (nothing is fed back)."""


@dataclass(frozen=True)
class EndCall:
    """The call ends unsent: send ``task_completed{summary}``; the exchange is over."""

    summary: str


@dataclass(frozen=True)
class Sync:
    """Apply the messages that arrived (a safe point) → :class:`Synced`."""


@dataclass(frozen=True)
class Done:
    """The exchange is over."""


Step = (
    Decision
    | SpellingRequested
    | TypeRequested
    | Send
    | Say
    | Prefix
    | Question
    | PickOption
    | SideQuestion
    | LookAhead
    | SubmitGrace
    | WatchSubmit
    | EndCall
    | Sync
    | Done
)

# ---- what the loop feeds back ----------------------------------------------------------------------


@dataclass(frozen=True)
class Heard:
    """The person's answer to a :class:`Question`: ``text`` (cleaned), its ``words`` with the
    ASR's probabilities (empty: typed text), whether it ``resumes`` the answer before
    (:attr:`~appliance.phone_agent.line.Line.heard_resumes`), and ``said``: how the question
    was said (the last :class:`~appliance.protocol.line.SayOutcome` of its text; None: unknown)."""

    text: str
    words: tuple[tuple[str, float], ...] = ()
    resumes: bool = False
    said: SayOutcome | None = None


@dataclass(frozen=True)
class Typed:
    """The person typed the value of the field asked instead of saying it."""


@dataclass(frozen=True)
class GaveUp:
    """A ``step_failed`` arrived while the agent waited: it is explained first."""


@dataclass(frozen=True)
class Picked:
    """The LLM's pick (None: none of the options)."""

    option: str | None


@dataclass(frozen=True)
class Answered:
    """The LLM's answer to a side question."""

    reply: str


@dataclass(frozen=True)
class Ahead:
    """The words of an answer that give other fields' values, by field name (none: ``{}``)."""

    said: Mapping[str, str]


@dataclass(frozen=True)
class Synced:
    """The messages that arrived were applied."""


@dataclass(frozen=True)
class Stopped:
    """Whether the person said stop within the grace time after their yes to submitting."""

    stopped: bool


Got = Heard | Typed | GaveUp | Picked | Answered | Ahead | Synced | Stopped

# ---- the exchange in progress ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Field:
    """One field being asked (``attempt``: tries begun; ``say``: the next question, None: the
    plain one; ``answer``: an answer already heard, carried from the read-back before;
    ``heard``: the answer waiting for the LLM's pick, or with ``value`` its value waiting
    for the next step to be known)."""

    ask: Ask
    attempt: int = 0
    say: str | None = None
    reason: str = ""
    mode: AskMode = "words"
    answer: Heard | None = None
    heard: Heard | None = None
    value: _Value | None = None
    no_value: int = 0  # answers that gave no value (:data:`NO_VALUE`) to a required field


@dataclass(frozen=True)
class _Value:
    """A value of ``spec`` from the answer ``heard`` (``spelled``: the person spelled it)."""

    spec: FieldSpec
    value: FieldValue
    heard: str
    spelled: bool

    @property
    def stated(self) -> str:
        return fields.stated(self.spec, self.value, self.heard, self.spelled)


@dataclass(frozen=True)
class _ReadBack:
    """``value`` read back on its own (``tries`` so far; ``answer``: an answer given already;
    ``rejected``: that answer is known to object). Ends back in ``parent``."""

    parent: _Field
    value: _Value
    tries: int = 0
    answer: Heard | None = None
    rejected: bool = False


@dataclass(frozen=True)
class _Implicit:
    """``value`` read back with ``nxt``'s question (``repeated``: asked again once after "say that again")."""

    parent: _Field
    value: _Value
    nxt: Ask
    repeated: bool = False


@dataclass(frozen=True)
class _Choose:
    """The page's close matches for ``ask`` (``say``: the question; ``heard``: the answer waiting for the LLM's pick)."""

    ask: Ask
    tries: int = 0
    say: str = ""
    heard: str = ""


@dataclass(frozen=True)
class _Together:
    """Fields asked together (``values`` heard, None: not yet; ``nxt``: the question said
    with their read-back; ``unheard``: answers that gave no values)."""

    together: AskTogether
    say: str
    tries: int = 0
    values: tuple[FieldValue, ...] | None = None
    unheard: int = 0
    nxt: Ask | None = None
    repeated: bool = False
    waiting: Literal["question", "read_back"] = "question"  # the answer awaited
    heard: Heard | None = None  # the answer waiting for the LLM's look ahead
    looked: bool = False  # the answer was searched for other fields' values
    words: tuple[str, ...] = ()  # ``several``: the words each value was heard in
    alone: bool = False  # read back on its own, not with the next question nor in the summary


@dataclass(frozen=True)
class _Authorising:
    """The summary read and authorisation to submit asked (``tries`` so far; ``question``: the next)."""

    question: str
    tries: int = 0


_Job = _Field | _ReadBack | _Implicit | _Choose | _Together | _Authorising


def _frozen(d: Mapping | None = None) -> Mapping:
    return MappingProxyType(dict(d or {}))


@dataclass(frozen=True)
class Talk:
    """The call's exchanges: ``sent``: the last value sent per field; ``read_backs``: read-backs
    said; ``reasons_said``: page refusals explained before a question; ``job``: the exchange in
    progress (None: none); ``asked``: the question waiting for its answer; ``ahead``: what the
    person said for fields before they were asked (their answer when they come); ``unread``:
    values confirmed without a read-back, by field name → the words heard (the summary states
    them, :func:`authorise`); ``date_order`` and ``spell_below_prob`` as the agent was given."""

    date_order: str = "DMY"
    spell_below_prob: float = 0.0
    sent: Mapping[str, FieldValue] = field(default_factory=_frozen)
    read_backs: int = 0
    reasons_said: int = 0
    job: _Job | None = None
    asked: Question | None = None  # the question the answer awaited is for
    ahead: Mapping[str, str] = field(default_factory=_frozen)  # words said for fields before their question
    unread: Mapping[str, str] = field(default_factory=_frozen)  # confirmed unread: the summary states them

    def held(self, state: Interview) -> dict[str, FieldValue]:
        """Each field's value as the interview holds it: confirmed, else the last one sent."""
        return {**self.sent, **state.confirmed}


@dataclass(frozen=True)
class Turn:
    """The new interview and talk, and the steps to carry out; the last one waits (or is :class:`Done`)."""

    state: Interview
    talk: Talk
    steps: tuple[Step, ...]


class _Run:
    """One transition being worked out: the state, the talk and the steps so far."""

    def __init__(self, state: Interview, talk: Talk):
        self.s, self.t, self.steps = state, talk, []

    def wait(self, job: _Job | None, step: Step) -> Turn:
        self.t = replace(self.t, job=job, asked=step if isinstance(step, Question) else None)
        return Turn(self.s, self.t, (*self.steps, step))

    def done(self) -> Turn:
        return self.wait(None, Done())

    def decide(self, what: DecisionWhat, **details: Any) -> None:
        self.steps.append(Decision(what, details))

    def read_back(self, *names: str, asking: Ask | None = None) -> None:
        """A read-back of fields ``names`` is about to be said: counted and logged (``read_back``,
        with ``asking``: the next field's question said with it, if any)."""
        self.t = replace(self.t, read_backs=self.t.read_backs + 1)
        self.decide("read_back", fields=list(names), **({"asking": asking.spec.name} if asking else {}))

    def asked(self, name: str) -> None:
        """A question for field ``name`` is about to be said: counted (:func:`interview.asked`)
        and logged (``field_asked`` with how many ``times``: what shows a field asked again)."""
        self.s = interview.asked(self.s, name)
        self.decide("field_asked", field=name, times=self.s.asks[name])

    def say(self, text: str) -> None:
        self.steps.append(Say(text))

    def send(self, spec: FieldSpec, value: FieldValue, confirmed: bool) -> None:
        unread = {n: w for n, w in self.t.unread.items() if n != spec.name}
        self.t = replace(self.t, sent=_frozen({**self.t.sent, spec.name: value}), unread=_frozen(unread))
        if confirmed:
            self.s = interview.confirm(self.s, spec.name, value)
        self.steps.append(Send(InfoCollected(field=spec.name, value=value, confirmed=confirmed)))

    def prompt(self, spec: FieldSpec, mode: AskMode, reason: str = "") -> str:
        """The question for ``spec`` in ``mode``, after the page's reason for a refusal if any."""
        if mode == "words":
            q = fields.question(spec)
        elif mode == "words_or_type":
            q = f"{fields.question(spec)} {fields.TYPE_OFFER}"
        else:
            q = fields.spell_question(spec, or_type=mode == "spell_or_type")
        if reason:
            self.t = replace(self.t, reasons_said=self.t.reasons_said + 1)
            return f"Sorry, the form did not accept that: {fields.spoken_text(reason).rstrip('. ')}. {q}"
        return q

    def offer(self, spec: FieldSpec, mode: AskMode) -> None:
        """Record how ``spec`` is asked beyond plain words: a spelling requested, the page's box offered."""
        if mode.startswith("spell"):
            self.s = interview.spell_asked(self.s, spec.name)
            self.steps.append(SpellingRequested(spec.name, spec.label, self.s.spell_asks[spec.name]))
        if mode.endswith("_or_type"):
            self.steps.append(TypeRequested(spec.name, spec.label))

    def unread(self, spec: FieldSpec, value: FieldValue, heard: str) -> None:
        """``value`` confirmed with no read-back of its own: the summary states it (issue 27,
        "the remaining confirmations gathered into the summary"). Decides ``read_back_in_summary``."""
        self.send(spec, value, confirmed=True)
        self.t = replace(self.t, unread=_frozen({**self.t.unread, spec.name: heard}))
        self.decide("read_back_in_summary", field=spec.name)

    def hand_over(self, spec: FieldSpec) -> Turn:
        """``spec`` had its questions (:data:`~appliance.phone_agent.interview.MAX_ASKS`): the person sets it."""
        self.s = interview.hand_over(self.s, spec.name)
        self.decide("field_handed_over", field=spec.name, asks=self.s.asks.get(spec.name, 0))
        return self.done()

    def give_up(self, spec: FieldSpec) -> Turn:
        self.s = interview.give_up(self.s, spec.name)  # back of the queue, or the form fails
        self.decide("field_given_up", field=spec.name, times=self.s.given_up[spec.name])
        return self.done()


# ---- the transitions -------------------------------------------------------------------------------


def begin(state: Interview, talk: Talk, ask: Ask | AskTogether, answer: Heard | None = None) -> Turn:
    """Begin ``ask`` (the interview's next step: it leaves the queue); ``answer``: the
    person's answer to its question, heard already (one field only).

    Raises:
        InterviewError: ``ask`` is not the next step (see :func:`~appliance.phone_agent.interview.begin`).
    """
    r = _Run(interview.begin(state, ask), talk)
    if isinstance(ask, AskTogether):
        q = fields.question_together(ask.what, tuple(a.spec for a in ask.asks))
        return _together(r, _Together(ask, q))
    return _start_field(r, ask, answer)


def carry(state: Interview, talk: Talk, got: Got) -> Turn:
    """The exchange after the loop carried out the last step of :attr:`Turn.steps` and got
    ``got``; ``state``: the interview as it stands now (messages may have been applied).

    Raises:
        ValueError: no exchange is in progress, or ``got`` is not what its last step awaits.
    """
    r = _Run(state, talk)
    job = talk.job
    if job is None:
        raise ValueError(f"{type(got).__name__} fed back, but no exchange is in progress")
    if isinstance(got, Heard) and talk.asked is not None and not isinstance(job, _Authorising):
        control = _control(r, job, talk.asked, got.text)
        if control is not None:
            return control
    match job, got:
        case _Field(), Heard():
            return _field_answer(r, job, got)
        case _Field(), Answered(reply=reply):
            return _field_top(r, replace(job, say=f"{reply} {r.prompt(job.ask.spec, job.mode)}"))
        case _Field(heard=Heard() as heard), Picked(option=option):
            return _field_value(r, job, heard, option, False, option is not None)
        case _Field(heard=Heard() as heard), Ahead(said=said):
            spec = job.ask.spec
            others = {n: w for n, w in said.items() if n != spec.name}
            own = replace(heard, text=said[spec.name]) if spec.name in said and others else heard  # its own words only
            value, spelled = _parse(r, spec, own.text, job.mode)
            together = None if spelled or value is None else _breath(r, (job.ask,), (value,), own, others)
            if together is not None:
                return together
            _keep_ahead(r, spec.name, others)
            return _field_parsed(r, replace(job, heard=None), own, look_ahead=False)
        case _Field(value=_Value() as value), Synced():
            return _read_back_or_implicit(r, job, value)
        case _ReadBack(), Heard():
            return _read_back_answer(r, job, got)
        case _Implicit(), Heard():
            return _implicit_answer(r, job, got)
        case _Choose(), Heard():
            return _choose_answer(r, job, got)
        case _Choose(), Picked(option=option):
            return _picked(r, job, option)
        case _Together(heard=Heard() as heard), Ahead(said=said) if job.together.what == "several":
            return _several_answer(r, replace(job, heard=None), heard, said)
        case _Together(heard=Heard() as heard), Ahead(said=said):
            mine = [s.name for s in _specs(job)]
            others = {n: w for n, w in said.items() if n not in mine}
            words_ = " ".join(dict.fromkeys(said[n] for n in mine if n in said))  # "Ada" and "Lovelace"
            own = replace(heard, text=words_) if words_ and others else heard
            values = fields.parse_together(job.together.what, _specs(job), own.text, r.t.date_order)
            together = _breath(r, job.together.asks, values, own, others)
            if together is not None:
                return together
            _keep_ahead(r, mine[0], others)
            return _together_answer(r, replace(job, heard=None), own)
        case _Together(), Heard():
            if job.waiting == "read_back":
                return _together_read_back_answer(r, job, got)
            return _together_answer(r, job, got)
        case _Together(), Answered(reply=reply):
            return _together(r, replace(job, say=f"{reply} {_together_question(job)}"))
        case _Together(), Synced():
            return _together_read_back(r, job)
        case _Authorising(), Heard():
            return _authorise_answer(r, job, got)
        case _Authorising(), Stopped(stopped=True):
            r.say("All right, I've stopped. Nothing has been sent.")
            return _authorise(r, replace(job, question="Shall I submit the form now, or leave it unsent?"))
        case _Authorising(), Stopped(stopped=False):
            r.s = interview.authorised(r.s)
            r.steps.append(Send(SubmitAuthorized()))
            r.decide("submit_authorized")
            r.steps.append(WatchSubmit())
            return r.done()
        case _, Typed():
            return _typed(r, job)
        case _, GaveUp():
            return _gave_up(r, job)
    raise ValueError(f"{type(got).__name__} does not answer the exchange's last step ({type(job).__name__})")


def _keep_ahead(r: _Run, asked: str, said: Mapping[str, str]) -> None:
    """Words said for fields not asked yet (``said``, by field name) become their answers
    when they come (:attr:`Talk.ahead`). Decides ``answered_ahead``."""
    if said:
        r.t = replace(r.t, ahead=_frozen({**r.t.ahead, **said}))
        r.decide("answered_ahead", field=asked, fields=sorted(said))


def _control(r: _Run, job: _Job, asked: Question, text: str) -> Turn | None:
    """The person steering the call instead of answering ``asked`` (issue 27), or None:
    "stop"/"cancel" (:data:`CANCEL`) ends the task unsent and says so; "what's left?"
    (:data:`LEFT`) is answered from the fields still to do and ``asked`` is said again;
    "wait" (:data:`HOLD`) holds the interview until the person speaks again (their next
    words answer ``asked``). At the summary, "stop" declines (:func:`authorise`)."""
    if CANCEL.match(text):
        r.decide("call_cancelled", heard=text)
        r.say("All right, I've stopped. Nothing has been sent. Goodbye.")
        r.steps.append(Send(StatusUpdate(state="canceled", message="the person cancelled the form")))
        return r.wait(None, EndCall("not submitted: the person cancelled"))
    if LEFT.search(text):
        asking = [a.spec.name for a in job.together.asks] if isinstance(job, _Together) else [asked.field]
        left = _still_to_do(r.s, asking)
        r.decide("progress_told", heard=text, left=len(left))
        told = f"Still to do: {_listed(left)}." if left else "This is the last one."
        return r.wait(job, replace(asked, text=f"{told} {asked.text}", hold=False))
    if HOLD.match(text):
        r.decide("interview_held", heard=text)
        return r.wait(job, replace(asked, text=HELD, hold=True))
    return None


def _still_to_do(state: Interview, asking: list[str | None]) -> list[str]:
    """The spoken labels of the fields not yet confirmed: those being asked first, then the
    queue's, in order."""
    names = [n for n in asking if n] + [a.spec.name for a in state.queue]
    return [
        fields.spoken_label(state.specs[n])
        for n in dict.fromkeys(names)
        if n in state.specs and n not in state.confirmed and n not in state.handed_over
    ]


def _listed(labels: list[str]) -> str:
    """ "your a, your b and your c" """
    said = [f"your {x}" if not re.match(r"(?i)(your|the)\b", x) else x for x in labels]
    return said[0] if len(said) == 1 else f"{', '.join(said[:-1])} and {said[-1]}"


def _typed(r: _Run, job: _Job) -> Turn:
    """The person typed the value asked for (the computer agent has it confirmed)."""
    match job:
        case _Implicit(value=v):  # the next field typed: the value read back was not objected to
            r.send(v.spec, v.value, confirmed=True)
        case _Together(values=values) if values is not None:
            _confirm_together(r, job)
    r.say(TYPED)
    return r.done()


def _gave_up(r: _Run, job: _Job) -> Turn:
    """A ``step_failed`` cut the wait short: what was being asked goes back to the queue."""
    match job:
        case _Field(ask=ask) | _ReadBack(parent=_Field(ask=ask)) | _Choose(ask=ask):
            r.s = interview.requeue(r.s, ask)
        case _Implicit(parent=_Field(ask=ask), nxt=nxt):
            r.s = interview.requeue(interview.requeue(r.s, nxt), ask)
        case _Together(together=together, nxt=nxt):
            if nxt is not None and job.waiting == "read_back":
                r.s = interview.requeue(r.s, nxt)
            r.s = interview.requeue(r.s, together)
    return r.done()  # authorisation: still requested, asked again after the explanation


# ---- one field -------------------------------------------------------------------------------------


def _start_field(r: _Run, ask: Ask, answer: Heard | None) -> Turn:
    if ask.choices:
        return _choose(r, _Choose(ask, say=candidates.question(ask.spec.label, ask.choices)))
    said = r.t.ahead.get(ask.spec.name)
    if said is not None:  # said before it was asked: that is its answer (never asked twice, issue 27)
        r.t = replace(r.t, ahead=_frozen({n: w for n, w in r.t.ahead.items() if n != ask.spec.name}))
        answer = answer or Heard(said)
    return _field_top(r, _Field(ask, reason=ask.reason, answer=answer))


def _field_top(r: _Run, f: _Field) -> Turn:
    """The next try at ``f``'s field: its question (or the answer carried)."""
    spec = f.ask.spec
    if f.attempt >= ATTEMPTS:
        return r.give_up(spec)
    if spec.name in r.s.typed:
        return r.done()
    if f.answer is None and interview.asked_out(r.s, spec.name):
        return r.hand_over(spec)
    mode = interview.ask_mode(r.s, spec)
    say = f.say
    if say is None and f.answer is None:
        say = r.prompt(spec, mode, f.reason)
        r.offer(spec, mode)
    carried = f.answer
    f = replace(f, attempt=f.attempt + 1, say=None, reason="", mode=mode, answer=None)
    if carried is not None:
        return _field_answer(r, f, carried)
    r.asked(spec.name)
    return r.wait(f, Question(say, spec.name))


def _field_answer(r: _Run, f: _Field, heard: Heard) -> Turn:
    spec, text, mode = f.ask.spec, heard.text, f.mode
    if REPEAT.search(text):
        return _field_top(r, f)
    if NO_VALUE.match(text):
        return _no_value(r, f, text)
    if is_question(text):  # a side question, not an answer: answer it, then ask again
        return r.wait(f, SideQuestion(spec, text))
    other = fields.named_field(text, spec, r.s.specs)
    if other is not None:  # "My username is …" to "What is your first name?": out of step
        r.decide("answer_names_another_field", field=spec.name, named=other.name, heard=text)
        return _field_top(
            r, replace(f, say=f"That sounds like your {fields.spoken_label(other)}. {r.prompt(spec, mode)}")
        )
    return _field_parsed(r, f, heard, look_ahead=True)


def _field_parsed(r: _Run, f: _Field, heard: Heard, look_ahead: bool) -> Turn:
    """``heard`` as the answer to ``f``'s question (a value, a choice to pick, or nothing);
    ``look_ahead``: an answer that says much more than the value is searched for other fields'
    values first (:class:`LookAhead`)."""
    spec, text, mode = f.ask.spec, heard.text, f.mode
    value, spelled = _parse(r, spec, text, mode)
    say_more = look_ahead and value is not None and not spelled and not mode.startswith("spell")
    others = _open_others(r, text, spec) if say_more and _says_more(text, (spec,), (value,)) else ()
    if others:
        return r.wait(replace(f, heard=heard), LookAhead((spec, *others), text))
    needs_read_back = fields.kind(spec) not in ("yesno", "choice") or (
        isinstance(value, str) and normalise.choice(text, (value,), by_sound=False) is None
    )  # matched by sound
    if value is None and fields.kind(spec) == "choice":
        close = normalise.choices_named(text, spec.options or ())
        if len(close) > 1:  # "Rome": Rome, Italy or Rome, Georgia? asked, never guessed (CONTRACTS)
            r.decide("choice_ambiguous", field=spec.name, heard=text, candidates=list(close))
            return _choose(r, _Choose(replace(f.ask, choices=close), say=candidates.question(spec.label, close)))
        return r.wait(replace(f, heard=heard), PickOption(spec, text))
    return _field_value(r, f, heard, value, spelled, needs_read_back)


def _says_more(text: str, specs: tuple[FieldSpec, ...], values: tuple[FieldValue, ...] | None) -> bool:
    """Whether the answer ``text`` holds :data:`MORE_WORDS` words or more besides ``values``
    of ``specs`` as they are said (its lead-in counted in: "I was born on" is four; no values
    parsed: three words for them)."""
    said = sum(len(re.findall(r"[^\W_]+", fields.spoken(s, v))) for s, v in zip(specs, values or ()))
    return len(re.findall(r"[^\W_]+", text)) - (said or 3) >= MORE_WORDS


def _open_others(r: _Run, text: str, *asked: FieldSpec) -> tuple[FieldSpec, ...]:
    """The fields waiting to be asked besides those ``asked`` that the answer ``text`` may
    give (:func:`~appliance.phone_agent.told.open_fields`, :func:`~appliance.phone_agent.told.may_give`),
    none already said."""
    names = {s.name for s in asked}
    waiting = [a.spec for a in r.s.queue if a.spec.name not in names and not a.choices and a.spec.name not in r.t.ahead]
    return tuple(
        s
        for s in told.open_fields([s for s in waiting if s.name not in r.s.confirmed])
        if told.may_give(text, s, request=False)
    )


def _no_value(r: _Run, f: _Field, text: str) -> Turn:
    """The person gave no value ("I'm not sure", "skip"): an optional field is left empty; a
    required one is explained and asked once more, then handed to the person."""
    spec = f.ask.spec
    r.decide("no_value", field=spec.name, heard=text, required=spec.required)
    if not spec.required:
        r.send(spec, "", confirmed=True)
        r.steps.append(Prefix("That's fine, I'll leave it empty. "))
        return r.done()
    if f.no_value:
        return r.hand_over(spec)
    say = f"The form needs your {fields.spoken_label(spec)} to go on. {r.prompt(spec, f.mode)}"
    return _field_top(r, replace(f, say=say, no_value=f.no_value + 1))


def _field_value(
    r: _Run, f: _Field, heard: Heard, value: FieldValue | None, spelled: bool, needs_read_back: bool
) -> Turn:
    spec = f.ask.spec
    if value is None:
        r.s = interview.not_understood(r.s, spec.name)
        mode = interview.ask_mode(r.s, spec)
        hint = "" if mode.startswith("spell") else fields.hint(spec)
        say = f"Sorry, I didn't get that. {hint} {r.prompt(spec, mode)}".replace("  ", " ")
        r.offer(spec, mode)
        return _field_top(r, replace(f, say=say, heard=None))
    if not needs_read_back:
        r.send(spec, value, confirmed=True)
        return r.done()
    if fields.kind(spec) == "name" and f.mode == "words" and not spelled and _unsure(r, spec, value, heard):
        r.s = interview.not_understood(r.s, spec.name)
        mode = interview.ask_mode(r.s, spec)
        say = f"{UNSURE} {r.prompt(spec, mode)}"
        r.offer(spec, mode)
        return _field_top(r, replace(f, say=say, heard=None))
    f = replace(f, heard=heard, value=_Value(spec, value, heard.text, spelled))
    if (
        r.s.rejections.get(spec.name)
        or spec.name in r.s.spell_asks
        or (fields.kind(spec) in CHECKED_KINDS and not spelled and _unsure(r, spec, value, heard))
    ):  # read back on its own
        return _read_back(r, _ReadBack(f, f.value))
    return r.wait(f, Sync())  # a safe point: the next step as it stands now


def _read_back_or_implicit(r: _Run, f: _Field, v: _Value) -> Turn:
    """Messages applied: read ``v`` back with the next question when it is a plain one; else,
    when another question comes next, leave it to the summary (:meth:`_Run.unread`); else
    (the summary or a wait comes next) read it back on its own."""
    nxt = _plain_next(r)
    if nxt is None and _asks_next(r):
        r.unread(v.spec, v.value, v.heard)
        return r.done()
    if nxt is None:
        return _read_back(r, _ReadBack(f, v))
    r.send(v.spec, v.value, confirmed=False)
    r.read_back(v.spec.name, asking=nxt)
    r.s = interview.begin(r.s, nxt)
    return _implicit(r, _Implicit(f, v, nxt))


def _field_result(r: _Run, f: _Field, result: _Outcome) -> Turn:
    """``f``'s value was read back: confirmed, refused by the page, rejected, or unclear."""
    spec = f.ask.spec
    f = replace(f, heard=None, value=None)
    if isinstance(result, _Confirmed):
        return r.done()
    if any(a.spec.name == spec.name and a.choices for a in r.s.queue):
        return r.done()  # the page offers close matches: that ask, with its choices, comes next
    match result:
        case _Refused(reason=reason):  # the page refused it: ask again right here, with its reason
            r.s, why = interview.reask(r.s, spec.name)
            return _field_top(r, replace(f, reason=why or reason))
        case _Rejected(more=False):
            return r.give_up(spec)
        case _Rejected():
            r.steps.append(Prefix("Sorry about that. "))
            return _field_top(r, f)
    if not fields.spellable(spec):  # a choice, date or number misheard: spelled or typed next (ask_mode)
        r.s = interview.not_understood(r.s, spec.name)
    mode = interview.ask_mode(r.s, spec)
    say = f"Let's try again. {r.prompt(spec, mode)}"
    r.offer(spec, mode)
    return _field_top(r, replace(f, say=say))


@dataclass(frozen=True)
class _Confirmed:
    pass


@dataclass(frozen=True)
class _Refused:
    reason: str


@dataclass(frozen=True)
class _Rejected:
    more: bool  # the field may still be asked


@dataclass(frozen=True)
class _Unclear:
    pass


#: How a read-back ended: the person accepted the value, the page refused it, the person
#: rejected it (``more``: the field may still be asked), or the answers led nowhere.
_Outcome = _Confirmed | _Refused | _Rejected | _Unclear


def _read_back(r: _Run, rb: _ReadBack) -> Turn:
    """The next read-back of ``rb``'s value (or the answer given already); after
    :data:`READ_BACKS` the value is unclear."""
    if rb.tries >= READ_BACKS:
        return _field_result(r, rb.parent, _Unclear())
    rb = replace(rb, tries=rb.tries + 1)
    if rb.answer is not None:
        return _read_back_answer(r, replace(rb, answer=None), rb.answer)
    v = rb.value
    r.send(v.spec, v.value, confirmed=False)
    r.read_back(v.spec.name)
    return r.wait(rb, Question(fields.read_back(v.spec, v.value, v.heard, v.spelled), v.spec.name, sync=True))


def _read_back_answer(r: _Run, rb: _ReadBack, heard: Heard) -> Turn:
    """Until the person accepts the value, the page refuses it, or the person rejects it (a
    name, code, … then is spelled; another kind's "no, it's …" is read back)."""
    v, text = rb.value, heard.text
    spec = v.spec
    if interview.refused(r.s, spec.name, v.value):
        return _field_result(r, rb.parent, _Refused(r.s.refusals[spec.name].reason))
    resumed = None if rb.rejected else _resumed(r, v, heard)
    if resumed is not None:
        return _read_back(r, replace(rb, value=resumed))
    yes = False if rb.rejected else normalise.yes_no(text)
    rb = replace(rb, rejected=False)
    if yes and not heard_fully(heard.said, v.stated):  # a yes to what was not heard: said again
        r.decide("read_back_cut", field=spec.name, heard=heard.said.heard if heard.said else "")
        return _read_back(r, rb)
    if yes:
        r.send(spec, v.value, confirmed=True)
        return _field_result(r, rb.parent, _Confirmed())
    said = _correction(text)
    kind = fields.kind(spec)
    if fields.spellable(spec):
        if yes is None and not spelling.looks_spelled(said, kind):
            return _field_result(r, rb.parent, _Unclear())
        r.s, more = interview.rejected(r.s, spec.name)
        r.decide("read_back_rejected", field=spec.name, times=r.s.rejections[spec.name])
        again = fields.parse_spelled(spec, said) if spelling.looks_spelled(said, kind) else None
        # spelled in the first correction: read that back at once; from the second "no" on, the
        # field is asked again (a spelling, then the box on the screen) rather than read back
        if again is None or not more or r.s.rejections[spec.name] >= 2:
            return _field_result(r, rb.parent, _Rejected(more))
        return _read_back(r, replace(rb, value=_Value(spec, again, said, True)))
    corrected = fields.parse(spec, said, r.t.date_order)
    if yes is False and corrected is not None:  # "No, it's …": read that back (the same value
        return _read_back(r, replace(rb, value=replace(v, value=corrected)))  # again when the person misheard)
    return _field_result(r, rb.parent, _Unclear())


def _implicit(r: _Run, im: _Implicit) -> Turn:
    """Say the read-back with the next field's question (that field begun)."""
    say = f"{im.value.stated} {r.prompt(im.nxt.spec, 'words')}"
    return r.wait(im, Question(say, im.nxt.spec.name, sync=True))


def _implicit_answer(r: _Run, im: _Implicit, heard: Heard) -> Turn:
    """An answer that does not object confirms the value and is the next field's answer; an
    objection is the read-back's "no" (the next field goes back to the queue). A page refusal
    meanwhile takes the value back (it is asked again with the page's reason) and the answer
    still goes to the next field."""
    if REPEAT.search(heard.text) and not im.repeated:  # "Sorry, could you say that again?": the read-back too
        return _implicit(r, replace(im, repeated=True))
    v, nxt, text = im.value, im.nxt, heard.text
    resumed = _resumed(r, v, heard)
    if resumed is not None:  # more of the answer, not one to the next question: read the whole back
        r.s = interview.requeue(r.s, nxt)
        return _read_back(r, _ReadBack(im.parent, resumed))
    if _objected(r, text, nxt, v.spec):
        r.decide("implicit_read_back_rejected", field=v.spec.name)
        return _read_back(r, _ReadBack(im.parent, v, answer=heard, rejected=True))
    if not heard_fully(heard.said, v.stated):  # no answer to a question not heard: read back on its own
        r.s = interview.requeue(r.s, nxt)
        r.decide("read_back_cut", field=v.spec.name, heard=heard.said.heard if heard.said else "")
        return _read_back(r, _ReadBack(im.parent, v))
    if not interview.refused(r.s, v.spec.name, v.value):
        r.send(v.spec, v.value, confirmed=True)
    return _carry_to(r, nxt, heard)


def _carry_to(r: _Run, nxt: Ask, heard: Heard) -> Turn:
    """``heard`` answers ``nxt``'s question (begun), unless it only said yes to the read-back
    ("Yes, that's right."): then ``nxt`` is asked again."""
    if normalise.yes_no(heard.text) and len(heard.text.split()) <= 4:
        r.s = interview.requeue(r.s, nxt)
        return r.done()
    return _start_field(r, nxt, heard)


def _asks_next(r: _Run) -> bool:
    """Whether the interview's next step is a question about a field (so the summary, where
    a value left unread is stated, is still to come after it)."""
    return isinstance(interview.next_step(r.s), Ask | AskTogether)


def _plain_next(r: _Run) -> Ask | None:
    """The next field's ask when a read-back may go with its question: the next step is a
    plain question in words, not a yes/no (a "no" to it would read as an objection), nor a
    field the person has answered ahead (it is read back on its own next)."""
    state = r.s
    nxt = interview.next_step(state)
    if (
        not isinstance(nxt, Ask)
        or nxt.spec.name in r.t.ahead
        or nxt.choices
        or nxt.reason
        or fields.kind(nxt.spec) == "yesno"
        or nxt.spec.name in state.typed
        or interview.ask_mode(state, nxt.spec) != "words"
    ):
        return None
    return nxt


def _objected(r: _Run, text: str, nxt: Ask, about: FieldSpec | None = None) -> bool:
    """Whether ``text``, the answer to a read-back of ``about`` said with ``nxt``'s question,
    objects to the read-back: a "no …" (not one of ``nxt``'s options that starts with no),
    or a value of ``about``'s strict kinds (a date, number, phone, e-mail, code) that fits
    its pattern and is no answer to ``nxt`` (ASR wrote "No, it's the 2nd of June" as "Now,
    it's …", and the correction became the seat; bench: "My nationality desires." was read as
    the passport number NATIONALITYDESIRES and taken for an objection to a right one). Then
    ``nxt`` goes back to the front of the queue."""
    says_next = bool(nxt.spec.options and normalise.choice(text, nxt.spec.options, by_sound=False))
    objected = normalise.yes_no(text) is False and not says_next
    if about is not None and fields.named_field(text, nxt.spec, r.s.specs) == about:
        objected = True  # "My first name is David." to "I have David Miller. What is your last name?"
    if not objected and about is not None and fields.kind(about) in STRICT_KINDS and not says_next:
        value = fields.parse(about, text, r.t.date_order)
        objected = (
            value is not None
            and fields.fits(about, value)
            and (bool(nxt.spec.options) or fields.parse(nxt.spec, text, r.t.date_order) is None)
        )
    if objected:
        r.s = interview.requeue(r.s, nxt)
    return objected


def _parse(r: _Run, spec: FieldSpec, text: str, mode: AskMode) -> tuple[FieldValue | None, bool]:
    """The value in an answer, and whether the person spelled it."""
    kind = fields.kind(spec) if fields.spellable(spec) else "name"
    by_letter = mode.startswith("spell")
    spelled = spelling.looks_spelled(text, kind) or (by_letter and spelling.letters(text, kind) is not None)
    if by_letter or (fields.spellable(spec) and spelled):
        value = fields.parse_spelled(spec, text)
        if value is not None:
            return value, True
        if spelled:  # a spelling that did not decode: its words are no answer ("India, Romelo, …")
            return None, False
    value = fields.parse(spec, text, r.t.date_order)
    return fields.own_part(spec, value, r.s.specs, r.t.held(r.s)), False


#: a name the ASR made of a fragment: a lone letter before a hyphen ("G-Gars") or a word of one letter
_FRAGMENT = re.compile(r"(?:^|\s)[^\W\d_]-|(?:^|\s)[^\W\d_](?:\s|$)")
#: an answer's words that carry no value ("My email address is …")
_LEAD_IN = frozenset("my is its it the a an and thats".split())


def _unsure(r: _Run, spec: FieldSpec, value: FieldValue, heard: Heard) -> bool:
    """Whether the ASR was unsure of ``value`` (in the answer ``heard``): a name holding a
    fragment (:data:`_FRAGMENT`, issue 27: "G-Gars" was read back twice before a spelling),
    or the least probability of the words that say it is below ``spell_below_prob`` — a
    name's own words (compared by their letters and digits; a word the normaliser rewrote is
    not judged), any other kind's words but the lead-in and its label's ("My email is …":
    an e-mail, a code or a number is said in words that are not its characters). Decides
    ``asr_unsure``."""
    if not isinstance(value, str):
        return False
    name = fields.kind(spec) == "name"
    if name and _FRAGMENT.search(value):  # "G-Gars", "A Lovelace": a stutter or a lone letter, never a name as said
        r.decide("asr_unsure", field=spec.name, value=value, prob=None)
        return True
    if not heard.words:
        return False
    if name:
        probs: dict[str, float] = {}
        for word, p in heard.words:
            key = _letters(word)
            probs[key] = min(p, probs.get(key, 1.0))
        found = [probs[w] for w in map(_letters, value.split()) if w in probs]
    else:
        framing = _LEAD_IN | {_letters(w) for w in fields.spoken_label(spec).split()}
        found = [p for word, p in heard.words if _letters(word) and _letters(word) not in framing]
    if not found or min(found) >= r.t.spell_below_prob:
        return False
    r.decide("asr_unsure", field=spec.name, value=value, prob=min(found))
    return True


def _resumed(r: _Run, v: _Value, heard: Heard) -> _Value | None:
    """The value of ``v.spec`` in its answer and ``heard`` together, when ``heard`` (heard
    after the read-back of ``v`` began) resumed that answer (:attr:`Heard.resumes`), is no
    yes or no, and makes a different value of a strict kind (a code, number, phone, e-mail,
    date: the ones people dictate in groups; bench: "My passport number is PX472, [pause]
    9183." was cut in two turns) that :func:`~appliance.phone_agent.fields.fits` its pattern,
    else None. Decides ``answer_resumed``."""
    spec, text = v.spec, heard.text
    if not heard.resumes or fields.kind(spec) not in STRICT_KINDS or normalise.yes_no(text) is not None:
        return None
    whole = f"{v.heard.rstrip('. ')} {text}"
    again, spelled = _parse(r, spec, whole, "words")
    if again is None or again == v.value or not fields.fits(spec, again):
        return None
    r.decide("answer_resumed", field=spec.name, heard=text, value=again)
    return _Value(spec, again, whole, spelled)


# ---- the page's close matches ------------------------------------------------------------------------


def _choose(r: _Run, c: _Choose) -> Turn:
    """The page offers several close matches for the person's value: they pick one (no
    read-back: it is said as the page lists it); an answer that names none is asked again."""
    if c.tries >= CHOICE_TRIES:
        return r.give_up(c.ask.spec)
    if interview.asked_out(r.s, c.ask.spec.name):
        return r.hand_over(c.ask.spec)
    r.asked(c.ask.spec.name)
    return r.wait(replace(c, tries=c.tries + 1), Question(c.say, c.ask.spec.name))


def _choose_answer(r: _Run, c: _Choose, heard: Heard) -> Turn:
    text, ask = heard.text, c.ask
    if REPEAT.search(text):
        return _choose(r, c)
    pick = candidates.pick(text, ask.choices)
    c = replace(c, heard=text)
    if pick is None and not is_question(text) and normalise.choices_named(text, ask.choices):
        # the answer names some of them ("Miller, but with an a"): the LLM reads which; an answer that
        # names none ("My country is the United Kingdom") is asked again, never guessed (CONTRACTS)
        as_options = ask.spec.model_copy(update={"type": "select", "options": ask.choices})
        return r.wait(c, PickOption(as_options, text))
    return _picked(r, c, pick)


def _picked(r: _Run, c: _Choose, pick: str | None) -> Turn:
    spec = c.ask.spec
    if pick is not None:
        r.decide("candidate_picked", field=spec.name, heard=c.heard, pick=pick)
        r.send(spec, pick, confirmed=True)
        return r.done()
    return _choose(
        r, replace(c, say=f"Sorry, I didn't get which one. {candidates.question(spec.label, c.ask.choices)}")
    )


# ---- fields asked together ----------------------------------------------------------------------------


def _together_question(t: _Together) -> str:
    return fields.question_together(t.together.what, _specs(t))


def _specs(t: _Together) -> tuple[FieldSpec, ...]:
    return tuple(a.spec for a in t.together.asks)


def _together(r: _Run, t: _Together) -> Turn:
    """The next try: the question (no values yet), or the read-back of the values heard."""
    if t.tries >= TOGETHER_TRIES:
        return _split_unheard(r, t)
    t = replace(t, tries=t.tries + 1)
    if t.values is None:
        for spec in _specs(t):
            r.asked(spec.name)
        return r.wait(replace(t, waiting="question", nxt=None), Question(t.say, None))
    return _together_values(r, t)


def _split_unheard(r: _Run, t: _Together) -> Turn:
    r.s = interview.split(r.s, t.together, rejected=False, unheard=t.unheard)
    return r.done()


def _together_answer(r: _Run, t: _Together, heard: Heard) -> Turn:
    text, what, specs, q = heard.text, t.together.what, _specs(t), _together_question(t)
    if REPEAT.search(text):
        return _together(r, replace(t, say=q))
    if is_question(text):
        return r.wait(t, SideQuestion(specs[0], text))
    if what == "several":  # one section's details: the LLM's copy gives each field its words
        return r.wait(replace(t, looked=True, heard=heard), LookAhead((*specs, *_open_others(r, text, *specs)), text))
    values = fields.parse_together(what, specs, text, r.t.date_order)
    if not t.looked and _says_more(text, specs, values):
        others = _open_others(r, text, *specs)
        if others:  # "My name is Ada Lovelace, and I was born on …": the other values too
            return r.wait(replace(t, looked=True, heard=heard), LookAhead((*specs, *others), text))
    if what == "name" and values is not None and any(_unsure(r, s, v, heard) for s, v in zip(specs, values)):
        r.steps.append(Prefix(f"{UNSURE} "))  # each on its own, spelled
        r.s = interview.split(r.s, t.together, rejected=False, unheard=1)
        return r.done()
    if values is None:
        t = replace(t, unheard=t.unheard + 1)
        if what == "name" or t.unheard == 2:  # each on its own (a name: spelled, interview.ask_mode)
            r.steps.append(Prefix("Sorry, I didn't get that. "))
            return _split_unheard(r, t)
        return _together(r, replace(t, say=f"Sorry, I didn't get that. {q}"))
    return _together_values(r, replace(t, values=values))


def _together_values(r: _Run, t: _Together) -> Turn:
    """Values heard: sent unconfirmed, then read back (the next step known first)."""
    assert t.values is not None
    for spec, v in zip(_specs(t), t.values):
        r.send(spec, v, confirmed=False)
    return r.wait(replace(t, nxt=None), Sync())  # a safe point: the next step as it stands now


def _together_read_back(r: _Run, t: _Together) -> Turn:
    """Messages applied: the read-back, with the next field's question when it may go with
    it, else left to the summary (:meth:`_Run.unread`)."""
    assert t.values is not None
    nxt = None if t.alone else _plain_next(r)
    r.read_back(*(spec.name for spec in _specs(t)), asking=nxt)
    if nxt is None and _asks_next(r) and not t.alone:
        for spec, v, w in zip(_specs(t), t.values, _words(t), strict=True):
            if not interview.refused(r.s, spec.name, v):
                r.unread(spec, v, w)
        return r.done()
    if nxt is None:
        return r.wait(
            replace(t, waiting="read_back", nxt=None), Question(f"{_stated(t)} Is that right?", None, sync=True)
        )
    r.s = interview.begin(r.s, nxt)
    return _together_with_next(r, replace(t, waiting="read_back", nxt=nxt, repeated=False))


def _words(t: _Together) -> tuple[str, ...]:
    """The words each of ``t``'s values was heard in ('' where not known)."""
    return t.words or ("",) * len(t.together.asks)


def _stated(t: _Together) -> str:
    assert t.values is not None
    return fields.stated_together(t.together.what, _specs(t), t.values, _words(t))


def _together_with_next(r: _Run, t: _Together) -> Turn:
    assert t.values is not None and t.nxt is not None
    return r.wait(t, Question(f"{_stated(t)} {r.prompt(t.nxt.spec, 'words')}", t.nxt.spec.name, sync=True))


def _confirm_together(r: _Run, t: _Together) -> None:
    """Each value sent confirmed, but those the page refused meanwhile (queued with the reason)."""
    assert t.values is not None
    for spec, v in zip(_specs(t), t.values):
        if not interview.refused(r.s, spec.name, v):
            r.send(spec, v, confirmed=True)


def _together_read_back_answer(r: _Run, t: _Together, heard: Heard) -> Turn:
    """A rejected name read-back sends each field back to be asked (and spelled) on its own; a
    date's "no, it's …" is read back; values said in one breath: an answer naming one of
    them ("No, my passport number is …") takes that field up again with it (the others kept
    for the summary to state); anything else that fails asks each field on its own."""
    assert t.values is not None
    nxt, text, what, specs = t.nxt, heard.text, t.together.what, _specs(t)
    if nxt is not None and REPEAT.search(text) and not t.repeated:  # "say that again": the read-back too
        return _together_with_next(r, replace(t, repeated=True))
    yes = normalise.yes_no(text)
    named = fields.field_named(text, {s.name: s for s in specs}) if what == "several" and not yes else None
    if named is None and (yes or (nxt is not None and not _objected(r, text, nxt))):
        if not heard_fully(heard.said, _stated(t)):  # a yes to what was not heard: said again
            if nxt is not None:
                r.s = interview.requeue(r.s, nxt)
            r.decide(
                "read_back_cut", field=", ".join(s.name for s in specs), heard=heard.said.heard if heard.said else ""
            )
            return _together(r, t)
        _confirm_together(r, t)
        if nxt is None:
            return r.done()
        return _carry_to(r, nxt, heard)
    if named is not None:
        if nxt is not None:
            r.s = interview.requeue(r.s, nxt)
        return _breath_corrected(r, t, named, text)
    if what == "several" and yes is False and (values := _corrected_values(r, t, _correction(text))) is not None:
        return _together(r, replace(t, values=values))  # "No, it's David Miller.": read back again
    if what == "date" and yes is False and not any(interview.refused(r.s, s.name, v) for s, v in zip(specs, t.values)):
        values = fields.parse_together(what, specs, _correction(text), r.t.date_order)
        return _together(r, replace(t, values=values, say=f"Sorry about that. {_together_question(t)}"))
    r.steps.append(Prefix("Sorry about that. " if yes is False else ""))
    r.s = interview.split(r.s, t.together, rejected=yes is False)
    return r.done()


# ---- several answers in one breath --------------------------------------------------------------------


def _breath(
    r: _Run, own: tuple[Ask, ...], values: tuple[FieldValue, ...] | None, heard: Heard, said: Mapping[str, str]
) -> Turn | None:
    """The fields asked (``own``, their ``values`` from ``heard``) and the others the person
    gave in the same breath (``said``: words by field name, :class:`Ahead`), read back
    together once (issue 27) — None when no other field's words make a value
    (:func:`_values_in`; the words are then kept as that field's answer for when it comes,
    :attr:`Talk.ahead`), or the fields asked have no sure value (a name the ASR was unsure of
    is spelled: read back on its own)."""
    if values is None or any(
        fields.kind(a.spec) in ("yesno", "choice")
        or r.s.rejections.get(a.spec.name)
        or a.spec.name in r.s.spell_asks
        or _unsure(r, a.spec, v, heard)
        for a, v in zip(own, values)
    ):
        return None
    mine = {a.spec.name for a in own}
    got = _values_in(r, {n: w for n, w in said.items() if n not in mine}, heard)
    if not got:
        return None
    return _read_together(r, [(a, v, heard.text) for a, v in zip(own, values)], got, said, heard)


def _values_in(r: _Run, said: Mapping[str, str], heard: Heard) -> dict[str, FieldValue]:
    """The values of the fields whose words (``said``, by field name, from the answer
    ``heard``) their parser takes and their pattern fits, but names the ASR was unsure of
    (spelled when asked on their own)."""
    got: dict[str, FieldValue] = {}
    for name, words_ in said.items():
        spec = r.s.specs[name]
        v = fields.parse(spec, words_, r.t.date_order)
        if v is None or not fields.fits(spec, v):
            continue
        if fields.kind(spec) != "name" or not _unsure(r, spec, v, replace(heard, text=words_)):
            got[name] = v
    held = {**r.t.held(r.s), **got}  # "David Miller" copied for the given name, Miller for the family name
    return {n: fields.own_part(r.s.specs[n], v, r.s.specs, held) for n, v in got.items()}


def _read_together(
    r: _Run,
    first: list[tuple[Ask, FieldValue, str]],
    got: Mapping[str, FieldValue],
    said: Mapping[str, str],
    heard: Heard,
) -> Turn:
    """``first`` (asks begun, with their values and words) and the fields waiting whose values
    ``got`` holds (they leave the queue, :func:`~appliance.phone_agent.interview.taken`):
    sent, then read back together once — on its own ("… Is that right?") when the ASR was
    unsure of an e-mail, code, number or phone among them (:data:`CHECKED_KINDS`, in the
    answer ``heard``). Decides ``answered_ahead`` for those."""
    r.s, asks = interview.taken(r.s, got)
    if asks:
        r.decide("answered_ahead", field=first[0][0].spec.name, fields=[a.spec.name for a in asks])
    t = _Together(
        AskTogether((*(a for a, _, _ in first), *asks), "several"),
        say="",
        tries=1,
        values=(*(v for _, v, _ in first), *(got[a.spec.name] for a in asks)),
        looked=True,
        words=(*(w for _, _, w in first), *(said[a.spec.name] for a in asks)),
    )
    alone = any(
        fields.kind(spec) in CHECKED_KINDS and _unsure(r, spec, v, replace(heard, text=w))
        for spec, v, w in zip(_specs(t), t.values, t.words)
    )
    return _together_values(r, replace(t, alone=alone))


def _several_answer(r: _Run, t: _Together, heard: Heard, said: Mapping[str, str]) -> Turn:
    """The answer ``heard`` to one section's question (``t``: an ``AskTogether`` of
    ``several``), the LLM's copy of its words by field (``said``): the fields asked that it
    gives and any others waiting are read back together; those asked that it does not give
    go back to the queue, asked on their own next; none given → "Sorry, I didn't get that"
    and each is asked on its own (not understood once: a name is spelled next, as after a
    full name not understood)."""
    asked = {a.spec.name for a in t.together.asks}
    mine = _values_in(r, {n: w for n, w in said.items() if n in asked}, heard)
    if not mine:
        r.steps.append(Prefix("Sorry, I didn't get that. "))
        r.s = interview.split(r.s, t.together, rejected=False, unheard=1)
        return r.done()
    missing = tuple(a for a in t.together.asks if a.spec.name not in mine)
    if missing:
        r.s = interview.requeue(r.s, AskTogether(missing, "several"))
    others = _values_in(r, {n: w for n, w in said.items() if n not in asked}, heard)
    first = [(a, mine[a.spec.name], said[a.spec.name]) for a in t.together.asks if a.spec.name in mine]
    return _read_together(r, first, others, said, heard)


#: kinds whose parse is evidence in itself of what a correction is about (a date, an "@", six digits):
#: tried before a name, which almost any words parse as
_SURE_KINDS: tuple[fields.FieldKind, ...] = ("date", "email", "phone")


def _corrected_values(r: _Run, t: _Together, said: str) -> tuple[FieldValue, ...] | None:
    """``t``'s values with those that the correction ``said`` gives instead: a date, an
    e-mail or a phone number that its field's pattern fits ("No, I was born on the
    fourteenth of March 1990." — bench, flight/david: this had been read as the name "Born
    On The Th"); else a whole name for the name parts ("No, it's David Miller." for the name
    read back as "David Miller Miller"); else a value of one field's other strict kind that
    its pattern fits. None when it gives no other value for them."""
    assert t.values is not None
    specs = _specs(t)
    parts = [i for i, s in enumerate(specs) if fields.name_part(s)]

    def strict(kinds: Collection[str]) -> tuple[FieldValue, ...]:
        new = list(t.values or ())
        for i, spec in enumerate(specs):
            if fields.kind(spec) in kinds and (v := fields.parse(spec, said, r.t.date_order)) is not None:
                new[i] = v if fields.fits(spec, v) else new[i]
        return tuple(new)

    if (sure := strict(_SURE_KINDS)) != t.values:
        return sure
    whole = fields.parse_together("name", tuple(specs[i] for i in parts), said) if len(parts) == 2 else None
    if whole is not None:
        new = list(t.values)
        for i, v in zip(parts, whole):
            new[i] = v
        return tuple(new) if tuple(new) != t.values else None
    other = strict(set(STRICT_KINDS) - set(_SURE_KINDS))
    return other if other != t.values else None


def _breath_corrected(r: _Run, t: _Together, named: FieldSpec, text: str) -> Turn:
    """``named``, one of the values said in one breath, corrected by ``text`` ("No, my
    passport number is …"): ``named`` asked next with ``text`` as its answer (its rejection
    counted: it is read back on its own); the others kept, but stated again by the summary
    (:meth:`_Run.unread`): the "no" was about the whole read-back, and a person correcting one
    value does not vouch for the rest (bench, grzegorz: "No, my email is …" to a read-back
    whose phone number had a digit too many, which was then sent)."""
    assert t.values is not None
    words = t.words or ("",) * len(t.values)
    for spec, v, w in zip(_specs(t), t.values, words):
        if spec.name != named.name and not interview.refused(r.s, spec.name, v):
            r.unread(spec, v, w)
    ask = next(a for a in t.together.asks if a.spec.name == named.name)
    r.s = interview.split(r.s, AskTogether((ask,), "several"))
    r.t = replace(r.t, ahead=_frozen({**r.t.ahead, named.name: _correction(text)}))
    r.decide("read_back_rejected", field=named.name, times=r.s.rejections[named.name])
    return r.done()


# ---- the summary and the authorisation to submit ------------------------------------------------------


def authorise(state: Interview, talk: Talk) -> Turn:
    """Read a summary and ask for explicit authorisation to submit (the interview's next step
    is :class:`~appliance.phone_agent.interview.Authorise`), three times at most: a "yes" →
    :class:`SubmitGrace` (a "stop" then asks again), then ``submit_authorized`` sent and
    :class:`WatchSubmit`; an answer asking for one more item ("Not yet: please add a second
    passenger", :data:`ADD_ITEM`) → ``add_item`` and the interview goes on with the new fields
    (only an explicit "don't submit" or "stop" ends it); a "no" → ``status_update{canceled}`` and
    :class:`EndCall`, unless it states a detail without naming its field (:data:`STATES_DETAIL`:
    "No, I was born on …") → "Which detail should I change? …"; an
    answer naming a confirmed field ("No, my town is Leeds.") takes that field up again with
    the answer (:func:`~appliance.phone_agent.interview.reopen`; the summary is read again
    once the computer agent has the new value in and asks again); the page asking for
    something else first ends the exchange; three unclear answers → :class:`EndCall`."""
    offer = f", or add another {state.addable} first" if state.addable else ""
    q = f"{fields.summary(state.specs, state.confirmed, talk.unread)} Shall I submit the form now{offer}?"
    return _authorise(_Run(state, talk), _Authorising(q))


def _no_and_more(text: str) -> bool:
    """A "no" followed by three words or more ("No, I'd like a how-me-ill": a correction the ASR
    mangled, bench oluwaseun), not a plain refusal ("No.", "No, thank you.", "No, leave it.")."""
    return len(re.sub(r"^\W*(?:no|nope|nah)\b\W*", "", text.strip(), flags=re.I).split()) >= 3


def _authorise(r: _Run, a: _Authorising) -> Turn:
    if a.tries >= 3:
        r.say("I'll leave the form unsent for now. Goodbye.")
        return r.wait(None, EndCall("not submitted: no clear authorisation"))
    return r.wait(replace(a, tries=a.tries + 1), Question(a.question, None, sync=True, counted=False))


def _authorise_answer(r: _Run, a: _Authorising, heard: Heard) -> Turn:
    a, text = replace(a, question="Shall I submit the form now?"), heard.text
    if r.s.queue:  # the page wants something else first
        return r.done()
    yes = normalise.yes_no(text)
    confirmed = {n: r.s.specs[n] for n in r.s.confirmed}
    named = None if yes else fields.field_named(text, confirmed)
    if named is None and yes is False and not STOP.search(text):  # "No, I'd like a halal meal." (bench, oluwaseun)
        named = fields.field_mentioned(text, confirmed)
    if named is not None and r.s.reopened >= interview.MAX_REOPENS:
        r.decide("summary_correction_refused", field=named.name, heard=text)
        r.say(
            f"I can't change more by voice now: you can set your {fields.spoken_label(named)} in the preview on your page."
        )
        return _authorise(r, a)
    if named is not None:  # "No, my town is Leeds.": that field again, its answer given
        r.decide("summary_corrected", field=named.name, heard=text)
        r.s = interview.reopen(r.s, named.name)
        ask = r.s.queue[0]
        r.s = interview.begin(r.s, ask)
        return _start_field(r, ask, replace(heard, text=_correction(text), said=None))
    if ADD_ITEM.search(text) and not STOP.search(text):  # "Not yet: … please add him as a second passenger"
        r.decide("item_requested", heard=text)
        r.steps.append(Send(AddItem(request=text)))
        r.say("All right, I'll add that to the form.")
        r.s = interview.item_requested(r.s)
        return r.done()
    if yes:
        return r.wait(a, SubmitGrace())
    if yes is False and (STATES_DETAIL.search(text) or _no_and_more(text)) and not STOP.search(text):
        # "No, I was born on …" naming no field (bench, joaquin: the call had ended unsent on it): a correction
        # (issue 27: only an explicit "don't submit", "stop" or a plain "no" ends it)
        r.decide("summary_correction_unclear", heard=text)
        return _authorise(r, replace(a, question="Which detail should I change? Or shall I submit the form as it is?"))
    if yes is False:
        r.decide("submit_declined")
        r.say("All right, I won't submit it. Nothing has been sent. Goodbye.")
        r.steps.append(Send(StatusUpdate(state="canceled", message="the person did not authorise the submission")))
        return r.wait(None, EndCall("not submitted: the person did not authorise the submission"))
    return _authorise(r, a)
