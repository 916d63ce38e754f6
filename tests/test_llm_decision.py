"""One pydantic model per decision → JSON schema and GBNF grammar (no model): every decision
the agents make, the field types the derivation supports, and what it refuses."""

from __future__ import annotations

from typing import Literal

import pytest
from fake_openai import FakeOpenAI
from pydantic import BaseModel, Field

from appliance.computer_agent import decide, mapper
from appliance.computer_agent.page import FieldView, Option
from appliance.llm.base import LLMError
from appliance.llm.client import OpenAICompatibleClient
from appliance.llm.decision import choices, grammar, json_schema

TEXT = r'[^"\\\x00-\x1f]'  # a character of a grammar-bounded string


def field(label: str, kind: str = "text", key: str = "", options=None, autocomplete: str = "") -> FieldView:
    return FieldView(
        ref="r",
        kind=kind,
        key=key or label.lower(),
        label=label,
        required=True,
        pattern=None,
        hint="",
        placeholder="",
        options=options,
        value="",
        visible=True,
        enabled=True,
        error="",
        autocomplete=autocomplete,
    )


def test_launch_decision():
    assert json_schema(decide.Decision) == {
        "type": "object",
        "additionalProperties": False,
        "required": ["tool", "argument"],
        "properties": {
            "tool": {"type": "string", "enum": ["initiate_phone_call_agent", "finish"]},
            "argument": {"type": "string", "minLength": 3, "maxLength": 120},
        },
    }
    assert grammar(decide.Decision) == (
        'root ::= "{" "\\"tool\\":" ("\\"initiate_phone_call_agent\\"" | "\\"finish\\"") "," '
        f'"\\"argument\\":" "\\"" {TEXT}{{3,120}} "\\"" "}}"'
    )
    stripped = decide.Decision.model_validate({"tool": "finish", "argument": " nothing to ask "})
    assert stripped.argument == "nothing to ask"


def test_field_naming_forces_each_label_in_page_order():
    fields = [field("Given name"), field('Zip "code"'), field("Given name"), field("x" * 60)]
    model = mapper.naming_model(fields)
    labels = ["Given name", 'Zip "code"', "Given name (2)", "x" * 48]
    schema = json_schema(model)
    assert list(schema["properties"]) == schema["required"] == labels
    assert all(p == {"type": "string", "pattern": "^[a-z][a-z0-9_]{1,31}$"} for p in schema["properties"].values())
    name = '"\\"" [a-z] [a-z0-9_]{1,31} "\\""'
    assert grammar(model) == (
        'root ::= "{" "\\"Given name\\":" '
        + name
        + ' "," "\\"Zip \\\\\\"code\\\\\\"\\":" '
        + name
        + ' "," "\\"Given name (2)\\":" '
        + name
        + ' "," "\\"'
        + "x" * 48
        + '\\":" '
        + name
        + ' "}"'
    )


def test_option_pick_is_one_of_the_options_or_none():
    model = choices("OptionPick", option=("Germany", "Côte d'Ivoire", "none of them"))
    assert json_schema(model)["properties"] == {
        "option": {"type": "string", "enum": ["Germany", "Côte d'Ivoire", "none of them"]}
    }
    assert grammar(model) == (
        'root ::= "{" "\\"option\\":" ("\\"Germany\\"" | "\\"C\\\\u00f4te d\'Ivoire\\"" | "\\"none of them\\"") "}"'
    )
    assert model.model_validate({"option": "Côte d'Ivoire"}).option == "Côte d'Ivoire"
    with pytest.raises(ValueError, match="at least one value"):
        choices("Empty", option=())


class Kinds(BaseModel):
    same: bool
    note: str | None = Field(None, max_length=5)
    mood: Literal["calm", "cross"] | None = None
    code: str = Field(pattern=r"^\d{2}-(ab|cd)?[^x]\.$")


