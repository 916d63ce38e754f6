"""The phone agent's fixed words: what it says at the call's turns, the prompts it gives the
LLM, and the patterns of what the person says to them ("stop", "I'm here")."""

from __future__ import annotations

import re
from collections.abc import Iterable

from appliance.phone_agent import fields
from appliance.protocol import FieldSpec

#: short: the greeting and the consent notice ran 10.5 s before the first question (bench)
GREETING = "Hello! I'll fill in your web form while we talk."
#: Said when the computer agent's browser died and it opens the form again with every value it had.
REOPENING = (
    "Sorry, the web browser I use for your form stopped. I'm opening the form again and putting back what "
    "you've told me, so there's no need to repeat anything."
)
#: said on the first hold, while the form is still opening (a later hold acknowledges: ``Line.acknowledge``)
OPENING = "I'm opening the form now."
#: "wait", "stop", "no" after the yes to submitting
STOP = re.compile(r"\b(wait|stop|hold on|hang on|cancel|no|don't|do not|not yet)\b", re.I)
#: an answer to "Are you still there?" ("Yes, I'm here.", "Yes.", "")
PRESENT = re.compile(r"\W*(yes|yeah|yep)?\W*(i am|i'm)?\W*(still )?(here|there)?\W*", re.I)
#: an answer to "Are you still there?" and to nothing else ("Yes, I'm here.", not "Yes.")
LATE_PRESENCE = re.compile(r"\W*(yes|yeah|yep)?\W*(i am|i'm)\W*(still )?(here|there)\W*", re.I)


#: said when the computer agent has said nothing for a long time: the call ends
UNRESPONSIVE = (
    "I'm sorry, the form has stopped responding, so I'll end the call here. Nothing has been submitted. Goodbye."
)


def failed(reason: str) -> str:
    """The form cannot be done: ``reason``."""
    return f"I'm sorry, I couldn't complete the form: {reason}"


def submitted(page_answer: str) -> str:
    """The form was submitted; ``page_answer``: what the page said, as said (:func:`~appliance.phone_agent.fields.page_answer`)."""
    return f"Done! The form has been submitted. {page_answer}Thank you, goodbye.".replace("  ", " ")


def review(message: str) -> str:
    """The form is filled and waits for the person's review (``message``: the computer agent's words)."""
    return (
        f"{message.rstrip('. ')}. I have not submitted it: you can check it in the "
        "preview on your page, then submit it there yourself, or cancel. Goodbye."
    )


def stopping(advice: str) -> str:
    """The person has not acted on ``advice`` after the reminders: the call ends."""
    return f"I'll stop here: nothing has changed, and the form is not submitted. {advice} Goodbye."


PICK_OPTION = (
    'Pick the option the person means. Answer with the option, or "none of them" when the person '
    'named none of them. Example: options Germany, France, Spain; the person said "I\'m French" → '
    '{"option":"France"}.'
)
#: the LLM's pick when the person named none of the options
NONE_OF_THEM = "none of them"
#: the answer to a side question when the LLM failed
NO_ANSWER = "Good question; I can only help with the form for now."


def pick_option_prompt(spec: FieldSpec, text: str) -> str:
    """What the LLM is told to pick from: ``spec``'s options, its question and what the person said."""
    return f'Options: {", ".join(spec.options or ())}\nQuestion: {fields.question(spec)}\nThe person said: "{text}"'


def side_question_prompt(purpose: str, spec: FieldSpec, context: Iterable[str]) -> str:
    """The system prompt for a side question asked while ``spec`` was asked (``context``: recent bus messages)."""
    return (
        f"You are a friendly phone assistant helping a person fill in a web form. Purpose of the "
        f"call: {purpose}. The form asks for: {spec.label}"
        f"{'; its choices: ' + ', '.join(spec.options) if spec.options else ''}. What the person tells you is "
        "typed into that form and "
        "nowhere else, and nothing is sent before they allow it. Answer the person's question in one "
        "short spoken sentence; if you do not know, say so; never make up facts.\n"
        "Example: Why do you need my date of birth? => The form asks for it, and it is required to "
        "complete it.\nRecent messages from the other agents:\n" + "\n".join(context)
    )
