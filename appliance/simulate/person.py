"""A simulated person on a form-filling call: an LLM persona with a private profile.

Each time the person hears the assistant (an ASR transcript of the bot's audio), it
knows which of its details is asked for (``topic``: a profile key or ``none``) at once
when the question names one in so many words ("What is your passport number?": the key's
own words or one of :data:`KEY_WORDS`' descriptions, as a listener recognises them);
otherwise the embedded LLM — with its own prompt and slot — decides (one constrained JSON
answer). Two acts the
person recognises by ear: a value read back ("… Is that right?", about the detail it names
— "For your family name, I have it as …" — else the one last asked) and a request to
submit. A value read back with the next question ("I have Miller. What is your date of
birth?") is judged first: a wrong one is put right ("No, it's …"), else the question is
answered.

The person then answers from its profile as a person would: the detail in
a short sentence ("My phone number is …"), "Yes, that's right." when the read-back states
exactly its value (judged by its own ear, :mod:`~appliance.simulate.hearing`: the letters
when spelled, the digits, the date), otherwise "No, it's …"; yes or no
to authorising the submission as the profile says; told the choices after an answer that was
not understood ("The choices are Australia, …, Ireland, …"), the option that means its value
("Ireland" for "Irish": by its own table for a nationality or a country, else the LLM's
pick); a profile's ``first_answers`` value the first time that key is asked (kept through its
read-back, corrected once asked again); "I'm not sure." for a ``not_sure`` key; its
``adds_at_summary`` words, once, instead of the first yes to submitting; asked for the
first key of one of its ``answers_together``, every value of it in one breath, once.
Offered the box on the screen ("… Or type it in the box on your screen."), a person
with a screen (``respond(heard, type_in=…)``) types the value there and says nothing.
Otherwise, asked for a spelling ("Could you spell …"), the person spells the value with the spelling
alphabet (:func:`~appliance.simulate.speech.say_spelled`); from its second "no" to the
read-backs of one detail on, its correction is spelled too ("No, it's O'Neill: Oscar,
apostrophe, …"). A given and a family name are also one detail, ``full_name``, when the
assistant asks for the whole name.

:func:`mouth` turns the written answer into the words a person says (digits one by one,
"at"/"dot", dates in words), so the phone agent's ASR and normaliser get real speech.

The person shares no code with the phone agent: its ear and its words
(:mod:`~appliance.simulate.speech`) are its own.
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from appliance.demo.profile import Profile
from appliance.llm.base import LLM, LLMError
from appliance.llm.decision import choices, gbnf_alternatives
from appliance.simulate import hearing, speech

log = logging.getLogger(__name__)

#: How the persona's prompt describes a detail, and how the person says it ({v}: the value).
KEY_WORDS = {
    "given_name": ("first name, given name", "My first name is {v}."),
    "family_name": ("last name, surname", "My last name is {v}."),
    "full_name": ("full name, first and last name together", "My name is {v}."),
    "date_of_birth": ("birthday, when you were born", "I was born on {v}."),
    "passport_number": ("passport number", "My passport number is {v}."),
    "id_number": ("national ID number, ID card number", "My ID number is {v}."),
    "nationality": ("nationality", "My nationality is {v}."),
    "email": ("email address", "My email is {v}."),
    "phone": ("phone number, mobile number, phone or mobile number", "My phone number is {v}."),
    "destination": ("where you fly to", "I'd like to fly to {v}."),
    "travel_date": ("when you travel, departure date", "I travel on {v}."),
    "check_in_date": ("check-in date, when you arrive", "I check in on {v}."),
    "check_out_date": ("check-out date, when you leave", "I check out on {v}."),
    "seat_preference": ("window, aisle or middle seat", "My seat preference is {v}."),
    "meal": ("meal choice", "I'd like a {v} meal."),
    "consent": ("accepting terms, rules or privacy notice", "Yes, I accept."),
    "username": ("user name", "My username is {v}."),
    "country": ("country where you live", "My country is {v}."),
    "postcode": ("postcode, postal code, ZIP code", "My postal code is {v}."),
    "city": ("town or city", "My town is {v}."),
    "contact_method": ("how to contact you", "Please contact me by {v}."),
    "one_time_code": ("security code, verification code, one-time code, code we sent you", "The code is {v}."),
}
#: how Whisper tiny.en writes the bot's names of details (bench: "What is your data? Birth." was taken for the
#: destination, and the person said where it flies to when asked its date of birth)
WHISPER_NAMES = {
    "data": "date_of_birth",
    "day to birth": "date_of_birth",
    "data birth": "date_of_birth",
    # bench, imask-bank: Piper's "IBAN" and "sort code" as tiny.en wrote them ("What is your Ivan?" was taken
    # for the first name four times)
    "ivan": "iban",
    "eibn": "iban",
    "iibin": "iban",
    "i ban": "iban",
    "sore code": "sort_code",
    "soar code": "sort_code",
}
#: Details whose read-back may name the person's value in the form's own words ("United Kingdom" for
#: "British"): where the ear cannot tell, the persona's LLM judges the meaning. Every other read-back
#: (names, codes, digits, dates, e-mails, a choice the form words as the person does) is judged by ear alone.
WORDED_KEYS = ("nationality", "country")
#: Dialogue acts the person recognises by ear: a value read back for checking, a request to submit.
_CHECK = re.compile(r"\b(is that (right|correct)|did i get that right|have i got that right)\b", re.I)
#: a request to submit, however Whisper wrote its "Shall": "Shall I submit the form now?", "Show I submit the form
#: now.", "Ciao I submit the form now." (bench; "Here's what I'll submit" is none)
PERMISSION = re.compile(r"\b\w+ i (?:submit|send)\b", re.I)
_REFUSED = re.compile(r"did not accept|not accepted|already taken|needs|must|not valid|invalid", re.I)
_PRESENCE = re.compile(r"^\W*are you (still )?there\W*$", re.I)
_TYPE_OFFER = re.compile(r"\btype it\b", re.I)  # "Or type it in the box on your screen."
_TYPE_OFFER_SENTENCE = re.compile(r"[,.]?\s*\bor type it\b[^.?!]*[.?!]?", re.I)
_SPELL = re.compile(r"\bspell|\bletter by letter\b", re.I)  # Whisper writes "spell" as "style", "stub"…
#: details a person would spell (letters in them); dates, numbers and choices are said
SPELLABLE_KEYS = (
    "given_name",
    "family_name",
    "full_name",
    "passport_number",
    "email",
    "username",
    "postcode",
    "city",
    "street",
    "address",
)

_EXAMPLES = """said: What is your first name? => {"topic":"given_name"}
said: Thanks. And your surname? => {"topic":"family_name"}
said: What is your full name? => {"topic":"full_name"}
said: Great. When were you born? => {"topic":"date_of_birth"}
said: Sorry, the form needs the country code. What is your mobile number? => {"topic":"phone"}
said: Do you accept the privacy notice? => {"topic":"consent"}
said: Hello, I am your assistant for the booking. => {"topic":"none"}"""


@dataclass
class Turn:
    """One decision: what the person heard, the LLM's topic/kind, and what it said (None = silent)."""

    heard: str
    topic: str
    kind: str
    said: str | None


