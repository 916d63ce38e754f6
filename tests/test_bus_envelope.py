"""Envelopes: construction, validation errors, the type registry, JSON round trip, ids."""

from __future__ import annotations

import re
import time

import pytest
from pydantic import BaseModel, ValidationError

from appliance.bus import Envelope, EnvelopeError, uuid7
from appliance.bus.envelope import check
from appliance.protocol import FieldSpec, Payload, Terminate, register_type, type_name, type_spec
from appliance.protocol.forms import InfoCollected, NeedInfo

UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def info(**over) -> Envelope:
    kw = dict(sender="phone", recipient="computer", task_id="t1")
    payload = {"field": "email", "value": "ada@example.org", "confirmed": True}
    payload.update(over.pop("payload", {}))
    kw.update(over)
    return Envelope.new("info_collected", payload, **kw)


def test_new_envelope_has_uuid7_id_ms_timestamp_and_typed_payload():
    before = time.time_ns() // 1_000_000
    env = info()
    after = time.time_ns() // 1_000_000
    assert UUID7.match(env.id)
    assert before <= env.ts <= after and isinstance(env.ts, int)
    assert int(env.id.replace("-", "")[:12], 16) == env.ts  # the id's timestamp is the envelope's
    assert isinstance(env.payload, InfoCollected)
    assert env.payload.confirmed is True
    assert env.reply_to is None and env.task_id == "t1"


def test_uuid7_ids_are_unique_and_increase_in_creation_order():
    ids = [uuid7() for _ in range(5000)]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)
    assert all(UUID7.match(i) for i in ids[:50])


def test_json_round_trip_keeps_every_field():
    env = Envelope.new(
        "need_info",
        {
            "fields": [
                {
                    "name": "dob",
                    "label": "Date of birth",
                    "type": "date",
                    "required": True,
                    "format_hint": "YYYY-MM-DD",
                },
                {"name": "meal", "label": "Meal", "type": "select", "required": False, "options": ["veg", "fish"]},
            ]
        },
        sender="computer",
        recipient="phone",
        task_id="t9",
    )
    back = Envelope.from_json(env.to_json())
    assert back == env
    assert isinstance(back.payload, NeedInfo) and isinstance(back.payload.fields[1], FieldSpec)
    assert back.payload.fields[1].options == ("veg", "fish")


def test_reply_addresses_the_sender_and_links_the_request():
    req = info()
    rep = req.reply("field_filled", {"field": "email", "value_read_back": "ada@example.org"})
    assert (rep.sender, rep.recipient, rep.reply_to, rep.task_id) == ("computer", "phone", req.id, "t1")
    broadcast = Envelope.new("terminate", {"reason": "bye"}, sender="operator", recipient="*")
    with pytest.raises(EnvelopeError, match="explicit sender"):
        broadcast.reply("ack")
    assert broadcast.reply("ack", sender="P3").recipient == "operator"


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: Envelope.new("no_such_type", {}, sender="a", recipient="b"), ["no_such_type", "not registered"]),
        (lambda: info(payload={"confirmed": "maybe"}), ["info_collected", "payload.confirmed", "boolean"]),
        (
            lambda: Envelope.new("info_collected", {"field": "x"}, sender="a", recipient="b"),
            ["info_collected", "payload.value", "required"],
        ),
        (
            lambda: Envelope.new("fill_error", {"field": "x", "reason": "r", "extra": 1}, sender="a", recipient="b"),
            ["fill_error", "payload.extra", "not permitted"],
        ),
        (
            lambda: Envelope.new("status_update", {"state": "done"}, sender="a", recipient="b"),
            ["status_update", "payload.state", "input-required"],
        ),
        (
            lambda: Envelope.new("status_update", {"state": "submitted"}, sender="a", recipient="has space"),
            ["recipient", "pattern"],
        ),
        (lambda: Envelope.new("ack", [], sender="a", recipient="b"), ["ack", "payload", "JSON object"]),
        (lambda: Envelope.new("need_info", {"fields": []}, sender="a", recipient="b"), ["need_info", "payload.fields"]),
        (lambda: Envelope.new("ack", {}, sender="", recipient="b"), ["sender"]),
        (lambda: Envelope.new("ack", {}, sender="a", recipient="b", reply_to="not-an-id"), ["reply_to"]),
        (lambda: Envelope.from_json(b'{"id": "x"'), ["not JSON"]),
        (lambda: Envelope.from_json(b"[1, 2]"), ["JSON object"]),
        (lambda: Envelope.from_json(re.sub(rb'"ts":\d+', b'"ts":"1"', info().to_json())), ["ts", "integer"]),
    ],
)
def test_malformed_envelopes_are_rejected_with_a_clear_error(make, words):
    with pytest.raises(EnvelopeError) as exc:
        make()
    for w in words:
        assert w in str(exc.value), f"{w!r} not in {exc.value}"


