"""The confirmation core without audio, LLM or bus: an interview state and a talk in, typed
steps out; answers fed back as the loop would."""

from __future__ import annotations

from dataclasses import replace

import pytest

from appliance.phone_agent import confirmation, interview
from appliance.phone_agent.confirmation import Done, Heard, Question, Send, Sync, Synced, Talk
from appliance.protocol import (
    ONE_TIME_CODE,
    AddItem,
    FieldSpec,
    FormatInvalid,
    InfoCollected,
    StatusUpdate,
    SubmitAuthorized,
)
from appliance.protocol.line import SayOutcome

NAME = FieldSpec(name="family_name", label="Family name", type="text", required=True)
GIVEN = FieldSpec(name="given_name", label="Given name", type="text", required=True)
DOB = FieldSpec(name="date_of_birth", label="Date of birth", type="date", required=True)


def settle(turn: confirmation.Turn) -> confirmation.Turn:
    """Carry out a Sync with no messages arrived, as the loop would; the steps before it are kept."""
    while isinstance(turn.steps[-1], Sync):
        after = confirmation.carry(turn.state, turn.talk, Synced())
        turn = confirmation.Turn(after.state, after.talk, turn.steps[:-1] + after.steps)
    return turn


def start(*specs: FieldSpec) -> confirmation.Turn:
    state = interview.start(specs)
    return settle(confirmation.begin(state, Talk(), interview.next_step(state)))


def answer(turn: confirmation.Turn, text: str, said: SayOutcome | None = None) -> confirmation.Turn:
    """Answer the turn's question; the next turn, settled."""
    assert isinstance(turn.steps[-1], Question), turn.steps
    return settle(confirmation.carry(turn.state, turn.talk, Heard(text, said=said)))


def question(turn: confirmation.Turn) -> str:
    step = turn.steps[-1]
    assert isinstance(step, Question), turn.steps
    return step.text


def sent(turn: confirmation.Turn) -> list[InfoCollected]:
    return [s.payload for s in turn.steps if isinstance(s, Send)]


def test_a_read_back_said_yes_to_confirms_the_value():
    turn = start(NAME)
    assert question(turn) == "What is your family name?"
    turn = answer(turn, "It's Miller.")
    assert question(turn) == "I have Miller. Is that right?"
    assert sent(turn) == [InfoCollected(field="family_name", value="Miller", confirmed=False)]
    turn = answer(turn, "Yes.")
    assert sent(turn) == [InfoCollected(field="family_name", value="Miller", confirmed=True)]
    assert isinstance(turn.steps[-1], Done) and turn.state.confirmed == {"family_name": "Miller"}
    assert turn.talk.read_backs == 1 and turn.talk.job is None


def test_a_rejected_name_read_back_asks_for_a_spelling_and_reads_it_back_spelled():
    turn = answer(answer(start(NAME), "It's Millar."), "No.")
    assert question(turn) == "Could you spell your family name for me, letter by letter?"
    assert turn.state.rejections == {"family_name": 1} and turn.state.spell_asks == {"family_name": 1}
    turn = answer(turn, "M I L L E R.")
    assert question(turn) == "For your family name, I have it as Mike, India, Lima, Lima, Echo, Romeo. Is that right?"
    assert answer(turn, "Yes.").state.confirmed == {"family_name": "Miller"}


def test_an_answer_to_the_next_question_confirms_the_value_read_back_with_it():
    turn = answer(start(NAME, DOB), "Miller.")
    assert question(turn) == "I have Miller. What is your date of birth?"
    turn = answer(turn, "The 3rd of May 1990.")
    assert InfoCollected(field="family_name", value="Miller", confirmed=True) in sent(turn)
    assert question(turn) == "I have the third of May, nineteen ninety. Is that right?"  # the carried answer, read back
    assert answer(turn, "Yes.").state.confirmed == {"family_name": "Miller", "date_of_birth": "1990-05-03"}