@dataclass
class SimulatedPerson:
    """The persona. ``await respond(heard)`` → what the person says (written form) or None.

    Args:
        profile: the private profile (never sent anywhere but this persona's own prompt).
        llm: endpoint with the persona's own slot.
        emit: ``emit(event, **fields)`` for the session's event log.
    """

    profile: Profile
    llm: LLM
    emit: Callable[..., Any]
    turns: list[Turn] = field(default_factory=list)
    repeat: int = 0  # how many times in a row the same detail has been asked (the person slows down)
    _previous: str = "none"
    _first_used: set[str] = field(default_factory=set)  # keys whose wrong first answer was given
    _corrected: set[str] = field(default_factory=set)  # … and then refused by the form
    _rejections: dict[str, int] = field(default_factory=dict)  # read-backs this person said no to, per detail
    _added: bool = False  # the profile's adds_at_summary was said
    _together: set[str] = field(default_factory=set)  # answers_together groups said (by their first key)
    _asked_with: tuple[str, ...] = ()  # the other details the question being answered asks for too

    def __post_init__(self) -> None:
        keys = list(dict.fromkeys([*self.profile.facts, *self.profile.not_sure]))
        if "given_name" in keys and "family_name" in keys:
            keys.insert(keys.index("family_name") + 1, "full_name")
        details = ", ".join(f"{k} ({KEY_WORDS[k][0]})" if k in KEY_WORDS else k for k in keys)
        self._system = (
            "You are a person on a phone call with an assistant who fills in a web form for you. Which of your "
            f'details does the assistant ask for in its last words? Your details: {details}. Answer "none" when '
            "it asks for none of them.\nExamples:\n" + _EXAMPLES
        )
        self._choices = {asked: (*keys,) if asked else (*keys, "none") for asked in (True, False)}
        self._named = {
            phrase.strip().casefold(): k
            for k in keys
            for phrase in (k.replace("_", " "), *(KEY_WORDS[k][0].split(",") if k in KEY_WORDS else ()))
        }
        self._named |= {heard: k for heard, k in WHISPER_NAMES.items() if k in keys}
        if "full_name" in keys:
            self._named.setdefault("name", "full_name")  # "What is your name?" (bench --pages: "Your name")

    def expecting(self) -> str:
        """What the person expects to hear read back: the detail it last gave, when that is
        plain words (:func:`~appliance.simulate.hearing.own_words`: "halal.", "Irish,
        Ireland."), else ``""``."""
        return hearing.own_words(self._previous, self.believed(self._previous)) if self._previous != "none" else ""

    def believed(self, key: str) -> str:
        """The value the person holds for ``key`` now: the wrong first answer from when it was
        given until the assistant says the form refused it, else the profile's."""
        if key == "full_name" and "full_name" not in self.profile.facts:
            return f"{self.believed('given_name')} {self.believed('family_name')}".strip()
        if key in self._first_used and key not in self._corrected:
            return self.profile.first_answers[key]
        return self.profile.facts.get(key, "")

    def rehearsal(self) -> tuple[SimulatedPerson, list[tuple[str, dict]]]:
        """A twin that decides as this person would now and keeps what it did to itself: its
        events go to the returned list (``(event, fields)``), its state is its own. A listener
        gets its answer ready while the bot may still go on (:class:`~appliance.simulate.call.PersonOnCall`);
        :meth:`adopt` makes the twin's turn this person's once the bot has stopped."""
        said: list[tuple[str, dict]] = []
        twin = copy.copy(self)
        twin.emit = lambda event, **fields: said.append((event, fields))
        for name in ("turns", "_first_used", "_corrected", "_rejections", "_together"):
            setattr(twin, name, copy.copy(getattr(self, name)))
        return twin, said

    def adopt(self, twin: SimulatedPerson, said: list[tuple[str, dict]]) -> None:
        """Take a :meth:`rehearsal` twin's turn as this person's: its state, and its events emitted now."""
        emit = self.emit
        self.__dict__.update(twin.__dict__)
        self.emit = emit
        for event, fields in said:
            emit(event, **fields)

    async def warm(self) -> None:
        """Put the persona's prompt in its LLM slot before the call (a cold prompt costs seconds)."""
        try:
            await self.llm.warm(self._system)
        except LLMError as e:
            log.warning("persona warm-up: %s", e)

    async def respond(
        self, heard: str, type_in: Callable[[str], Awaitable[bool]] | None = None, box: str | None = None
    ) -> str | None:
        """What the person says back to ``heard`` (the bot has yielded the floor: always
        something, unless the person typed the answer instead).

        ``type_in``: the person's hands on their page, ``await type_in(value)`` → whether the
        page took ``value`` in the box it offers (``box``: its label on the screen, when known);
        a person with a screen offered the box types there the detail the box is for (by its
        label, else the detail asked for) and says nothing, or, when the question asks for
        another detail, answers that too (event ``person_typed``).
        A read-back ("… Is that right?") is about the detail it names, else the one last asked; a
        request to submit is about submitting; for anything else the LLM decides which detail is asked for, and a
        request to spell in which it finds no detail a person spells ("Could you spell your post
        good for me?", as Whisper wrote "postcode") is about the detail last asked (bench: the
        0.5B model took it for the message and the person spelled that).
        """
        self._asked_with = ()
        stated = _stated_then_asked(heard)
        about = self._about(heard) if stated is not None else "none"
        if about not in ("none", "submit") and self.believed(about):
            # the last detail read back with the next question ("I have Miller. What is your date of
            # birth?"): a wrong one is put right first, else the question is answered
            objection = await self._check(stated[0], about)
            if objection is not None:
                return self._turn(heard, about, "check", objection)
            heard = stated[1]
        if _PRESENCE.search(hearing.sentences(heard)[-1]):
            topic, kind = "none", "presence"
        elif _CHECK.search(heard) or _FRAME.match(hearing.sentences(heard)[-1]):
            topic, kind = self._about(heard), "check"
        elif PERMISSION.search(heard):
            topic, kind = "submit", "yesno"
            objection = await self._check(heard, None)  # a value the summary states for the first time
            if objection is not None:
                return self._turn(heard, topic, "check", objection)
        else:
            kind = "ask"
            # a question is about one of the details (the assistant asks for nothing else); "none"
            # only for words that ask nothing, such as a greeting
            # the question, from its first sentence that asks: not the page's reason before it ("Sorry, the form
            # did not accept that: A national ID number has 9 digits…" was taken for the nationality), nor the
            # offer of the box after it
            asked = _TYPE_OFFER_SENTENCE.sub("", heard).strip() or heard
            asked = next(
                (asked[m.start() :] for m in re.finditer(r"(?:^|(?<=[.!?;]\s))[^.!?;]*\?", asked)), asked
            ).strip()
            topics = self._choices[asked.rstrip().endswith("?")]
            named = _ASKED_FOR.search(asked)
            topic = self._named_as(named.group(1)) if named else None
            if topic is None and named and (several := self._several_asked(named.group(1))):
                topic, self._asked_with = several[0], several[1:]
            if topic is None and (several := _SEVERAL.search(heard)):  # "… several for destination city: …"
                topic = self._named.get(several.group(1).strip().casefold()) or self._previous
            if topic is None and _COMPANION_ASKED.search(asked):  # "the first name of passenger 2"
                topic = _companion_topic(asked, topics)
            if topic is None and "consent" in topics and _CONSENT_ASKED.search(asked):
                topic = "consent"
            try:
                topic = (
                    topic
                    or (
                        await self.llm.json(
                            self._system,
                            f"said: {asked}",
                            max_tokens=24,
                            grammar=f'root ::= "{{\\"topic\\":" topic "}}"\ntopic ::= {gbnf_alternatives(topics)}\n',
                            schema={
                                "type": "object",
                                "required": ["topic"],
                                "additionalProperties": False,
                                "properties": {"topic": {"enum": list(topics)}},
                            },
                        )
                    )["topic"]
                )
            except (LLMError, KeyError, TypeError) as e:
                log.warning("persona: %s", e)
                topic = "none"
            if _SPELL.search(heard) and not _spellable(self.believed(topic) if topic != "none" else ""):
                topic = self._previous  # a spelling of a detail the LLM missed (or took for one nobody spells)
            if topic == "none" and _TYPE_OFFER.search(heard):
                topic = self._previous  # "I'm waiting for you: you can type it in the box …": the detail last asked
        if kind == "ask":
            for asked_for in (topic, *self._asked_with):  # each detail asked for: its wrong first answer too
                self._given(asked_for, heard)
        # the box's own detail (bench, xiaoling: offered the given name's box, then asked the nationality, the person
        # typed "Canadian" in it and it was sent)
        typed = (self._named_as(re.sub(r"\(s\)", "", box)) if box else None) or topic
        if (
            kind == "ask"
            and type_in is not None
            and _TYPE_OFFER.search(heard)
            and self.believed(typed)
            and await type_in(self.believed(typed))
        ):
            self.emit("person_typed", topic=typed, value=self.believed(typed))
            kind, said = ("typed", None) if typed == topic else (kind, await self._answer(heard, topic, kind))
        else:
            said = await self._answer(heard, topic, kind)
        return self._turn(heard, topic, kind, said)

    def _several_asked(self, words: str) -> tuple[str, ...]:
        """The details a question asks for together ("full name and date of birth": issue 27,
        one section's details in one question), each named as :meth:`_named_as` knows it;
        ``()`` unless every part names one."""
        parts = [p for p in re.split(r",\s*(?:and\s+)?|\s+and\s+", words) if p.strip()]
        topics = [self._named_as(p) for p in parts]
        return tuple(t for t in topics if t) if len(parts) > 1 and all(topics) else ()

    def _named_as(self, words: str) -> str | None:
        """The detail ``words`` name: as the person knows it, or the one detail whose name starts
        with them (Whisper drops a last word: "What is your security?" for "… security code?")."""
        said = words.strip().casefold()
        if said in self._named:
            return self._named[said]
        starting = {k for phrase, k in self._named.items() if phrase.startswith(f"{said} ")}
        return starting.pop() if len(starting) == 1 else None

    def _about(self, read_back: str) -> str:
        """The detail a read-back is about: the one it names ("For your family name, I
        have it as Juliett, …": :data:`_READ_BACK_OF`), else the one last asked (``"none"`` before any)."""
        m = _READ_BACK_OF.search(read_back)
        named = self._named.get(re.sub(r"\(s\)$", "", m.group(1).strip()).casefold()) if m else None
        return named or self._previous

    def _given(self, topic: str, heard: str) -> None:
        """Asked for ``topic`` (said, spelled or typed alike): its wrong first answer is given
        the first time; once the assistant says the form refused it, the right value from then on
        (CI: told "The username davidmiller is already taken", the person typed davidmiller again,
        and again, and the form was never sent)."""
        if topic in self.profile.first_answers and topic not in self._first_used:
            self._first_used.add(topic)
        elif topic in self._first_used and _REFUSED.search(heard):
            self._corrected.add(topic)  # told the form refused it: now the right value

    def _turn(self, heard: str, topic: str, kind: str, said: str | None) -> str | None:
        """Record one decision (event ``person``) and return what is said."""
        self.repeat = self.repeat + 1 if self.turns and (self.turns[-1].topic, kind) == (topic, "ask") else 0
        self.turns.append(Turn(heard, topic, kind, said))
        self.emit("person", heard=heard, topic=topic, kind=kind, said=said)
        if topic not in ("none", "submit"):
            self._previous = topic
        return said

    async def _same(self, heard: str, value: str) -> bool:
        """The LLM's judgement whether a read-back means ``value`` ("United Kingdom" for "British")."""
        try:
            ans = await self.llm.json(
                "Answer whether the value the assistant read back means the same as the person's answer.",
                f'Read back: "{heard}"\nThe person\'s answer: "{value}"',
                max_tokens=12,
                grammar='root ::= "{\\"same\\":" ("true" | "false") "}"\n',
                schema={"type": "object", "properties": {"same": {"type": "boolean"}}, "required": ["same"]},
            )
            return bool(ans.get("same"))
        except (LLMError, AttributeError) as e:
            log.warning("persona: %s", e)
            return False

    async def _option(self, options: list[str], value: str) -> str | None:
        """The option in ``options`` that means ``value``, or None when the LLM finds none. A
        nationality or country the ear has a table for (:data:`~appliance.simulate.hearing.NATIONALITIES`)
        is picked by that table alone: its country as listed ("Ireland" for "Irish"), else the
        country as the person names it ("Ireland", when the list was heard without it); any
        other value is the LLM's pick. Bench, aoife: the choices were heard with "Ireland" as
        "island", the LLM picked "France" for "Irish", and the form got FR."""
        if names := hearing.country_names(value):
            return next((o for o in options if o.casefold() in names), names[0].title())
        try:
            ans = await self.llm.decide(
                'Which of the options the assistant listed means the person\'s answer? "none" when none does.',
                f'Options: {", ".join(options)}\nThe person\'s answer: "{value}"',
                choices("OptionPick", option=(*options, "none")),
                max_tokens=24,
            )
        except LLMError as e:
            log.warning("persona: %s", e)
            return None
        return ans.option if ans.option in options else None

    async def _judge(self, heard: str, topic: str) -> str | None:
        """The person's objection to a read-back ``heard`` of ``topic`` ("No, it's …"; spelled
        from the second on, for a detail a person spells), or None when it states the value."""
        value = self.believed(topic)
        if hearing.states(heard, value) or (
            topic in WORDED_KEYS and hearing.may_mean(heard, value) and await self._same(heard, value)
        ):
            return None
        self._rejections[topic] = self._rejections.get(topic, 0) + 1
        if self._rejections[topic] >= 2 and topic in SPELLABLE_KEYS:  # words failed twice: spell it
            return f"No, it's {value}: {speech.say_spelled(value)}."
        return f"No, it's {value}" + ("" if value.endswith((".", "!", "?")) else ".")

    async def _check(self, heard: str, about: str | None) -> str | None:
        """The person's objection to the first wrong value that ``heard`` states, or None: a
        value it names by its detail ("…, your passport number, X-ray, one, …": several said
        together, or one the summary states for the first time) is judged against that detail,
        the first one unnamed ("I have Ada Lovelace, your date of birth, …") against ``about``
        (None: not judged). A named detail whose value the person did not make out (garbled, or
        not heard at all) is objected to too. An objection names its detail ("No, my passport number is …")."""
        first, *named = _LABELLED.split(read_back_items(heard))
        if about is not None and first.strip(" ,.;:") and about not in ("none", "submit") and self.believed(about):
            if (objection := await self._judge(f"I have {first}", about)) is not None:
                return objection
        for item in named:
            # the label ends at the first comma or full stop (Whisper: "your email. at example dot com")
            label, said = (m.group(1), m.group(2)) if (m := _LABEL_END.match(item)) else (item, "")
            topic = self._named_as(label)
            if topic is None or not self.believed(topic) or _AS_CONFIRMED.search(item):
                continue  # "your email and phone as you confirmed them", or a detail this person does not know
            # a value heard garbled, or not at all, is not confirmed: bench, aoife and siobhan said yes to "I have
            # your email. at example dot com in your phone number, …" and a misheard e-mail was sent
            if _ISO_DATE.fullmatch(self.believed(topic)) and (year := _YEAR.search(said)):
                said = said[: year.end()]  # a summary's values run on: "the 11th of June. 1995, Spain, 28 June, 2027"
            if await self._judge(f"I have {said}", topic) is not None:
                value = self.believed(topic)
                if self._rejections[topic] >= 2 and topic in SPELLABLE_KEYS:
                    value = f"{value}: {speech.say_spelled(value)}"
                self._previous = topic  # its read-back comes next
                sentence = self._sentence(topic, value)
                return f"No, {sentence if sentence.startswith('I ') else sentence[0].lower() + sentence[1:]}"
        return None

    async def _answer(self, heard: str, topic: str, kind: str) -> str | None:
        if kind == "presence":
            return "Yes, I'm here."
        if topic == "submit":
            if self.profile.adds_at_summary and not self._added:
                self._added = True  # "Not yet: please add …", once
                return self.profile.adds_at_summary
            return "Yes, please submit it." if self.profile.authorise_submit else "No, please don't submit it."
        if kind == "ask" and topic in self.profile.not_sure:
            return "I'm not sure."
        if topic == "none" or not self.believed(topic):
            return "Sorry, could you say that again?"  # the bot yielded the floor: it wants an answer
        if kind == "check":
            return await self._check(heard, topic) or "Yes, that's right."
        if _SPELL.search(heard) and re.search(r"[A-Za-z]", self.believed(topic)):  # asked to spell: anything
            return f"{speech.say_spelled(self.believed(topic))}."
        if self.believed(topic) in ("yes", "no"):
            return "Yes, I accept." if self.believed(topic) == "yes" else "No, I don't."
        value = self.believed(topic)
        listed = _listed(heard)
        if listed and value.casefold() not in (o.casefold() for o in listed):  # told the choices: name one
            value = await self._option(listed, value) or value
        said = self._sentence(topic, value)
        group = next((g for g in self.profile.answers_together if g[0] == topic and topic not in self._together), ())
        if group and kind == "ask":  # the rest of the group in the same breath, once
            self._together.add(topic)
        more = [k for k in (*self._asked_with, *group[1:]) if k != topic] if kind == "ask" else []
        for k in dict.fromkeys(more):
            if self.believed(k):
                sentence = self._sentence(k, self.believed(k))
                said += f" And {sentence if sentence.startswith('I ') else sentence[0].lower() + sentence[1:]}"
        return said

    @staticmethod
    def _sentence(topic: str, value: str) -> str:
        """The person's sentence that gives ``value`` for ``topic`` ("My email is …")."""
        template = KEY_WORDS[topic][1] if topic in KEY_WORDS else f"My {topic.replace('_', ' ')} is {{v}}."
        return re.sub(r"([.!?])\.$", r"\1", template.format(v=value))  # "… after 5 pm.." is one full stop


