"""The computer agent's field book on hand-made page readings: no browser, no LLM, no bus."""

from dataclasses import replace

import pytest

from appliance.computer_agent import fieldbook
from appliance.computer_agent.page import FieldView, FillProblem, Option, PageView
from appliance.protocol import FieldFilled, FillError, FormatInvalid, InfoCollected


def field(key, label, kind="text", *, value="", error="", required=True, options=None, hint="", **kw):
    return FieldView(
        ref=f"r-{key}",
        kind=kind,
        key=key,
        label=label,
        required=required,
        pattern=None,
        hint=hint,
        placeholder="",
        options=options,
        value=value,
        visible=True,
        enabled=True,
        error=error,
        **kw,
    )


def page(*fields):
    return PageView(url="http://127.0.0.1/form", title="Form", fields=tuple(fields), buttons=())


EMAIL = field("email", "Email", "email")
PHONE = field("phone", "Phone number", "tel", hint="+44 …")
SEAT = field("seat", "Seat", "radio", options=(Option("W", "Window"), Option("A", "Aisle")))
NEWS = field("news", "Newsletter", "checkbox", value=False, required=False)


def named(*fields):
    book = fieldbook.start_naming(fieldbook.FieldBook(), fields)
    for f in fields:
        book, _ = fieldbook.name(book, f, f.key)
    return fieldbook.done_naming(book)


def info(name, value, confirmed=True):
    return InfoCollected(field=name, value=value, confirmed=confirmed)


def test_naming_is_once_per_field_with_unique_names_and_specs():
    book = fieldbook.FieldBook()
    assert fieldbook.unnamed(book, [EMAIL, PHONE, EMAIL]) == (EMAIL, PHONE)  # one per key
    book = fieldbook.start_naming(book, [EMAIL, PHONE])
    assert fieldbook.unnamed(book, [EMAIL, PHONE]) == ()  # being named: not offered again
    book, spec = fieldbook.name(book, EMAIL, "email")
    assert (spec.name, spec.label, spec.type, spec.required) == ("email", "Email", "email", True)
    other = field("email2", "Work email", "email")
    book, spec2 = fieldbook.name(book, other, "email")
    assert spec2.name == "email_2" and fieldbook.name_of(book, other) == "email_2"
    # a name taken already: the field's label's own name when given and free (a page never holds two
    # copies of one detail: the 0.5B model named "Check-in" and "Check-out" both date_of_birth)
    check_in, check_out = field("cin", "Check-in", "text"), field("cout", "Check-out", "text")
    book, _ = fieldbook.name(book, check_in, "date_of_birth", instead="check_in")
    book, spec3 = fieldbook.name(book, check_out, "date_of_birth", instead="check_out")
    assert spec3.name == "check_out"
    book, spec4 = fieldbook.name(book, field("cout2", "Check-out", "text"), "date_of_birth", instead="check_out")
    assert spec4.name == "date_of_birth_2"  # its label's name is taken too
    with pytest.raises(fieldbook.FieldBookError, match="named already"):
        fieldbook.name(book, EMAIL, "mail")
    book = fieldbook.done_naming(book)
    assert fieldbook.unnamed(book, [EMAIL, PHONE, other]) == (PHONE,)  # its naming ended without a name
    date = field("dob", "Date of birth", "date", min="1900-01-01")
    assert fieldbook.spec_for("date_of_birth", date).format_hint == "a date, YYYY-MM-DD from 1900-01-01"
    assert fieldbook.spec_for("seat", SEAT).options == ("Window", "Aisle")


def test_announcements_wait_for_one_need_info():
    book = named(EMAIL, PHONE)
    for f in (EMAIL, PHONE):
        book = fieldbook.queue_announcement(book, fieldbook.entry(book, f.key).spec)
    book, specs = fieldbook.take_announcements(book)
    assert [s.name for s in specs] == ["email", "phone"] and book.announce == ()
    assert fieldbook.take_announcements(book) == (book, ())


def test_a_confirmed_value_the_page_holds_is_filled_and_reported():
    book = fieldbook.collect(named(EMAIL), info("email", "ada@example.org"), ts=1000)
    e = fieldbook.entry(book, "email")
    assert (e.value, e.confirmed, e.confirmed_ts, e.done) == ("ada@example.org", True, 1000, False)
    assert fieldbook.needs_fill(book, "email", EMAIL)  # not tried yet
    book, reply = fieldbook.read_back(book, "email", EMAIL, "ada@example.org", "")
    assert reply == FieldFilled(field="email", value_read_back="ada@example.org")
    assert fieldbook.entry(book, "email").done and not fieldbook.needs_fill(
        book, "email", replace(EMAIL, value="ada@example.org")
    )
    assert not fieldbook.pending(book, "email", EMAIL)
    # a re-rendered page lost the value: fill it again
    assert fieldbook.needs_fill(book, "email", replace(EMAIL, value=""))