def test_a_no_to_a_value_read_back_with_the_next_question_rejects_it_and_the_question_waits():
    turn = answer(answer(start(NAME, DOB), "Millar."), "No, it's not.")
    assert "family_name" not in turn.state.confirmed and turn.state.rejections == {"family_name": 1}
    assert [a.spec.name for a in turn.state.queue] == ["date_of_birth"]
    assert "spell" in question(turn).casefold()  # the family name, spelled


def test_a_given_and_a_family_name_are_asked_and_read_back_together():
    turn = start(GIVEN, NAME)
    assert question(turn) == "What is your full name?"
    turn = answer(turn, "David Miller.")
    assert question(turn) == "I have David Miller. Is that right?"
    turn = answer(turn, "Yes.")
    assert turn.state.confirmed == {"given_name": "David", "family_name": "Miller"}
    assert isinstance(turn.steps[-1], Done)


def test_a_yes_to_a_read_back_cut_off_before_its_value_was_heard_confirms_nothing():
    turn = answer(start(NAME), "Miller.")
    cut = SayOutcome(interrupted=True, heard="I have")
    turn = answer(turn, "Yes.", said=cut)
    assert turn.state.confirmed == {}
    assert "read_back_cut" in [getattr(s, "what", None) for s in turn.steps]
    assert question(turn) == "I have Miller. Is that right?"  # said again
    turn = answer(turn, "Yes.", said=SayOutcome(interrupted=True, heard="I have Miller."))  # cut after the value
    assert turn.state.confirmed == {"family_name": "Miller"}


def test_an_answer_to_a_next_question_not_heard_is_no_confirmation():
    turn = answer(start(NAME, DOB), "Miller.")
    turn = answer(turn, "The 3rd of May 1990.", said=SayOutcome(interrupted=True, heard=""))
    assert turn.state.confirmed == {} and [a.spec.name for a in turn.state.queue] == ["date_of_birth"]
    assert question(turn) == "I have Miller. Is that right?"  # read back on its own


def test_heard_fully_needs_the_whole_statement_played():
    statement = "I have Miller."
    assert confirmation.heard_fully(None, statement)
    assert confirmation.heard_fully(SayOutcome(interrupted=False, heard=""), statement)
    assert confirmation.heard_fully(SayOutcome(interrupted=True, heard="I have Miller. Is"), statement)
    assert not confirmation.heard_fully(SayOutcome(interrupted=True, heard="I have"), statement)


def test_a_no_to_a_value_read_back_cut_off_still_rejects_it():
    turn = answer(answer(start(NAME), "Millar."), "No.", said=SayOutcome(interrupted=True, heard="I have"))
    assert turn.state.rejections == {"family_name": 1}
    assert question(turn) == "Could you spell your family name for me, letter by letter?"


def test_a_step_failed_during_a_read_back_puts_the_field_back_in_the_queue():
    turn = answer(start(NAME), "Miller.")
    turn = confirmation.carry(turn.state, turn.talk, confirmation.GaveUp())
    assert isinstance(turn.steps[-1], Done) and [a.spec.name for a in turn.state.queue] == ["family_name"]


def test_a_pick_among_the_page_matches_is_asked_again_until_one_is_named_never_guessed():
    town = FieldSpec(name="town", label="Town", type="text", required=True)
    refusal = FormatInvalid(
        field="town", expected="a listed town", got="Paris", candidates=["Paris, France", "Paris, Texas"]
    )
    state = interview.apply(interview.start([town]), refusal)
    turn = confirmation.begin(state, Talk(), interview.next_step(state))
    assert question(turn) == "The page offers several for town: Paris, France; or Paris, Texas. Which one do you mean?"
    for unnamed in ("The French one, in Europe.", "My country is the United Kingdom."):
        turn = answer(turn, unnamed)  # no word that tells them apart: asked again, no LLM guess
        assert question(turn).startswith("Sorry, I didn't get which one.") and sent(turn) == []
    turn = answer(turn, "Paris, France.")
    assert sent(turn) == [InfoCollected(field="town", value="Paris, France", confirmed=True)]
    assert isinstance(turn.steps[-1], Done)