#: a read-back's frame at the start of a sentence ("I have …", "Thanks, I have …", "For your family name, I have
#: it as …", and as tiny.en wrote "I have"
#: on the call: "I had 077. 009, …", "I ask you on oneel, when were you born?" — bench: taken for no read-back,
#: the person answered the question and a wrong name was confirmed); not "I have what you typed" (nor "… what
#: you type", as Whisper may write it: bench, the person took it for a read-back of the e-mail)
_FRAME = re.compile(
    r"^\W*(?:(?:thanks|thank you|okay|ok|great)\W+)?(?:for your [\w()' -]{1,40}?[\s,:]+)?"
    r"(?:i have|i had|i ask you|i've got|i got|so that's|"
    r"so|you said)\b"
    r"(?!\W+what you typed?\b)\W*",
    re.I,
)
#: a read-back that names its detail, group 1 ("For your family name, I have it as Juliett, …", and as Whisper
#: may write it: "for your family name. I have it as …")
_READ_BACK_OF = re.compile(r"\bfor your ([\w()' -]{1,40}?)[\s,:;.]+i (?:have|had)\b", re.I)
#: a question about the person travelling with them ("What is the first name of passenger 2?")
_COMPANION_ASKED = re.compile(
    r"\b(passenger|traveller|traveler|guest|person|adult) (2|two)\b|\bsecond (passenger|traveller|guest|person)\b|\bpartner\b",
    re.I,
)


