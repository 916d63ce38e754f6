"""The phone agent's interview core on scripted messages: no LLM, no audio, no bus."""

import pytest

from appliance.phone_agent import interview
from appliance.phone_agent.interview import Ask, Authorise, Failed, Finished, Hold, InterviewError
from appliance.protocol import (
    FieldFilled,
    FieldSpec,
    FillError,
    FormatInvalid,
    InfoCollected,
    InitiatePhoneCallAgent,
    NeedInfo,
    StatusUpdate,
    Submitted,
)

NAME = FieldSpec(name="family_name", label="Family name", type="text", required=True)
PHONE = FieldSpec(name="phone", label="Phone number", type="tel", required=True)
SEAT = FieldSpec(name="seat", label="Seat preference", type="radio", required=True, options=("Window", "Aisle"))


def asked(state):
    return [a.spec.name for a in state.queue]


def ask_next(state):
    """Begin the next ask; return (state, ask)."""
    step = interview.next_step(state)
    assert isinstance(step, Ask), step
    return interview.begin(state, step), step


def test_fields_queue_in_arrival_order_without_repeats():
    state = interview.start([NAME])
    state = interview.apply(state, NeedInfo(fields=(NAME, PHONE)))
    state = interview.apply(state, InitiatePhoneCallAgent(purpose="p", required_info=(SEAT, PHONE)))
    assert asked(state) == ["family_name", "phone", "seat"]
    assert list(state.specs) == ["family_name", "phone", "seat"]
    state, ask = ask_next(state)
    assert ask == Ask(NAME) and asked(state) == ["phone", "seat"]
    state = interview.confirm(state, "family_name", "Miller")
    state = interview.apply(state, NeedInfo(fields=(NAME,)))  # a confirmed field is not asked again
    assert asked(state) == ["phone", "seat"]


def test_format_invalid_puts_the_field_first_with_its_reason_and_unconfirms_it():
    state = interview.confirm(interview.start([NAME, PHONE, SEAT]), "phone", "07700900123")
    state = interview.apply(state, FormatInvalid(field="phone", expected="+ and country code", got="07700900123"))
    assert state.queue[0] == Ask(PHONE, "it needs + and country code")
    assert asked(state) == ["phone", "family_name", "seat"]  # not queued twice
    assert "phone" not in state.confirmed
    assert interview.refused(state, "phone", "07700900123") and not interview.refused(state, "phone", "+447700900123")
    state, ask = ask_next(state)
    assert ask.reason == "it needs + and country code" and state.refusals == {}  # the reason travels in the ask


def test_fill_error_refuses_any_value_and_a_refusal_for_no_field_fails():
    state = interview.apply(interview.start([NAME]), FillError(field="family_name", reason="too long"))
    assert state.queue == (Ask(NAME, "too long"),)
    assert interview.refused(state, "family_name", "anything")  # a fill_error does not say which value
    state = interview.apply(state, FillError(field="page", reason="the form at http://x did not load"))
    assert interview.next_step(state) == Failed("the form at http://x did not load")
    bad = interview.apply(interview.start(), FormatInvalid(field="page", expected="a page", got=""))
    assert interview.next_step(bad) == Failed("it needs a page")


def test_a_recovering_fill_error_is_told_once_and_asks_nothing_again():
    state, _ = ask_next(interview.start([NAME, PHONE]))
    state = interview.confirm(state, "family_name", "Miller")
    state = interview.apply(
        state, FillError(field="page", reason="the browser stopped (Chromium exited)", recovering=True)
    )
    assert interview.next_step(state) == interview.Reopening()  # before the next question
    state = interview.told_reopening(state)
    assert state.confirmed == {"family_name": "Miller"} and state.browser_busy
    assert interview.next_step(state) == Ask(PHONE)  # the confirmed name stays confirmed; the interview goes on
    with pytest.raises(InterviewError):
        interview.told_reopening(state)


def test_confirm_clears_the_refusal_and_reask_drops_the_queued_reask():
    state = interview.start([NAME, PHONE])
    state, _ = ask_next(state)
    state = interview.apply(state, FormatInvalid(field="family_name", expected="letters only", got="M1ller"))
    assert asked(state) == ["family_name", "phone"]
    again, reason = interview.reask(state, "family_name")  # asked again right here, not from the queue
    assert reason == "it needs letters only" and asked(again) == ["phone"] and again.refusals == {}
    assert interview.reask(again, "family_name") == (again, "")
    confirmed = interview.confirm(state, "family_name", "Miller")
    assert confirmed.confirmed == {"family_name": "Miller"} and confirmed.refusals == {}