def authorising() -> confirmation.Turn:
    state = interview.start([NAME])
    state = interview.confirm(interview.begin(state, interview.next_step(state)), "family_name", "Miller")
    state = interview.apply(state, StatusUpdate(state="auth-required"))
    return confirmation.authorise(state, Talk())


def test_a_yes_to_submit_waits_out_the_grace_then_sends_the_authorisation():
    turn = authorising()
    assert question(turn).endswith("Shall I submit the form now?") and not turn.steps[-1].counted
    turn = answer(turn, "Yes, go ahead.")
    assert isinstance(turn.steps[-1], confirmation.SubmitGrace)
    turn = confirmation.carry(turn.state, turn.talk, confirmation.Stopped(False))
    assert [type(s) for s in turn.steps] == [Send, confirmation.Decision, confirmation.WatchSubmit, Done]
    assert isinstance(turn.steps[0].payload, SubmitAuthorized) and not turn.state.auth_requested


def test_a_stop_in_the_grace_asks_again_and_a_no_ends_the_call_unsent():
    turn = answer(authorising(), "Yes.")
    turn = confirmation.carry(turn.state, turn.talk, confirmation.Stopped(True))
    assert question(turn) == "Shall I submit the form now, or leave it unsent?"
    turn = answer(turn, "No.")
    assert turn.steps[-1] == confirmation.EndCall("not submitted: the person did not authorise the submission")
    assert [s.payload for s in turn.steps if isinstance(s, Send)] == [
        StatusUpdate(state="canceled", message="the person did not authorise the submission")
    ]


def test_an_answer_fed_back_with_no_exchange_in_progress_is_refused():
    turn = answer(answer(start(NAME), "Miller."), "Yes.")
    with pytest.raises(ValueError, match="Heard fed back, but no exchange is in progress"):
        confirmation.carry(turn.state, turn.talk, Heard("Yes."))


PHONE = FieldSpec(name="phone", label="Mobile number", type="tel", required=True)
CODE = FieldSpec(name="security_code", label="Security code", type="text", required=True, meaning=ONE_TIME_CODE)


@pytest.mark.parametrize(
    ("spec", "said", "bound"),
    [(PHONE, "+44 7700 900123.", interview.MAX_ASKS), (CODE, "4 2 8 9 1 3.", interview.MAX_CODE_ASKS)],
    ids=["phone", "one-time-code"],
)
def test_a_field_the_page_keeps_refusing_is_asked_a_bounded_number_of_times_then_handed_over(spec, said, bound):
    """Issue 26: a page that regrouped a phone number was taken as refusing it, 11,866 asks in
    4 minutes. Whatever the page does, one field is asked MAX_ASKS times, then handed over; a
    wrong one-time code is asked again at most twice (3 asks in all)."""
    state, talk, questions = interview.start([spec]), Talk(), 0
    for _ in range(20):
        step = interview.next_step(state)
        if not isinstance(step, interview.Ask):
            break
        turn, values = settle(confirmation.begin(state, talk, step)), []
        while isinstance(turn.steps[-1], Question):
            questions += not turn.steps[-1].sync  # an ask; a read-back is not one (CONTRACTS "asks")
            turn = answer(turn, "Yes." if turn.steps[-1].sync else said)
            values += sent(turn)
        state, talk = turn.state, turn.talk
        if values:  # whatever was sent, the page refuses it
            state = interview.apply(
                state, FormatInvalid(field=spec.name, expected="another value", got=values[-1].value)
            )
    assert questions == bound, questions
    assert spec.name in state.handed_over and not any(a.spec.name == spec.name for a in state.queue)
    ex = interview.next_step(state)
    assert isinstance(ex, interview.Explain) and ex.problem == "asked_out" and spec.label.lower() in ex.reason


IBAN = FieldSpec(name="iban", label="IBAN", type="text", required=True)
NOTES = FieldSpec(name="notes", label="Notes", type="text", required=False)