def _companion_topic(asked: str, topics) -> str | None:
    """The companion's detail a question asks for (``companion_*`` profile keys), or None."""
    for words, key in (
        (r"birth|born", "companion_date_of_birth"),
        (r"first|given", "companion_given_name"),
        (r"last|family|surname", "companion_family_name"),
        (r"name", "companion_name"),
    ):
        if re.search(words, asked, re.I) and key in topics:
            return key
    return None


#: a request for consent ("Do you accept the fare rules and the privacy notice?")
_CONSENT_ASKED = re.compile(r"^\W*(?:and\W+)?do you (?:accept|agree|consent)\b", re.I)
#: a question that names what it asks for in its object: "What is your date of birth?", "what's your email
#: address", "What is your seat preference: Window, …?" (group 1: the words after "your")
#: the detail a question names: "What is your X?", or a reminder of one left to the person ("I'm waiting for you
#: to set your X: you can type it in the box …")
_ASKED_FOR = re.compile(r"\b(?:what(?:'s| is| are)|to set) your ([a-z][a-z -]*?)\s*(?:[?:.,;]|$)", re.I)
#: where the question starts after a read-back ("I have Miller. What is …?", or with a comma as Whisper may write
#: it, or a question mark: "I have G-Gars like curse what? What is your date of birth?", or nothing before a
#: capital: "I have plus 1 4 1 6 5 5 5 0 1 4 2 What is your destination?")
_THEN_ASKED = re.compile(
    r"(?:[.,;!?]\s+|\s+(?=[A-Z]))(?=(?i:what|when|which|how|who|where|do|does|did|are|is|can|"
    r"could|would|and)\b[^.!?]*\?)"
)