def test_a_field_given_up_goes_last_then_fails_the_interview_the_second_time():
    state = interview.start([NAME, PHONE])
    state, _ = ask_next(state)
    state = interview.give_up(state, "family_name")
    assert asked(state) == ["phone", "family_name"] and state.given_up == {"family_name": 1}
    assert state.failed is None
    state, _ = ask_next(state)
    state, _ = ask_next(state)
    state = interview.give_up(state, "family_name")
    assert state.given_up == {"family_name": 2}
    assert interview.next_step(state) == Failed("I could not get a value for Family name that the form accepts")


def test_authorisation_flow():
    state = interview.apply(interview.start(), NeedInfo(fields=(SEAT,)))
    state = interview.confirm(interview.begin(state, Ask(SEAT)), "seat", "Window")
    assert interview.next_step(state) == Hold(boundary=True)  # every field confirmed: a step boundary, not a wait
    state = interview.apply(state, StatusUpdate(state="auth-required", message="ready"))
    assert interview.next_step(state) == Authorise()
    state = interview.apply(state, FormatInvalid(field="seat", expected="one of: Window, Aisle", got="Windw"))
    assert isinstance(interview.next_step(state), Ask)  # the page wants the field first, authorisation waits
    state, _ = ask_next(state)
    state = interview.confirm(state, "seat", "Window")
    assert interview.next_step(state) == Authorise()
    state = interview.authorised(state)
    assert not state.auth_requested and state.browser_busy and state.filler_said
    assert interview.next_step(state) == Hold(boundary=True)
    with pytest.raises(InterviewError, match="did not ask"):
        interview.authorised(state)
    state = interview.apply(state, Submitted(confirmation="Booking ABC"))
    assert interview.next_step(state) == Finished("Booking ABC")
    assert interview.next_step(interview.apply(interview.start(), Submitted())) == Finished("")


def test_failure_states_and_the_order_of_steps():
    state = interview.apply(interview.start([NAME]), StatusUpdate(state="auth-required"))
    assert isinstance(interview.next_step(state), Ask)  # a queued field comes before authorisation
    done = interview.apply(state, Submitted(confirmation="ok"))
    assert interview.next_step(done) == Finished("ok")
    assert interview.next_step(interview.apply(done, StatusUpdate(state="failed", message="crash"))) == Failed("crash")
    assert interview.next_step(interview.apply(state, StatusUpdate(state="canceled"))) == Failed("canceled")
    assert interview.apply(state, FieldFilled(field="family_name", value_read_back="Miller")) == state


def test_holds_count_waits_only_off_step_boundaries_and_say_the_filler_once():
    state = interview.start()
    assert interview.next_step(state) == Hold(boundary=True)  # the form is still loading
    state, filler = interview.hold(state)
    assert filler == "opening" and state.filler_said
    assert interview.hold(state) == (state, None)  # said once per boundary
    state = interview.apply(state, NeedInfo(fields=(NAME,)))
    assert not state.filler_said and not state.browser_busy
    state, _ = ask_next(state)
    state, filler = interview.hold(state)  # asked, not confirmed, browser idle: waiting on the browser
    assert filler is None and state.waits_on_browser == 1
    state = interview.apply(state, StatusUpdate(state="working", message="pressing Next"))
    state, filler = interview.hold(state)
    assert filler == "working" and state.waits_on_browser == 1
    with pytest.raises(InterviewError, match="next step is Ask"):
        interview.hold(interview.start([NAME]))


def test_illegal_transitions_raise():
    state = interview.start([NAME, PHONE])
    with pytest.raises(InterviewError, match="'phone' is not the next field"):
        interview.begin(state, Ask(PHONE))
    with pytest.raises(InterviewError, match="no field 'email'"):
        interview.confirm(state, "email", "a@b.c")
    with pytest.raises(InterviewError, match="no field 'email'"):
        interview.give_up(state, "email")
    with pytest.raises(InterviewError, match="not the next field"):
        interview.begin(interview.start(), Ask(NAME))


GIVEN = FieldSpec(name="given_name", label="Given name(s)", type="text", required=True)
FIRST = FieldSpec(name="first_name", label="First name", type="text", required=True)
LAST = FieldSpec(name="last_name", label="Last name", type="text", required=True)
DAY = FieldSpec(
    name="dob_day", label="Day", type="select", required=True, options=tuple(f"{d:02d}" for d in range(1, 32))
)
MONTH = FieldSpec(name="dob_month", label="Month", type="select", required=True, options=("January", "February"))
YEAR = FieldSpec(name="dob_year", label="Year", type="select", required=True, options=("1991", "1990"))