@pytest.mark.parametrize("unsure", ["I'm not sure.", "Um, I don't know, sorry.", "Skip it.", "No idea."])
def test_an_answer_that_gives_no_value_is_never_sent_as_one(unsure):
    turn = answer(start(IBAN), unsure)
    assert sent(turn) == [] and question(turn) == "The form needs your IBAN to go on. What is your IBAN?"
    turn = answer(turn, unsure)  # a second time: the person sets it themself
    assert sent(turn) == [] and "iban" in turn.state.handed_over
    # an optional field is left empty, said so
    turn = answer(start(NOTES), unsure)
    assert sent(turn) == [InfoCollected(field="notes", value="", confirmed=True)]


def test_a_value_that_merely_contains_the_words_is_still_a_value():
    turn = answer(start(NOTES), "Please skip the queue if you can.")
    assert question(turn).startswith("I have Please skip the queue")


def test_a_request_for_one_more_item_at_the_summary_goes_on_and_only_a_stop_ends_it():
    """Issue 26: "Not yet: … please add him as a second passenger" ended the call unsent."""
    turn = answer(
        authorising(),
        "Not yet: Charles Babbage, born 26 December 1791, is travelling with me. Please add him as a second passenger.",
    )
    adds = [s.payload for s in turn.steps if isinstance(s, Send)]
    assert [type(p) for p in adds] == [AddItem] and "second passenger" in adds[0].request
    assert not any(isinstance(s, confirmation.EndCall) for s in turn.steps)
    assert not turn.state.auth_requested and turn.state.browser_busy  # waits for the new fields
    for stop in ("No, don't submit it, I want another passenger first.", "No, stop."):
        turn = answer(authorising(), stop)
        assert isinstance(turn.steps[-1], confirmation.EndCall), stop


@pytest.mark.parametrize("said", ["Stop.", "Cancel, please.", "Okay, forget it.", "I don't want to fill in this form."])
def test_stop_or_cancel_mid_interview_ends_the_task_unsent_and_says_so(said):
    """Issue 27: "stop"/"cancel" at any time ends the task unsent, and the person hears so."""
    turn = answer(start(GIVEN, DOB), said)
    assert isinstance(turn.steps[-1], confirmation.EndCall)
    assert any(isinstance(s, confirmation.Say) and "Nothing has been sent" in s.text for s in turn.steps)
    assert sent(turn) == [StatusUpdate(state="canceled", message="the person cancelled the form")]  # no value


@pytest.mark.parametrize("said", ["Never mind, it's Miller.", "Stop calling it surname, it's Miller."])
def test_an_answer_with_such_a_word_in_it_is_still_an_answer(said):
    turn = answer(start(NAME), said)
    assert not isinstance(turn.steps[-1], confirmation.EndCall) and question(turn).startswith("I have")


def test_whats_left_lists_the_open_fields_then_asks_again():
    """Issue 27: "what's left?" is answered from the field list; the question comes again."""
    turn = answer(start(NAME, DOB, IBAN), "Sorry, what's left?")
    assert question(turn) == (
        "Still to do: your family name, your date of birth and your IBAN. What is your family name?"
    )
    turn = answer(turn, "It's Miller.")  # the next words answer the question
    assert sent(turn) == [InfoCollected(field="family_name", value="Miller", confirmed=False)]
    assert answer(start(IBAN), "Where are we?").steps[-1].text == "Still to do: your IBAN. What is your IBAN?"


def test_wait_holds_the_interview_until_the_person_speaks_again():
    """Issue 27: "wait" holds the interview (a longer silence before "Are you still there?");
    the next words answer the question asked before it."""
    turn = answer(start(NAME, DOB), "Hold on, I need to check.")
    step = turn.steps[-1]
    assert isinstance(step, Question) and step.text == confirmation.HELD and step.hold and step.field == "family_name"
    turn = answer(turn, "It's Miller.")
    assert sent(turn) == [InfoCollected(field="family_name", value="Miller", confirmed=False)]
    assert not turn.steps[-1].hold


