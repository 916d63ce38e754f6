"""The pure parts of acting like a person (no browser): matching an answer to a page's
choices, dates as pages show them, split-date options, read-back comparison; the demo
specs and the site's instrumentation hook."""

from __future__ import annotations

import pytest
from aiohttp import ClientSession

from appliance.computer_agent.page import FieldView, Option
from appliance.computer_agent.widgets import (
    STRATEGIES,
    FillProblem,
    close_options,
    iso_date,
    match_option,
    part_option,
    read_date,
    read_time,
    same_value,
    search_prefix,
)
from appliance.demo.profile import load_profile
from appliance.demo.site import FORMS, DemoSite
from appliance.demo.spec import evaluate, load_specs

TOWNS = tuple(
    Option(v, v)
    for v in (
        "Manchester, United Kingdom",
        "Manchester, New Hampshire, United States",
        "Manchester-by-the-Sea, Massachusetts, United States",
        "Berlin, Germany",
    )
)


def test_close_options_exact_then_prefix_then_contains():
    assert [o.label for o in close_options(TOWNS, "manchester")] == [o.label for o in TOWNS[:3]]
    assert match_option(TOWNS, "Manchester") is None  # several: the person must say which
    assert match_option(TOWNS, "manchester, united kingdom") is TOWNS[0]
    assert match_option(TOWNS, "berlin") is TOWNS[3]
    assert match_option(TOWNS, "Germany") is TOWNS[3]  # contained
    assert close_options(TOWNS, "Lisbon") == [] and close_options(TOWNS, " ") == []
    seats = (Option("window", "Window"), Option("aisle", "Aisle"))
    assert match_option(seats, "WINDOW") is seats[0] and match_option(seats, "aisle") is seats[1]


@pytest.mark.parametrize(
    "shown, hint, iso",
    [
        ("Wed 2 Jun 2027", "", "2027-06-02"),
        ("June 2, 2027", "", "2027-06-02"),
        ("2nd June 2027", "", "2027-06-02"),
        ("2027-06-02", "", "2027-06-02"),
        ("2027/6/2", "", "2027-06-02"),
        ("02/06/2027", "", "2027-06-02"),
        ("02/06/2027", "MM/DD/YYYY", "2027-02-06"),
        ("13/06/2027", "mm/dd/yyyy", "2027-06-13"),
        ("06/13/2027", "", "2027-06-13"),
        ("2.6.2027", "", "2027-06-02"),
        ("Select a date", "", None),
        ("", "", None),
        ("31/02/2027", "", None),
        ("June 2027", "", None),
    ],
)
def test_read_date_as_pages_show_dates(shown, hint, iso):
    assert read_date(shown, hint) == iso


def test_iso_date_refuses_other_shapes():
    assert iso_date("1992-11-05").month == 11
    with pytest.raises(FillProblem) as e:
        iso_date("5 Nov 1992")
    assert e.value.kind == "format" and e.value.expected == "a date, YYYY-MM-DD"


def test_part_option_by_number_or_month_name():
    months = [
        ("", "Month"),
        *[
            (str(i), m)
            for i, m in enumerate(
                [
                    "January",
                    "February",
                    "March",
                    "April",
                    "May",
                    "June",
                    "July",
                    "August",
                    "September",
                    "October",
                    "November",
                    "December",
                ],
                1,
            )
        ],
    ]
    assert part_option(months, "month", 11) == "11"
    assert part_option([("", "Month"), ("jan", "Jan"), ("nov", "Nov")], "month", 11) == "nov"
    assert part_option([("", "Day"), ("5", "05")], "day", 5) == "5"
    assert part_option([("d05", "05")], "day", 5) == "d05"
    assert part_option([("1990", "1990")], "year", 1992) is None


def _field(**kw) -> FieldView:
    base = dict(
        ref="f1",
        kind="text",
        key="k",
        label="L",
        required=True,
        pattern=None,
        hint="",
        placeholder="",
        options=None,
        value="",
        visible=True,
        enabled=True,
        error="",
    )
    return FieldView(**{**base, **kw})


def test_same_value_by_widget():
    assert same_value(_field(widget="masked", kind="tel"), "+447700900123", "+44 7700 900123")
    assert not same_value(_field(widget="masked", kind="tel"), "+447700900123", "+44 7700 90012")
    assert same_value(_field(widget="listbox", kind="select", options=(Option("GB", "British"),)), "British", "GB")
    assert same_value(_field(widget="contenteditable", kind="textarea"), "a  b", "a b")
    assert same_value(_field(kind="checkbox", widget="switch"), True, True)
    # a value the page regroups or re-cases means the same (issue 26); another value does not
    assert same_value(_field(), "GB29NWBK60161331926819", "GB29 NWBK 6016 1331 9268 19")
    assert same_value(_field(), "601613", "60-16-13") and not same_value(_field(), "601613", "60-16-14")
    assert same_value(_field(kind="tel"), "+447700900123", "07700 900123")
    assert not same_value(_field(kind="tel"), "+447700900123", "07700 900124")
    assert same_value(_field(label="Date of birth (DD/MM/YYYY)"), "1990-03-14", "14/03/1990")
    assert not same_value(_field(label="Date of birth (DD/MM/YYYY)"), "1990-03-14", "03/14/1990")
    assert not same_value(_field(), "David", "Davide")
    assert set(STRATEGIES) == {
        "native",
        "autocomplete",
        "listbox",
        "date_picker",
        "date_parts",
        "masked",
        "aria_radio",
        "switch",
        "spinbutton",
        "contenteditable",
        "segmented",
        "searchable_select",
        "time_picker",
    }