#: the options the assistant lists after an answer it did not get ("The choices are Australia, Brazil, …, or
#: United States. What is your nationality?"; Whisper may put full stops between them), group 1
_CHOICES = re.compile(r"\bchoices are:?\s+(.+?)\s*(?:[.?!]\s+(?=(?i:what|which)\b)|[?!]|$)", re.I | re.S)


#: the page's close matches the assistant asks between ("The page offers several for destination city: Rome,
#: Italy; or Rome, Georgia, United States. Which one do you mean?", and as Whisper wrote it: "… for destination
#: city. Rome, Italy, or Rome, …"): group 1 the detail, group 2 the options, parted by semicolons or "or"
_SEVERAL = re.compile(r"\boffers? several for ([^:.,]{1,60})[:.,]\s*(.+?)\.?\s+which one\b", re.I | re.S)


def _listed(heard: str) -> list[str]:
    """The options listed in ``heard`` (:data:`_CHOICES`, or :data:`_SEVERAL`'s, parted by
    semicolons or "or": Whisper may hear a semicolon as a comma), or [] when none are."""
    if m := _SEVERAL.search(heard):
        options = (x.strip(" .,") for x in re.split(r";|\bor\b", re.sub(r"\bor another one$", "", m.group(2))))
        return [o for o in options if o]
    m = _CHOICES.search(heard)
    if m is None:
        return []
    return [o for o in (x.strip(" .") for x in re.split(r",|\.\s|\bor\b", m.group(1))) if o]