def test_values_for_other_fields_in_one_answer_are_never_asked_for():
    """Issue 27: an answer that says much more than the value asked for is searched for the
    other fields' values (:class:`LookAhead`, the LLM's copy of the words); a field so answered
    is not asked, and its value is read back with the one asked, once."""
    turn = answer(start(NAME, DOB, IBAN), "It's Miller, and I was born on the tenth of December 1990, if that helps.")
    step = turn.steps[-1]
    assert isinstance(step, confirmation.LookAhead) and [s.name for s in step.specs] == [
        "family_name",
        "date_of_birth",
        "iban",
    ]
    said = {"family_name": "Miller", "date_of_birth": "the tenth of December 1990"}
    turn = settle(confirmation.carry(turn.state, turn.talk, confirmation.Ahead(said)))
    assert question(turn) == (
        "I have Miller and your date of birth, the tenth of December, nineteen ninety. What is your IBAN?"
    )
    assert sent(turn) == [
        InfoCollected(field="family_name", value="Miller", confirmed=False),
        InfoCollected(field="date_of_birth", value="1990-12-10", confirmed=False),
    ]
    turn = answer(turn, "It's GB33BUKB20201555555555.")
    assert turn.state.confirmed == {"family_name": "Miller", "date_of_birth": "1990-12-10"}
    assert turn.talk.read_backs == 2 and question(turn).endswith("Is that right?")  # the IBAN, last


def test_a_short_or_spelled_answer_is_not_searched_for_other_values():
    assert isinstance(answer(start(NAME, DOB), "It's Miller.").steps[-1], Question)
    assert isinstance(answer(start(NAME, DOB), "My family name is Miller, M, I, L, L, E, R.").steps[-1], Question)


def test_a_name_asked_together_with_more_said_leaves_only_the_name_to_its_fields():
    """ "My name is Ada Lovelace, and I was born on …" to "What is your full name?": the name
    parser alone made "Ada Lovelace And I" of it; the LLM's copy gives the name its words and
    the date of birth its own."""
    turn = start(GIVEN, NAME, DOB)
    turn = answer(turn, "My name is Ada Lovelace, and I was born on the tenth of December 1990.")
    assert isinstance(turn.steps[-1], confirmation.LookAhead)
    said = {"given_name": "Ada", "family_name": "Lovelace", "date_of_birth": "the tenth of December 1990"}
    turn = settle(confirmation.carry(turn.state, turn.talk, confirmation.Ahead(said)))
    assert question(turn) == (
        "I have Ada Lovelace and your date of birth, the tenth of December, nineteen ninety. Is that right?"
    )  # nothing is asked after it: read back on its own, once
    turn = answer(turn, "Yes.")
    assert turn.state.confirmed == {"given_name": "Ada", "family_name": "Lovelace", "date_of_birth": "1990-12-10"}
    assert not turn.talk.ahead and isinstance(turn.steps[-1], Done)


PASSPORT = FieldSpec(name="passport_number", label="Passport number", type="text", required=True)
EMAIL = FieldSpec(name="email", label="Email", type="email", required=True)
ADA = {
    "given_name": "Ada",
    "family_name": "Lovelace",
    "date_of_birth": "born the tenth of December 1990",
    "passport_number": "passport X12345678",
}


def ada_in_one_breath() -> confirmation.Turn:
    turn = start(GIVEN, NAME, DOB, PASSPORT, EMAIL)
    turn = answer(turn, "I'm Ada Lovelace, born the tenth of December 1990, passport X12345678.")
    assert isinstance(turn.steps[-1], confirmation.LookAhead)
    return settle(confirmation.carry(turn.state, turn.talk, confirmation.Ahead(ADA)))