def test_bool_nullable_and_pattern_fields():
    props = json_schema(Kinds)["properties"]
    assert props["note"] == {"anyOf": [{"type": "string", "maxLength": 5}, {"type": "null"}]}
    assert json_schema(Kinds)["required"] == ["same", "note", "mood", "code"]
    assert grammar(Kinds) == (
        'root ::= "{" "\\"same\\":" ("true" | "false") "," '
        f'"\\"note\\":" ("\\"" {TEXT}{{0,5}} "\\"" | "null") "," '
        '"\\"mood\\":" (("\\"calm\\"" | "\\"cross\\"") | "null") "," '
        '"\\"code\\":" "\\"" [0-9]{2} "-" ( "a" "b" | "c" "d" )? [^x"\\\\\\x00-\\x1f] [.] "\\"" "}"'
    )


@pytest.mark.parametrize(
    "annotation, error, match",
    [
        (str, ValueError, "needs max_length or pattern"),
        (int, TypeError, "not a supported decision field"),
        (bool | int, TypeError, "not a supported decision field"),
    ],
)
def test_unsupported_fields_are_refused_by_name(annotation, error, match):
    from pydantic import create_model

    with pytest.raises(error, match=f"Bad.value: .*{match}|Bad.value: {match}"):
        grammar(create_model("Bad", value=(annotation, ...)))


@pytest.mark.parametrize(
    "pattern, match",
    [
        ("[a-z]+", "must be anchored"),
        ('^["a]$', "could need a JSON escape"),
        (r"^\s$", r"escape \\s"),
        (r"^[\s]$", r"escape \\s"),
        (r"^a\"$", r'escape \\"'),
    ],
)
def test_unsupported_patterns_are_refused(pattern, match):
    from pydantic import create_model

    with pytest.raises(ValueError, match=match):
        grammar(create_model("Bad", value=(str, Field(pattern=pattern))))


def test_nested_models_are_refused():
    class Inner(BaseModel):
        x: bool

    class Outer(BaseModel):
        inner: Inner

    with pytest.raises(TypeError, match="nested models"):
        json_schema(Outer)


def llm(base_url: str, slot: int | None = 0) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(
        base_url, "m", slot=slot, api_key="none", timeout_s=5, max_retries=0, retry_backoff_ms=0
    )


async def test_decide_validates_the_answer_into_the_model():
    async with FakeOpenAI(['{"tool":"finish","argument":"no need"}', '{"tool":"submit","argument":"now"}']) as fake:
        d = await llm(fake.base_url).decide("s", "u", decide.Decision, max_tokens=80)
        assert d == decide.Decision(tool="finish", argument="no need")
        assert fake.requests[0]["grammar"] == grammar(decide.Decision)
        with pytest.raises(LLMError, match="not a valid Decision"):  # a server that ignored the schema
            await llm(fake.base_url, slot=None).decide("s", "u", decide.Decision, max_tokens=80)
        assert fake.requests[1]["response_format"]["json_schema"]["schema"] == json_schema(decide.Decision)


async def test_field_names_stream_as_they_arrive_and_bad_ones_come_from_labels():
    fields = [
        field("First name(s)"),
        field("E-mail", autocomplete="email"),
        field("Job"),
        field("Pet's name"),
        field("Seat", kind="select", options=(Option("w", "Window"),)),
    ]
    calls: list[tuple[int, str, str]] = []
    async with FakeOpenAI(
        ['{"First name(s)":"given_name","Job":"job_title","Pet\'s name":"label","Seat":"seat_p'], chunk_chars=3
    ) as fake:
        names = await mapper.name_fields(llm(fake.base_url), fields, 100, lambda i, n, s: calls.append((i, n, s)))
    assert names == ["given_name", "email", "job_title", "pet_s_name", "seat"]
    assert calls == [
        (1, "email", "page"),
        (0, "given_name", "llm"),
        (2, "job_title", "llm"),
        (3, "pet_s_name", "label"),
        (4, "seat", "label"),
    ]  # the cut-off last one from its label
    assert '"\\"E-mail\\":"' not in fake.requests[0]["grammar"]  # the page named it: not asked