def test_an_unconfirmed_value_is_filled_silently_and_keeps_the_page_open():
    book = fieldbook.collect(named(EMAIL), info("email", "ada@example.org", confirmed=False), ts=5)
    assert fieldbook.entry(book, "email").confirmed_ts is None
    book, reply = fieldbook.read_back(book, "email", EMAIL, "ada@example.org", "")
    assert reply is None and fieldbook.entry(book, "email").filled
    assert fieldbook.pending(book, "email", EMAIL)  # filled, but the person has not confirmed it


def test_the_pages_refusals_become_format_invalid_or_fill_error():
    book = fieldbook.collect(named(PHONE, SEAT), info("phone", "07700900123"), ts=1)
    book, reply = fieldbook.read_back(book, "phone", PHONE, "07700900123", "Please match the requested format.")
    assert reply == FormatInvalid(field="phone", expected="+44 …", got="07700900123")  # the hint, when there is one
    assert not fieldbook.entry(book, "phone").filled and not fieldbook.needs_fill(
        book, "phone", PHONE
    )  # tried: not again
    book = fieldbook.collect(book, info("phone", "+447700900123"), ts=2)
    assert fieldbook.needs_fill(book, "phone", PHONE)  # a new value is filled
    book, reply = fieldbook.read_back(book, "phone", PHONE, "+44770", "")
    assert reply == FillError(field="phone", reason="the page holds '+44770' after entering '+447700900123'")
    book = fieldbook.collect(book, info("seat", "Windw"), ts=3)
    book, reply = fieldbook.refused(
        book, "seat", FillProblem("format", "'Windw' is not one of the choices", "one of: Window, Aisle")
    )
    assert reply == FormatInvalid(field="seat", expected="one of: Window, Aisle", got="Windw")
    book, reply = fieldbook.refused(book, "seat", FillProblem("error", "the field is no longer on the page"))
    assert reply == FillError(field="seat", reason="the field is no longer on the page")
    book = fieldbook.collect(book, info("seat", "window"), ts=4)
    book, reply = fieldbook.read_back(book, "seat", SEAT, "W", "")  # options compare by value or label
    assert isinstance(reply, FieldFilled) and fieldbook.entry(book, "seat").done


def test_after_a_press_each_page_error_for_our_value_is_reported_once():
    book = fieldbook.collect(named(EMAIL, PHONE), info("email", "taken@example.org"), ts=1)
    book, _ = fieldbook.read_back(book, "email", EMAIL, "taken@example.org", "")
    shown = replace(EMAIL, value="taken@example.org", error="This address is already registered")
    book, errors = fieldbook.see(book, page(shown, PHONE))
    assert errors == () and fieldbook.entry(book, "email").view == shown  # no press, no verdict
    book, errors = fieldbook.see(fieldbook.pressed(book), page(shown, PHONE))
    assert errors == (FillError(field="email", reason="This address is already registered"),)
    e = fieldbook.entry(book, "email")
    assert not e.filled and not e.confirmed and fieldbook.pending(book, "email", shown)
    book, errors = fieldbook.see(fieldbook.pressed(book), page(shown, PHONE))
    assert errors == ()  # the same error for the same value: said once
    book = fieldbook.collect(book, info("email", "new@example.org"), ts=2)
    book, _ = fieldbook.read_back(book, "email", shown, "new@example.org", "")
    assert not fieldbook.pending(book, "email", shown)  # the error shown was about the old value
    book, errors = fieldbook.see(fieldbook.pressed(book), page(shown, PHONE))
    assert errors == (FillError(field="email", reason="This address is already registered"),)


def test_done_needs_a_non_empty_required_value_and_skipped_optionals_are_done():
    book = fieldbook.collect(named(EMAIL, NEWS), info("email", ""), ts=1)
    book, _ = fieldbook.read_back(book, "email", EMAIL, "", "")
    assert fieldbook.entry(book, "email").filled and not fieldbook.entry(book, "email").done
    book = fieldbook.collect(book, info("news", False), ts=2)
    assert not fieldbook.entry(book, "news").skipped  # a box left unticked is a value
    book, reply = fieldbook.read_back(book, "news", NEWS, False, "")
    assert isinstance(reply, FieldFilled) and fieldbook.entry(book, "news").done
    optional = field("notes", "Notes", required=False)
    book = fieldbook.collect(named(optional), info("notes", ""), ts=3)
    assert fieldbook.entry(book, "notes").skipped


def test_summary_and_unknown_fields():
    book = fieldbook.collect(named(EMAIL, NEWS, SEAT), info("email", "ada@example.org"), ts=1)
    book = fieldbook.collect(book, info("news", True), ts=2)
    assert fieldbook.summary(book) == "Email: ada@example.org; Newsletter: yes"
    assert fieldbook.get(book, "nope") is None
    with pytest.raises(fieldbook.FieldBookError, match="no field named 'nope'"):
        fieldbook.collect(book, info("nope", "x"), ts=3)
    with pytest.raises(fieldbook.FieldBookError):
        fieldbook.read_back(book, "nope", EMAIL, "", "")