def test_one_utterance_with_several_values_fills_their_fields_and_reads_them_back_once():
    """Issue 27 item 1: every value heard goes to its field, read back together with the next question."""
    turn = ada_in_one_breath()
    assert question(turn) == (
        "I have Ada Lovelace, your date of birth, the tenth of December, nineteen ninety, and your passport"
        " number, X-ray, one two three, four five six, seven eight. What is your email?"
    )
    assert [(i.field, i.value) for i in sent(turn)] == [
        ("given_name", "Ada"),
        ("family_name", "Lovelace"),
        ("date_of_birth", "1990-12-10"),
        ("passport_number", "X12345678"),
    ]
    turn = answer(turn, "It's ada at example dot com.")
    assert turn.state.confirmed == {
        "given_name": "Ada",
        "family_name": "Lovelace",
        "date_of_birth": "1990-12-10",
        "passport_number": "X12345678",
    }
    assert question(turn) == "I have ada, at example dot com. Is that right?"  # the last one: on its own


def test_a_correction_naming_one_of_the_values_said_together_takes_that_one_up_again():
    turn = answer(ada_in_one_breath(), "No, my passport number is X12345679.")
    assert turn.state.confirmed == {"given_name": "Ada", "family_name": "Lovelace", "date_of_birth": "1990-12-10"}
    # the "no" vouched for none of them: the summary states the others again (bench, grzegorz)
    assert set(turn.talk.unread) == {"given_name", "family_name", "date_of_birth"}
    turn = settle(confirmation.begin(turn.state, turn.talk, interview.next_step(turn.state)))
    assert question(turn) == (
        "For your passport number, I have it as X-ray, one two three, four five six, seven nine. Is that right?"
    )  # read back on its own
    assert answer(turn, "Yes.").state.confirmed["passport_number"] == "X12345679"


def test_a_correction_that_states_a_date_goes_to_the_date_not_the_name():
    """Bench, flight/david: "No, I was born on the fourteenth of March 1990." to a joint read-back
    was read as the name "Born On The Th"."""
    turn = answer(ada_in_one_breath(), "No, I was born on the eleventh of December 1990.")
    assert question(turn).startswith(
        "I have Ada Lovelace, your date of birth, the eleventh of December, nineteen ninety, and your passport"
    )  # read back again with the date put right; the name kept
    assert not turn.state.confirmed


def test_a_plain_no_to_values_said_together_asks_each_on_its_own():
    turn = answer(ada_in_one_breath(), "No, that's wrong.")
    assert not turn.state.confirmed and [a.spec.name for a in turn.state.queue][:4] == [
        "given_name",
        "family_name",
        "date_of_birth",
        "passport_number",
    ]


@pytest.mark.parametrize(("prob", "read_back_alone"), [(0.2, True), (0.95, False)])
def test_an_email_the_asr_was_unsure_of_is_read_back_on_its_own_and_a_sure_one_with_the_next_question(
    prob, read_back_alone
):
    """Issue 27 item 3: an explicit read-back only for strict kinds with low confidence."""
    turn = start(EMAIL, NAME)
    turn = settle(
        confirmation.carry(
            turn.state,
            replace(turn.talk, spell_below_prob=0.45),
            Heard(
                "My email is ada at example dot com.",
                words=(
                    ("My", 0.99),
                    ("email", 0.99),
                    ("is", 0.99),
                    ("ada", prob),
                    ("at", 0.99),
                    ("example", 0.98),
                    ("dot", 0.99),
                    ("com.", 0.99),
                ),
            ),
        )
    )
    said = question(turn)
    assert said.startswith("I have ada, at example dot com.")
    assert said.endswith("Is that right?") is read_back_alone
    assert said.endswith("What is your family name?") is not read_back_alone


def test_a_value_before_a_yes_no_question_is_confirmed_by_the_summary_not_read_back_alone():
    """Issue 27 item 3: "the remaining confirmations gathered into the summary": a value
    with no plain question after it (a yes/no would make its "no" an objection) is stated
    in the summary by its label instead of a read-back of its own."""
    terms = FieldSpec(name="terms", label="I accept the terms", type="checkbox", required=True)
    turn = answer(start(PASSPORT, terms), "It's X12345678.")
    assert isinstance(turn.steps[-1], Done) and turn.state.confirmed == {"passport_number": "X12345678"}
    assert turn.talk.read_backs == 0 and "passport_number" in turn.talk.unread
    state = interview.confirm(turn.state, "terms", True)
    summary = question(confirmation.authorise(interview.apply(state, StatusUpdate(state="auth-required")), turn.talk))
    assert "your passport number, X-ray, one two three" in summary and "as you confirmed" not in summary


