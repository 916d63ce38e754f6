"""The appliance's A2A Agent Card: what it can do and how to reach it, for agents that look.

Served at ``/.well-known/agent-card.json`` (A2A 1.0, "Agent Discovery": the well-known path,
public, no token, as A2A intends). Shaped as the specification's ``AgentCard`` (§4.4.1):
``name``, ``description``, ``version``, ``supportedInterfaces`` (url, ``protocolBinding``,
``protocolVersion``), ``capabilities``, ``defaultInputModes``/``defaultOutputModes``,
``skills`` (each ``AgentSkill``: id, name, description, tags, examples, input/output modes)
and, when the server needs its token, ``securitySchemes`` and ``securityRequirements``
naming a bearer token (never the token). The appliance is reached through its own
WebRTC signalling API, not an A2A JSON-RPC endpoint, so its one interface says so
(``protocolBinding``: :data:`BINDING`). The card names nothing private: no token, no
file path, no recording, no address but the one the asking client used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.metadata import version

PATH = "/.well-known/agent-card.json"
#: the appliance's own binding: ``POST /api/offer`` with an SDP offer (and ``mode``, ``url``, ``task`` for a
#: skill), then talk over the WebRTC call; the page at ``/`` is the same for a person
BINDING = "appliance-webrtc"
A2A_VERSION = "1.0"


@dataclass(frozen=True)
class Skill:
    """One ``AgentSkill`` a feature adds (``server.skills``): ``id`` (the offer's ``mode``),
    ``name``, ``description``, ``tags``, ``examples`` (requests as a person or agent says them)."""

    id: str
    name: str
    description: str
    tags: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    modes: tuple[str, ...] = field(default=("audio/opus", "text/plain"))

    def as_json(self) -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "tags": list(self.tags),
            "examples": list(self.examples),
            "inputModes": list(self.modes),
            "outputModes": list(self.modes),
        }


#: the plain voice assistant, on every server
ASSISTANT = Skill(
    id="assistant",
    name="Voice assistant",
    description="Talk with a local assistant over a WebRTC call: it answers by voice, and stops when you talk over it.",
    tags=("voice", "assistant", "offline"),
    examples=("What time zone is Tokyo in?",),
)


def card(base_url: str, skills: list[Skill], token_required: bool) -> dict:
    """The Agent Card for a server reached at ``base_url`` (``scheme://host:port``, as the
    asking client reached it) with ``skills``; ``token_required``: the API needs the
    server's token (named as a bearer scheme, never given)."""
    out: dict = {
        "name": "appliance",
        "description": (
            "A local, offline-first voice agent appliance: a voice assistant, and a form-filling agent "
            "that fills a web form while it interviews a person by voice."
        ),
        "version": version("appliance"),
        "supportedInterfaces": [
            {"url": f"{base_url}/api/offer", "protocolBinding": BINDING, "protocolVersion": A2A_VERSION}
        ],
        "capabilities": {"streaming": True, "pushNotifications": False},
        "defaultInputModes": ["audio/opus", "text/plain"],
        "defaultOutputModes": ["audio/opus", "text/plain"],
        "skills": [s.as_json() for s in [ASSISTANT, *skills]],
        "documentationUrl": f"{base_url}/",
    }
    if token_required:
        out["securitySchemes"] = {
            "token": {
                "httpAuthSecurityScheme": {
                    "scheme": "Bearer",
                    "description": "the token the appliance prints at start (also accepted as ?token=)",
                }
            }
        }
        out["securityRequirements"] = [{"schemes": {"token": {"list": []}}}]
    return out