def _spellable(value: str) -> bool:
    """Whether a person would spell ``value`` when asked to: a word or a code (letters in it, up
    to three words), not a sentence ("Please call me after 5 pm.") or a number."""
    return bool(re.search(r"[^\W\d_]", value)) and len(value.split()) <= 3


#: where a read-back names the next value's detail: "I have Ada Lovelace, your date of birth, …, and your
#: passport number, …"; "Here is what I'll submit: …; your email, ada at example dot com; …"
#: a summary's details stated by their names only ("your passport number, email, and phone number as you
#: confirmed them"): bench, the person took "email" for a wrong passport number and corrected it 1,000 times
_AS_CONFIRMED = re.compile(r"\bas you (?:confirm|gave|give)", re.I)  # Whisper: "as you confirm them"
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_YEAR = re.compile(r"\b(?:1[89]|20)\d\d\b")
#: a labelled item of a read-back: its label, and the value after the first comma, full stop, colon or semicolon
_LABEL_END = re.compile(r"\s*([^,.;:]+?)\s*[,.;:]\s*(.*)", re.S)
_LABELLED = re.compile(r"(?:[,;.]\s*|\s+)(?:(?:and|in|an|end)\s+)?\byour\s+", re.I)  # Whisper: "in your"


def read_back_items(heard: str) -> str:
    """The statement part of a read-back or a summary: its frame (:func:`~appliance.simulate.hearing.read_back`),
    a summary's lead-in ("Here is what I'll submit:") and a closing question ("Shall I submit
    the form now?") off; a leading "your" kept, so that :data:`_LABELLED` parts it."""
    text = re.sub(r"(?is)^.*?\bwhat i'?ll (?:submit|send)\W*", "", heard)
    text = hearing.read_back(re.sub(r"(?i)[^.!?;]*\b\w+ i (?:submit|send)\b[^.!?;]*[.!?]?\s*$", "", text.strip()))
    return f" {text}" if re.match(r"(?i)your\b", text) else text