def test_a_rejected_name_is_spelled_then_spelled_or_typed_then_given_up():
    state = interview.start([NAME, SEAT])
    assert interview.ask_mode(state, NAME) == "words"
    state, more = interview.rejected(state, "family_name")
    assert more and interview.ask_mode(state, NAME) == "spell"
    state = interview.spell_asked(state, "family_name")
    assert interview.ask_mode(state, NAME) == "spell_or_type"  # the second request for a spelling offers the box
    state, more = interview.rejected(state, "family_name")
    state, more = interview.rejected(state, "family_name")
    assert not more  # REJECTION_LIMIT
    assert interview.ask_mode(state, SEAT) == "words"  # a choice is never spelled
    state, _ = ask_next(state)
    later = interview.give_up(state, "family_name")
    assert asked(later)[-1] == "family_name" and interview.ask_mode(later, NAME) == "spell_or_type"


def test_a_name_whose_answer_gave_no_value_is_spelled():
    """Bench: an e-mail that never parsed ("Sorry, I didn't get that" four times, twice) failed the
    form; a name or e-mail tiny.en did not get once came back no better the second time."""
    state = interview.start([NAME])
    assert interview.ask_mode(state, NAME) == "words"
    assert interview.ask_mode(interview.not_understood(state, "family_name"), NAME) == "spell"


def test_a_name_or_code_the_page_refused_twice_is_spelled():
    """Bench: "C, zero one, X, zero zero, T, four seven" came back as C01X000T47 five times in
    words; a value refused once is asked again in words (a user name already taken)."""
    state = interview.apply(
        interview.start([NAME]), FormatInvalid(field="family_name", expected="letters only", got="M1ller")
    )
    state, _ = interview.reask(state, "family_name")
    assert interview.ask_mode(state, NAME) == "words"
    state = interview.apply(state, FormatInvalid(field="family_name", expected="letters only", got="M1ller"))
    assert interview.ask_mode(state, NAME) == "spell"


def test_a_date_or_number_is_never_spelled_but_offers_the_box_once_its_read_backs_led_nowhere():
    dob = FieldSpec(name="date_of_birth", label="Date of birth", type="date", required=True)
    state = interview.start([dob, PHONE, SEAT])
    assert interview.ask_mode(state, dob) == interview.ask_mode(state, PHONE) == "words"
    state = interview.not_understood(interview.not_understood(state, "date_of_birth"), "phone")
    assert interview.ask_mode(state, dob) == interview.ask_mode(state, PHONE) == "words_or_type"
    state = interview.not_understood(state, "seat")
    assert interview.ask_mode(state, SEAT) == "words"  # a choice not understood once is asked in words again
    assert interview.ask_mode(interview.not_understood(state, "seat"), SEAT) == "spell"


def test_names_and_date_parts_are_asked_together_until_one_is_rejected_or_refused():
    state = interview.start([GIVEN, NAME, PHONE])
    step = interview.next_step(state)
    assert step == interview.AskTogether((Ask(GIVEN), Ask(NAME)), "name")
    state = interview.begin(state, step)
    assert asked(state) == ["phone"]
    state = interview.split(state, step)  # the joint read-back was rejected: each on its own, spelled
    assert asked(state) == ["given_name", "family_name", "phone"] and interview.next_step(state) == Ask(GIVEN)
    assert interview.ask_mode(state, GIVEN) == interview.ask_mode(state, NAME) == "spell"
    assert isinstance(interview.next_step(interview.start([FIRST, LAST])), interview.AskTogether)
    assert isinstance(interview.next_step(interview.start([NAME, GIVEN])), Ask)  # family first: as the page orders them
    dates = interview.start([DAY, MONTH, YEAR])
    assert interview.next_step(dates) == interview.AskTogether((Ask(DAY), Ask(MONTH), Ask(YEAR)), "date")
    refused = interview.apply(dates, FillError(field="dob_day", reason="not a day"))
    assert interview.next_step(refused) == Ask(DAY, "not a day")


def test_split_keeps_a_refused_fields_reason_and_counts_no_rejection_for_it():
    state = interview.start([GIVEN, NAME])
    together = interview.next_step(state)
    state = interview.begin(state, together)
    state = interview.apply(state, FormatInvalid(field="family_name", expected="letters only", got="M1ller"))
    state = interview.split(state, together)
    assert state.queue == (Ask(GIVEN), Ask(NAME, "it needs letters only"))
    assert dict(state.rejections) == {"given_name": 1}


def test_a_typed_value_is_confirmed_and_leaves_the_queue():
    state = interview.start([NAME, PHONE])
    state = interview.apply(state, InfoCollected(field="family_name", value="Siobhán", confirmed=True))
    assert state.confirmed == {"family_name": "Siobhán"} and state.typed == {"family_name": "Siobhán"}
    assert asked(state) == ["phone"]
    assert interview.apply(state, InfoCollected(field="nope", value="x", confirmed=True)) == state
    assert interview.apply(state, InfoCollected(field="phone", value="1", confirmed=False)) == state
    refused = interview.apply(state, FormatInvalid(field="family_name", expected="letters only", got="Siobhán"))
    assert "family_name" not in refused.typed and interview.next_step(refused) == Ask(NAME, "it needs letters only")