@pytest.mark.parametrize(
    "said", ["Change the date to the twelfth of June 2027.", "Can you change my travel date to 12 June 2027?"]
)
def test_change_the_date_at_the_summary_takes_that_field_up_again_with_the_new_value(said):
    """Issue 27 item 5: "Change the date to the twelfth" goes back into the interview."""
    travel = FieldSpec(name="travel_date", label="Travel date", type="date", required=True)
    state = interview.start([travel])
    state = interview.confirm(interview.begin(state, interview.next_step(state)), "travel_date", "2027-06-02")
    turn = answer(confirmation.authorise(interview.apply(state, StatusUpdate(state="auth-required")), Talk()), said)
    assert sent(turn) == [InfoCollected(field="travel_date", value="2027-06-12", confirmed=False)]
    assert question(turn).startswith("I have the twelfth of June")


@pytest.mark.parametrize("said", ["It's G-Gars.", "My family name is A Miller."])
def test_a_name_heard_as_a_fragment_goes_to_spelling_at_once(said):
    """Issue 27 item 4: a stutter or a lone letter is never read back as a name."""
    turn = answer(start(NAME), said)
    assert question(turn).startswith(confirmation.UNSURE) and "spell" in question(turn)
    assert sent(turn) == []


def _section(spec: FieldSpec, section: str) -> FieldSpec:
    return spec.model_copy(update={"section": section})


def test_one_question_asks_a_sections_details_together_and_each_given_is_read_back_once():
    """Issue 27 item 1: "What are your full name and date of birth?", grouped by the page's
    sections; the LLM's copy gives each field its words; one read-back with the next question."""
    nationality = FieldSpec(
        name="nationality", label="Nationality", type="select", required=True, options=["British", "Irish"]
    )
    specs = [_section(s, "Passenger") for s in (GIVEN, NAME, DOB, PASSPORT, nationality)] + [_section(EMAIL, "Contact")]
    turn = start(*specs)
    assert question(turn) == "What are your full name and date of birth?"
    turn = answer(turn, "Ada Lovelace, the tenth of December 1990.")
    step = turn.steps[-1]
    assert isinstance(step, confirmation.LookAhead)
    assert [s.name for s in step.specs] == [
        "given_name",
        "family_name",
        "date_of_birth",
        "passport_number",
    ]  # no nationality nor e-mail in those words: the LLM is not asked for them (told.may_give)
    said = {"given_name": "Ada", "family_name": "Lovelace", "date_of_birth": "the tenth of December 1990"}
    turn = settle(confirmation.carry(turn.state, turn.talk, confirmation.Ahead(said)))
    assert question(turn) == (
        "I have Ada Lovelace and your date of birth, the tenth of December, nineteen ninety."
        " What is your passport number?"
    )
    turn = answer(turn, "X12345678.")
    assert turn.state.confirmed == {"given_name": "Ada", "family_name": "Lovelace", "date_of_birth": "1990-12-10"}


def test_a_sections_detail_the_answer_does_not_give_is_asked_next_on_its_own():
    specs = [_section(s, "Passenger") for s in (GIVEN, NAME, DOB)]
    turn = answer(start(*specs), "Ada Lovelace.")
    turn = settle(
        confirmation.carry(turn.state, turn.talk, confirmation.Ahead({"given_name": "Ada", "family_name": "Lovelace"}))
    )
    assert question(turn) == "I have Ada Lovelace. What is your date of birth?"