def test_close_matches_go_back_as_candidates_and_a_handed_over_field_waits_for_the_person():
    town = field("town", "Town or city", widget="autocomplete")
    book = fieldbook.collect(named(town, EMAIL), info("town", "Manchester"), ts=1)
    book, reply = fieldbook.refused(book, "town", FillProblem("format", "fits several", "A or B", ("A", "B")))
    assert reply == FormatInvalid(field="town", expected="A or B", got="Manchester", candidates=("A", "B"))
    book = fieldbook.hand_over(book, "town", "the list did not open")
    assert fieldbook.entry(book, "town").handed_over == "the list did not open"
    assert not fieldbook.needs_fill(book, "town", town)  # never retried by the agent on its own
    assert fieldbook.pending(book, "town", town)  # required and empty: the person has to set it
    assert not fieldbook.pending(book, "town", replace(town, value="Manchester, United Kingdom"))  # set in the preview
    book = fieldbook.collect(book, info("town", "Manchester, United Kingdom"), ts=2)  # typed on the page
    assert fieldbook.entry(book, "town").handed_over == "" and fieldbook.needs_fill(book, "town", town)
    with pytest.raises(fieldbook.FieldBookError):
        fieldbook.hand_over(book, "nope", "why")


def test_a_refused_value_the_person_confirms_again_is_judged_by_the_page_again_then_given_up():
    """The page refused check-out ("Check-out must be after check-in": about another field)
    and the person confirmed the same date again: the agent must not wait for a new value
    (the phone agent has none to give) but press again; a second refusal of the same value is
    no longer the person's to fix."""
    out = field("check_out", "Check-out", "date")
    book = fieldbook.collect(named(out), info("check_out", "2027-06-09"), ts=1)
    book, _ = fieldbook.read_back(book, "check_out", out, "2027-06-09", "")
    shown = replace(out, value="2027-06-09", error="Check-out must be after check-in.")
    book, errors = fieldbook.see(fieldbook.pressed(book), page(shown))
    assert errors == (FillError(field="check_out", reason="Check-out must be after check-in."),)
    assert fieldbook.pending(book, "check_out", shown) and not fieldbook.refused_again(book, [shown])
    book = fieldbook.collect(book, info("check_out", "2027-06-09"), ts=2)  # confirmed again, unchanged
    book, _ = fieldbook.read_back(book, "check_out", shown, "2027-06-09", "")
    assert not fieldbook.pending(book, "check_out", shown)  # the page judges it again
    book, errors = fieldbook.see(fieldbook.pressed(book), page(shown))
    assert errors == () and fieldbook.refused_again(book, [shown])  # same words for the same value: give up


def test_a_reopened_form_keeps_names_and_values_and_puts_every_value_in_again():
    book = named(EMAIL, PHONE, SEAT)
    book = fieldbook.collect(book, info("email", "ada@example.org"), ts=5)
    book = fieldbook.collect(book, info("seat", "Window", confirmed=False), ts=6)
    book, _ = fieldbook.read_back(book, "email", EMAIL, "ada@example.org", "")
    book, _ = fieldbook.read_back(book, "seat", SEAT, "W", "")
    book = fieldbook.pressed(book)
    assert not fieldbook.needs_fill(book, "email", field("email", "Email", "email", value="ada@example.org"))
    book = fieldbook.reopened(book)
    fresh = field("email", "Email", "email")  # the new browser's page: empty
    assert fieldbook.name_of(book, fresh) == "email" and fieldbook.unnamed(book, [fresh, PHONE, SEAT]) == ()
    assert fieldbook.needs_fill(book, "email", fresh) and fieldbook.needs_fill(book, "seat", SEAT)
    assert not fieldbook.needs_fill(book, "phone", PHONE)  # no value was ever sent for it
    e = fieldbook.entry(book, "email")
    assert (e.value, e.confirmed, e.confirmed_ts, e.filled) == ("ada@example.org", True, 5, False)
    assert fieldbook.entry(book, "seat").confirmed is False and not book.verdict_due


def test_a_national_number_a_mask_turned_into_plus_zero_is_format_invalid():
    masked = field("phone", "Phone number", "tel", hint="", widget="masked")
    book = fieldbook.collect(named(masked), info("phone", "07700900123"), ts=1)
    book, reply = fieldbook.read_back(book, "phone", masked, "+07 7009 00123", "")  # the page took it, masked
    assert isinstance(reply, FormatInvalid) and reply.got == "07700900123"
    assert "country code" in reply.expected and not fieldbook.entry(book, "phone").filled
    book = fieldbook.collect(book, info("phone", "+447700900123"), ts=2)
    book, reply = fieldbook.read_back(book, "phone", masked, "+44 7700 900123", "")
    assert isinstance(reply, FieldFilled)