def test_a_payload_model_names_its_own_type():
    env = Envelope.new(
        InfoCollected(field="email", value="ada@example.org", confirmed=True),
        sender="phone",
        recipient="computer",
        task_id="t1",
    )
    assert env.type == "info_collected" and env == info().model_copy(update={"id": env.id, "ts": env.ts})
    rep = env.reply(Terminate(reason="done"))
    assert (rep.type, rep.recipient, rep.reply_to) == ("terminate", "phone", env.id)
    assert type_name(NeedInfo) == "need_info"


def test_unregistered_or_doubled_payload_models_are_rejected():
    class Unregistered(Payload):
        x: int

    with pytest.raises(EnvelopeError, match="Unregistered is not a registered envelope type"):
        Envelope.new(Unregistered(x=1), sender="a", recipient="b")
    with pytest.raises(EnvelopeError, match="second one"):
        Envelope.new(Terminate(reason="r"), {"reason": "r"}, sender="a", recipient="b")
    with pytest.raises(EnvelopeError, match="already registered as 'terminate'"):
        register_type("test.terminate_again", Terminate)


def test_payload_instance_of_another_type_is_rejected():
    with pytest.raises(EnvelopeError, match="Terminate"):
        Envelope.new("terminate", InfoCollected(field="a", value="b", confirmed=False), sender="a", recipient="b")


def test_envelopes_are_immutable_and_cannot_be_built_unvalidated():
    env = info()
    with pytest.raises(ValidationError, match="frozen"):
        env.sender = "someone else"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        env.payload.value = "x"  # type: ignore[misc]
    with pytest.raises(EnvelopeError, match="sender"):
        Envelope.model_construct(**{**env.__dict__, "sender": "two words"})
    with pytest.raises(EnvelopeError, match="not registered"):
        env.model_copy(update={"type": "bogus"})
    with pytest.raises(EnvelopeError, match="expected an Envelope"):
        check({"type": "ack"})  # type: ignore[arg-type]


def test_submitted_message_and_submitted_state_are_different_namespaces():
    Envelope.new("submitted", {"confirmation": "Booking ABC123"}, sender="computer", recipient="phone")
    Envelope.new("status_update", {"state": "submitted"}, sender="computer", recipient="phone")
    with pytest.raises(EnvelopeError):
        Envelope.new("submitted", {"state": "submitted"}, sender="computer", recipient="phone")


def test_register_type_adds_a_payload_model_and_urgency():
    class SeatView(Payload):
        seat: str
        phase: str

    register_type("test.seat_view", SeatView)
    register_type("test.seat_view", SeatView)  # the same registration again is a no-op
    env = Envelope.new("test.seat_view", {"seat": "P3", "phase": "night"}, sender="judge", recipient="P3")
    assert isinstance(env.payload, SeatView) and env.urgent is False

    class Other(BaseModel):
        x: int

    with pytest.raises(EnvelopeError, match="already registered"):
        register_type("test.seat_view", Other)
    with pytest.raises(EnvelopeError, match="must match"):
        register_type("has space", Other)
    with pytest.raises(EnvelopeError, match="pydantic model"):
        register_type("test.not_a_model", dict)  # type: ignore[arg-type]
    assert type_spec("terminate").urgent and type_spec("interrupt").urgent and not type_spec("ack").urgent