def test_an_answer_to_a_sections_question_that_gives_nothing_asks_each_on_its_own():
    specs = [_section(s, "Contact") for s in (EMAIL, PASSPORT)]
    turn = start(*specs)
    assert question(turn) == "What are your email and passport number?"
    turn = answer(turn, "Hmm, hang on.")
    turn = settle(confirmation.carry(turn.state, turn.talk, confirmation.Ahead({})))
    assert isinstance(turn.steps[-1], Done) and [a.spec.name for a in turn.state.queue] == ["email", "passport_number"]
    assert interview.next_step(turn.state) == turn.state.queue[0]  # never together again: asked one by one


def test_a_whole_name_copied_for_the_given_name_keeps_the_given_name_only():
    """Bench, text: the LLM's copy gave "David Miller" for the given name and "Miller" for the
    family name, read back as "David Miller Miller"."""
    specs = [_section(s, "Passenger") for s in (GIVEN, NAME, DOB)]
    turn = answer(start(*specs), "My name is David Miller. And I was born on the 14th of March 1990.")
    said = {"given_name": "David Miller", "family_name": "Miller", "date_of_birth": "the 14th of March 1990"}
    turn = settle(confirmation.carry(turn.state, turn.talk, confirmation.Ahead(said)))
    assert question(turn).startswith("I have David Miller and your date of birth")


def test_a_plain_no_with_the_right_name_to_values_said_together_reads_them_back_again():
    specs = [_section(s, "Passenger") for s in (GIVEN, NAME, DOB, PASSPORT)]
    turn = answer(start(*specs), "David Millar, the 14th of March 1990.")
    said = {"given_name": "David", "family_name": "Millar", "date_of_birth": "the 14th of March 1990"}
    turn = answer(settle(confirmation.carry(turn.state, turn.talk, confirmation.Ahead(said))), "No, it's David Miller.")
    assert question(turn) == (
        "I have David Miller and your date of birth, the fourteenth of March, nineteen ninety."
        " What is your passport number?"
    )
    assert not turn.state.confirmed


def test_corrections_at_the_summary_are_bounded_then_left_to_the_preview():
    """A person correcting again and again never reaches the submit otherwise (bench: 1,000 rounds)."""
    town = FieldSpec(name="city", label="Town", type="text", required=True)
    state = interview.start([town])
    state = interview.confirm(interview.begin(state, interview.next_step(state)), "city", "Leeds")
    state = interview.apply(state, StatusUpdate(state="auth-required"))
    for _ in range(interview.MAX_REOPENS):
        turn = answer(confirmation.authorise(state, Talk()), "No, my town is York.")
        assert isinstance(turn.steps[-1], Question) and "York" in question(turn)
        state = interview.apply(interview.confirm(turn.state, "city", "York"), StatusUpdate(state="auth-required"))
    turn = answer(confirmation.authorise(state, Talk()), "No, my town is York.")
    assert "preview" in " ".join(s.text for s in turn.steps if isinstance(s, confirmation.Say))
    assert question(turn) == "Shall I submit the form now?" and state.confirmed == {"city": "York"}


def test_values_said_together_with_an_email_the_asr_was_unsure_of_are_read_back_on_their_own():
    """Bench (audio): an e-mail heard right with a word at 0.44 sent the whole answer to spelling."""
    specs = [_section(s, "Contact") for s in (EMAIL, PASSPORT)] + [_section(NAME, "Other")]
    turn = start(*specs)
    words = tuple((w, 0.3 if w == "example.com" else 0.99) for w in "My email is ada at example.com".split())
    turn = settle(
        confirmation.carry(
            turn.state,
            replace(turn.talk, spell_below_prob=0.45),
            Heard("My email is ada at example.com and my passport number is X12345678.", words=words),
        )
    )
    said = {"email": "ada at example.com", "passport_number": "X12345678"}
    turn = settle(confirmation.carry(turn.state, turn.talk, confirmation.Ahead(said)))
    assert question(turn).startswith("I have your email, ada, at example dot com and your passport number")
    assert question(turn).endswith("Is that right?")