@pytest.mark.parametrize(
    "text, hhmm",
    [
        ("14:30", "14:30"),
        ("14.30", "14:30"),
        ("9:05", "09:05"),
        ("14:30:00", "14:30"),
        ("2:30pm", "14:30"),
        ("2:30 PM", "14:30"),
        ("2 p.m.", "14:00"),
        ("12:00am", "00:00"),
        ("12:15pm", "12:15"),
        ("24:00", None),
        ("13:00pm", None),
        ("1430", None),
        ("Manchester", None),
        ("2027-06-02", None),
    ],
)
def test_read_time_as_people_and_pages_write_it(text, hhmm):
    assert read_time(text) == hhmm


def test_a_time_matches_the_same_time_written_otherwise():
    times = tuple(Option(v, lbl) for v, lbl in (("14:00", "2:00pm"), ("14:30", "2:30pm"), ("15:00", "3:00pm")))
    assert match_option(times, "14:30") is times[1]  # by value
    labelled = tuple(Option(f"t{i}", o.label) for i, o in enumerate(times))
    assert match_option(labelled, "14:30") is labelled[1]  # by the label's time
    assert match_option(labelled, "2:30 PM") is labelled[1]
    assert same_value(_field(kind="time", widget="time_picker"), "14:30", "2:30pm")
    assert same_value(_field(kind="time", widget="time_picker"), "2:30pm", "14:30")
    assert not same_value(_field(kind="time", widget="time_picker"), "14:30", "2:30am")


def test_search_prefix_is_what_a_person_types_into_a_searchable_list():
    assert search_prefix("United Kingdom") == "United"
    assert search_prefix("Rome, Italy") == "Rome"
    assert search_prefix("2:30pm") == "2:30pm"
    assert search_prefix("Gluten free") == "Gluten"
    assert search_prefix("Liechtenstein") == "Liechten"  # a long word: its first eight letters


def test_specs_of_the_new_pages():
    specs = load_specs()
    assert set(FORMS) <= set(specs)
    assert sum(1 for s in specs.values() if any(r.widget != "native" for r in s.fields)) >= 6
    david, emma = load_profile("david"), load_profile("emma")
    reveal = specs["contact-reveal"]
    assert [r.name for r in reveal.rules_for(david)] == ["given_name", "contact_method", "email"]
    assert [r.name for r in reveal.rules_for(emma)] == ["given_name", "contact_method", "phone"]
    wizard = specs["wizard"]
    assert not wizard.submit and "don't submit" in wizard.task
    city = next(r for r in specs["city-autocomplete"].fields if r.name == "city")
    assert city.expected(david) == "Manchester, United Kingdom" and city.widget == "autocomplete"
    assert [r.field for r in evaluate(specs["injected-contact"], emma, {"website": "x"}) if r.field == "website"]


async def test_the_page_hook_records_attempts_and_accepted_submissions():
    async with DemoSite() as site, ClientSession() as http:

        async def record(body: dict) -> int:
            async with http.post(site.base_url + "/api/record", json=body) as r:
                return r.status

        assert await record({"form": "wizard", "outcome": "draft", "data": {"city": "Manchester"}}) == 200
        assert await record({"form": "masked-phone", "outcome": "refused", "data": {}, "reason": "too short"}) == 200
        assert await record({"form": "masked-phone", "outcome": "accepted", "data": {"phone": "+447700900123"}}) == 200
        assert await record({"form": "nope", "outcome": "accepted", "data": {}}) == 400
        assert await record({"form": "wizard", "outcome": "maybe"}) == 400
        assert [a.outcome for a in site.attempts] == ["draft", "refused", "accepted"]
        assert [s.data for s in site.submissions_of("masked-phone")] == [{"phone": "+447700900123"}]
        assert site.attempts_of("masked-phone", "refused")[0].reason == "too short"
        async with http.get(site.base_url + "/api/cities", params={"q": "manc"}) as r:
            assert [c["label"] for c in await r.json()][:2] == [
                "Manchester, United Kingdom",
                "Manchester, New Hampshire, United States",
            ]
        async with http.get(site.base_url + "/api/submissions") as r:
            body = await r.json()
        assert len(body["attempts"]) == 3 and len(body["submissions"]) == 1