def test_a_withdrawn_authorisation_is_asked_again():
    state = interview.apply(interview.start(), StatusUpdate(state="auth-required"))
    state = interview.withdrawn(interview.authorised(state))
    assert interview.next_step(state) == Authorise()


def test_a_give_up_is_explained_first_and_its_field_handed_over():
    from appliance.phone_agent.interview import Explain
    from appliance.protocol import StepFailed

    state = interview.start([NAME, PHONE])
    failed = StepFailed(problem="widget", field="phone", reason="I could not set Phone number", advice="Set it.")
    state = interview.apply(state, failed, ts=1234)
    assert interview.next_step(state) == Explain("widget", "I could not set Phone number", "Set it.", "phone", 1234)
    assert asked(state) == ["family_name"] and state.handed_over == {"phone": "Set it."}
    state = interview.explained(state)
    state, ask = ask_next(state)
    state = interview.confirm(state, "family_name", "Miller")
    assert interview.next_step(state) == Hold(boundary=True)  # waiting for the person, not for the browser
    with pytest.raises(InterviewError, match="no explanation"):
        interview.explained(state)
    # a page-level give-up (no field) is explained too, and asks nothing away
    state = interview.apply(
        interview.start([NAME]), StepFailed(problem="no_control", reason="No button.", advice="Press it.")
    )
    assert isinstance(interview.next_step(state), Explain) and asked(state) == ["family_name"]
    # ... and the person is reminded of its advice while the page waits for them, until the
    # computer agent reports progress
    assert state.waiting_for == "Press it."
    from appliance.protocol import StatusUpdate

    assert interview.apply(state, StatusUpdate(state="working", message="pressing")).waiting_for == ""


def test_close_matches_are_asked_as_choices_and_a_typed_value_confirms():
    from appliance.protocol import InfoCollected

    state = interview.confirm(interview.start([NAME, PHONE]), "phone", "+4412")
    state = interview.apply(
        state, FormatInvalid(field="family_name", expected="A or B", got="Mil", candidates=("A", "B"))
    )
    step = interview.next_step(state)
    assert step.spec == NAME and step.choices == ("A", "B")
    state = interview.apply(
        state, InfoCollected(field="family_name", value="Miller", confirmed=True)
    )  # typed on the page
    assert state.confirmed["family_name"] == "Miller" and asked(state) == ["phone"]
    state, ask = ask_next(interview.start([NAME]))
    assert asked(interview.requeue(state, ask)) == ["family_name"]  # an ask cut short goes back first
    assert interview.requeue(interview.confirm(state, "family_name", "M"), ask).queue == ()


def test_review_ends_the_interview_once_nothing_is_left_to_ask():
    from appliance.phone_agent.interview import Review

    state = interview.apply(
        interview.start([NAME]), StatusUpdate(state="review", message="Filled, waiting for your review")
    )
    assert isinstance(interview.next_step(state), Ask)  # a queued field first
    state, _ = ask_next(state)
    assert interview.next_step(state) == Review("Filled, waiting for your review")


def test_fields_asked_together_and_cut_short_go_back_together_but_for_one_handed_over():
    from appliance.protocol import StepFailed

    state = interview.start([GIVEN, NAME, PHONE])
    together = interview.next_step(state)
    state = interview.begin(state, together)
    assert interview.next_step(interview.requeue(state, together)) == together  # a give-up to explain came first
    failed = StepFailed(problem="widget", field="family_name", reason="I could not set Family name", advice="Set it.")
    for handed in (
        interview.apply(interview.requeue(state, together), failed),
        interview.requeue(interview.apply(state, failed), together),
    ):
        assert asked(handed) == ["given_name", "phone"] and interview.next_step(interview.explained(handed)) == Ask(
            GIVEN
        )


def test_a_field_taken_back_at_the_summary_is_asked_first_and_the_submit_waits_for_a_new_request():
    state = interview.start([NAME, SEAT, PHONE])
    for spec in (NAME, SEAT, PHONE):
        state = interview.begin(state, state.queue[0])
        state = interview.apply(state, InfoCollected(field=spec.name, value="x", confirmed=True))
    state = interview.apply(state, StatusUpdate(state="auth-required"))
    assert isinstance(interview.next_step(state), Authorise)
    state = interview.reopen(state, SEAT.name)
    assert interview.next_step(state) == Ask(SEAT) and SEAT.name not in state.confirmed and not state.auth_requested
    with pytest.raises(InterviewError, match="no field 'town'"):
        interview.reopen(state, "town")