def _stated_then_asked(heard: str) -> tuple[str, str] | None:
    """A read-back followed by the next question, as (the read-back, the question): "Thanks.
    I have Miller. What is your date of birth?" → ("I have Miller.", "What is your date of
    birth?"); None when ``heard`` is not that (a plain question, or a read-back asking "Is
    that right?")."""
    if _CHECK.search(heard):
        return None
    sentences = hearing.sentences(heard)
    at = next((i for i, x in enumerate(sentences) if _FRAME.match(x)), None)
    if at is None:
        return None
    rest = " ".join(sentences[at:])
    cut = _THEN_ASKED.search(rest)
    if cut is None:
        return None
    return rest[: cut.start() + 1].strip(), rest[cut.end() :].strip()


# ---- the person's mouth: written → spoken -------------------------------------------------------------


def _segment(word: str, vocabulary: list[str]) -> str:
    """Split a run of letters into known words where possible: "davidmiller" → "david miller"."""
    out, rest = [], word
    while rest:
        hit = next((v for v in sorted(vocabulary, key=len, reverse=True) if v and rest.startswith(v)), None)
        if hit is None:
            out.append(rest)
            break
        out.append(hit)
        rest = rest[len(hit) :]
    return " ".join(out)


def mouth(text: str, vocabulary: list[str] = (), spell: bool = False) -> str:
    """Written → spoken, as a person says it: "+447700900123" → "plus four four, seven …";
    "david@example.com" → "david at example dot com"; "1990-03-14" → "the fourteenth of March,
    nineteen ninety"; "K47118639" → "K, four seven one, …"; "davidmiller84" → "david miller
    eighty four" (``vocabulary``: words the person knows are in their own identifiers).
    ``spell``: codes with the spelling alphabet's words, as a person does when asked again
    ("M1 1AE" → "Mike, one, one, Alpha, Echo": the words alone, since a letter said before
    its word is easily heard as a digit)."""
    vocab = [v.casefold() for v in vocabulary]

    def email(m: re.Match) -> str:
        local, domain = m.group(1), m.group(2)
        parts = re.split(r"([._\-])", local)
        said = " ".join({".": "dot", "_": "underscore", "-": "dash"}.get(p, _segment(p, vocab)) for p in parts if p)
        return f"{said} at {domain.replace('.', ' dot ')}"

    def date(m: re.Match) -> str:
        return speech.say_date(m.group(0))

    def token(m: re.Match) -> str:
        t = m.group(0)
        if t.startswith("+"):
            d = t[1:]
            return f"plus {speech.say_digits(d[:2])}, {speech.say_digits(d[2:])}"
        if t.isdigit():
            return speech.say_digits(t)
        if t.islower():  # a user name: known words, then the number as a person says it
            return " ".join(
                _segment(p, vocab)
                if p.isalpha()
                else speech.say_number(int(p))
                if len(p) <= 2
                else speech.say_digits(p)
                for p in re.findall(r"[a-z]+|\d+", t)
            )
        pieces = re.findall(r"[A-Za-z]+|\d+", t)  # a code: letters one by one, digits in groups
        return ", ".join(" ".join(p) if p.isalpha() else speech.say_digits(p) for p in pieces)

    if spell:  # a code, with its inner space ("M1 1AE"): letters and digits, at least one of each
        text = re.sub(
            r"\b(?=[A-Z0-9 ]*\d)(?=[A-Z0-9 ]*[A-Z])[A-Z0-9]+(?: [A-Z0-9]+)?\b",
            lambda m: speech.say_icao(m.group(0)),
            text,
        )
    text = re.sub(r"([A-Za-z0-9._\-]+)@([A-Za-z0-9.\-]+\.[A-Za-z]{2,})", email, text)
    text = re.sub(r"\b\d{4}-\d{2}-\d{2}\b", date, text)
    return re.sub(r"\+\d{6,}|\b(?=[A-Za-z]*\d)[A-Za-z0-9]{2,}\b", token, text)
