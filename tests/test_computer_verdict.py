"""What a page answers after a press, what only the person can do, and the words of a
give-up, on hand-made page readings: no browser."""

from dataclasses import replace

from appliance.computer_agent import verdict
from appliance.computer_agent.page import ButtonView, FieldView, PageView


def field(key, label, kind="text", *, value="", error="", required=True):
    return FieldView(
        ref=f"r-{key}",
        kind=kind,
        key=key,
        label=label,
        required=required,
        pattern=None,
        hint="",
        placeholder="",
        options=None,
        value=value,
        visible=True,
        enabled=True,
        error=error,
    )


def page(*fields, url="http://127.0.0.1/form", alerts=(), headings=(), text="", document="d1", buttons=(), **kw):
    return PageView(
        url=url,
        title="Form",
        fields=tuple(fields),
        buttons=tuple(buttons),
        alerts=tuple(alerts),
        headings=tuple(headings),
        text=text,
        document=document,
        **kw,
    )


NAME, ID = field("name", "Name", value="Ada"), field("id", "ID number", value="1234")
FORM = page(NAME, ID)


def test_a_result_is_the_form_gone_never_the_click():
    assert verdict.after_press(FORM, FORM) == verdict.Verdict("none")
    done = page(url="http://127.0.0.1/done", headings=("Thank you",), text="Thank you. We got it.")
    assert verdict.after_press(FORM, done) == verdict.Verdict("result", "Thank you. We got it.")
    view = page(headings=("Application sent",), text="Your card is ready.")  # a confirmation view, same URL
    assert verdict.after_press(FORM, view) == verdict.Verdict("result", "Application sent. Your card is ready.")
    survey = page(field("rate", "How was it?", required=False), text="Booked.")  # only optional new fields
    assert verdict.after_press(FORM, survey).kind == "result"


def test_the_browsers_own_error_page_after_a_press_is_never_a_result():
    """A form gone because the site did not answer (Chromium's "This site can't be reached")
    is not a confirmation (found replaying a call whose recording held no answer)."""
    error = page(url="chrome-error://chromewebdata/", headings=("This site can’t be reached",), text="ERR_FAILED")
    v = verdict.after_press(FORM, error)
    assert v == verdict.Verdict("unreachable", "ERR_FAILED")
    step = verdict.unreachable("Book flight", v.text)
    assert "can't tell whether the form was sent" in step.reason and "ERR_FAILED" in step.reason


def test_new_required_fields_are_a_next_step_and_a_field_missing_from_a_reading_is_nothing_yet():
    step2 = page(field("street", "Street"), field("city", "City"))
    assert verdict.after_press(FORM, step2) == verdict.Verdict("moved")
    assert verdict.after_press(FORM, page(NAME)) == verdict.Verdict("none")  # an iframe reloading: wait


def test_refusals_are_the_pages_own_words_new_since_the_press():
    refused = page(NAME, replace(ID, error="An ID number has 9 digits."), document="d2")
    assert verdict.after_press(FORM, refused) == verdict.Verdict("refused", "An ID number has 9 digits.")
    same_error = page(NAME, replace(ID, error="An ID number has 9 digits."))
    assert verdict.after_press(same_error, same_error) == verdict.Verdict("none")  # shown before, same document
    assert verdict.after_press(same_error, replace(same_error, document="d3")).kind == "refused"  # reloaded: new
    alert = page(NAME, ID, alerts=("We could not check your ID right now.",))
    assert verdict.after_press(FORM, alert) == verdict.Verdict("refused", "We could not check your ID right now.")


def test_obstacles_only_the_person_can_pass():
    assert verdict.obstacle(FORM) is None
    assert verdict.obstacle(page(NAME, captcha=True)) == verdict.Obstacle("captcha")
    assert (
        verdict.obstacle(page(NAME, frame_urls=("https://www.google.com/recaptcha/api2/anchor",))).problem == "captcha"
    )
    password = field("pw", "Password", "password")
    sign_in = page(field("user", "Email"), password, buttons=(ButtonView("b", "Sign in", "submit", True, "", False),))
    assert verdict.obstacle(sign_in) == verdict.Obstacle("login", sign_in=True)
    signup = page(NAME, ID, field("mail", "Email"), password)
    assert verdict.obstacle(signup) == verdict.Obstacle("login", sign_in=False)
    assert verdict.obstacle(page(NAME, replace(password, value="secret"))) is None  # typed by the person
    assert verdict.secret(password) and not verdict.secret(NAME)


def test_every_give_up_says_what_is_wrong_and_what_the_person_can_do():
    steps = [
        verdict.widget_failed("town", "Town or city:", "the list did not open"),
        verdict.no_control(FORM),
        verdict.no_control(page()),
        verdict.no_result("Send"),
        verdict.page_error("x" * 500),
        *(
            verdict.obstacle_step(o)
            for o in (verdict.Obstacle("captcha"), verdict.Obstacle("login", True), verdict.Obstacle("login"))
        ),
    ]
    assert [s.problem for s in steps] == [
        "widget",
        "no_control",
        "no_control",
        "no_result",
        "page_error",
        "captcha",
        "login",
        "login",
    ]
    assert all("preview" in s.advice for s in steps)
    assert steps[0].reason == "I could not set Town or city on the page: the list did not open"
    assert steps[0].field == "town" and all(s.field is None for s in steps[1:])
    assert len(steps[4].reason) < 230  # the page's words, cut


def test_marketing_boxes_are_optional_consents_and_terms_required():
    def consent(label, required=False):
        return verdict.consent(field("c", label, "checkbox", required=required))

    for label in (
        "Send me offers and news",
        "Newsletter abonnieren",
        "Share my details with partners",
        "Send me updates about this service",
        "Keep me informed by e-mail",
    ):
        assert consent(label) == "optional", label
    for label in (
        "I agree to the terms",
        "I confirm the information I have given is correct",
        "Ich akzeptiere die Datenschutzerklärung",
    ):
        assert consent(label, required=True) == "required", label
    assert consent("Send me text updates about my flight") == "none"  # a service the person chose, not marketing
    assert verdict.consent(field("n", "Newsletter", "text")) == "none"


def test_buttons_that_open_a_form_are_openers_and_never_ones_that_submit():
    def role(text, type_="button", in_form=False, **kw):
        return ButtonView("b1", text, type_, in_form, "", False, None, **kw).role

    assert role("Start now") == role("Request a callback") == role("+ Add another passenger") == "opener"
    assert role("Options", toggle="modal") == "opener" and role("Menu", expanded="true") == "avoid"
    assert role("Book now") == role("Submit") == role("Delete my account") == role("Sign out") == "avoid"
    assert role("Send code", "submit", True) == "step" and role("Verify", "submit", True) == "final"
    assert role("Resend code", "submit", True) == "avoid"
