"""Who may talk to the appliance's web server: one aiohttp middleware over a pure check.

Any page the person visits can send requests to ``http://127.0.0.1:8765`` — a
``text/plain`` POST needs no CORS preflight — and a DNS-rebinding page can even read the
answers. Every request to :class:`~appliance.voice.server.VoiceServer` therefore passes
these rules, in this order (the first one broken answers, with ``{"error": why}``):

1. **Host** (every route; DNS rebinding): the ``Host`` header's name must be ``127.0.0.1``,
   ``localhost``, ``::1`` or ``server.host``. With a wildcard ``server.host`` (``0.0.0.0``
   or ``::``) any IP literal is accepted as well: a rebinding attack needs a DNS name, and
   the token below is required then anyway. Otherwise **403**.
2. **Origin** (state-changing requests: every method but GET, HEAD and OPTIONS, and the
   WebSocket upgrade): a present ``Origin`` must be the page's own (``http://<Host>``) or
   one of ``server.allowed_origins``; ``null`` never is. A missing ``Origin`` (our aiortc
   client, ``curl``; browsers always send one on these requests) is accepted only from a
   loopback peer while ``server.host`` is loopback and no proxy is in front
   (``server.behind_proxy``: then every peer is the proxy). Otherwise **403**.
3. **Content type** (requests with a body): ``application/json`` only, so the
   preflight-free ``text/plain`` / form posts a foreign page can make are refused: **415**.
4. **Token** (whenever one is set: ``server.token``, or the random one the server makes
   when ``server.host`` is not loopback or ``server.behind_proxy`` is set): required on the page, the API and the event
   socket — the page's own code under ``/static/`` and the A2A Agent Card
   (``/.well-known/agent-card.json``) are public. Given as ``?token=…`` (the
   URL printed at start carries it), ``Authorization: Bearer …``, or the cookie the page
   gets when it is loaded with a valid ``?token=`` (``HttpOnly; SameSite=Strict``, so the
   page's own requests carry it and a foreign site's do not). Missing: **401**; wrong: **403**.

``transport.kind: websocket`` is pipecat's own ``websockets`` server, not this app: its
upgrade passes the same rules through :func:`websocket_refusal` (a GET upgrade: Host,
Origin, token; the refusal is the handshake's HTTP answer).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from aiohttp import hdrs, web

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
PUBLIC_PREFIX = "/static/"
#: public without a token as well: the A2A Agent Card (appliance/voice/agent_card.py), which names nothing private
PUBLIC_PATHS = frozenset({"/.well-known/agent-card.json"})
TOKEN_COOKIE = "appliance_token"


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an IP literal) is this machine's loopback."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_name(host_header: str) -> str:
    """The name in a ``Host`` header, without port or IPv6 brackets, lower-cased."""
    h = host_header.strip().lower()
    if h.startswith("["):
        return h[1 : h.find("]")] if "]" in h else h
    return h.rsplit(":", 1)[0] if h.count(":") == 1 else h


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


@dataclass(frozen=True)
class Refusal:
    """Why a request is refused: HTTP ``status`` and a message for the person or operator."""

    status: int
    error: str


@dataclass(frozen=True)
class AccessPolicy:
    """The rules of the module docstring for one server.

    Args:
        host: ``server.host``, the listen address.
        allowed_origins: ``server.allowed_origins``, lower-case ``scheme://host[:port]``.
        token: the token every non-public request needs, or None (no token).
        behind_proxy: ``server.behind_proxy``: every request comes through a proxy on this
            machine, so a loopback peer proves nothing (a request without ``Origin`` is refused).
    """

    host: str
    allowed_origins: frozenset[str]
    token: str | None
    behind_proxy: bool = False

    def check(
        self,
        *,
        method: str,
        path: str,
        host_header: str,
        scheme: str,
        origin: str | None,
        content_type: str | None,
        has_body: bool,
        websocket: bool,
        remote: str | None,
        token: str | None,
    ) -> Refusal | None:
        """The refusal for a request with these properties, or None when it may pass.

        ``origin``/``content_type``: the headers or None when absent; ``remote``: the peer's
        IP address; ``token``: the one the request carries (query, bearer or cookie) or None.
        """
        name = _host_name(host_header)
        server_host = self.host.lower()
        if not (name in LOOPBACK_NAMES or name == server_host or (server_host in WILDCARD_HOSTS and _is_ip(name))):
            return Refusal(
                403,
                f"Host {host_header!r} is not this appliance's address (127.0.0.1, localhost or "
                f"server.host {self.host}); refused against DNS rebinding",
            )
        if method.upper() not in SAFE_METHODS or websocket:
            if origin is not None:
                page = f"{scheme}://{host_header}".lower()
                if origin.lower() != page and origin.lower() not in self.allowed_origins:
                    return Refusal(
                        403,
                        f"Origin {origin!r} may not use this appliance (its page is {page}; "
                        f"others must be listed in server.allowed_origins)",
                    )
            elif self.behind_proxy or not (is_loopback(self.host) and remote is not None and is_loopback(remote)):
                return Refusal(
                    403,
                    "a request without an Origin header is accepted only from this machine while "
                    "server.host is loopback and no proxy is in front (server.behind_proxy)",
                )
            if has_body and (content_type or "").split(";")[0].strip().lower() != "application/json":
                return Refusal(415, f"request bodies must be application/json, not {content_type or 'untyped'!r}")
        if self.token is not None and not path.startswith(PUBLIC_PREFIX) and path not in PUBLIC_PATHS:
            if not token:
                return Refusal(
                    401,
                    "this appliance needs its token: open the URL it printed at start "
                    "(…/?token=…), or send Authorization: Bearer <token>",
                )
            if not hmac.compare_digest(token.encode(), self.token.encode()):
                return Refusal(403, "wrong token: use the URL the appliance printed at start")
        return None


def policy_for(server) -> AccessPolicy:
    """The policy of a server with the ``server`` config section: its ``token``, or a random
    one (``secrets.token_urlsafe(24)``) when ``host`` is not loopback or a proxy is in front
    (``behind_proxy``), else none."""
    local = is_loopback(server.host) and not server.behind_proxy
    token = server.token or (None if local else secrets.token_urlsafe(24))
    return AccessPolicy(
        host=server.host,
        allowed_origins=frozenset(server.allowed_origins),
        token=token,
        behind_proxy=server.behind_proxy,
    )


def websocket_refusal(
    policy: AccessPolicy, *, path: str, headers: Mapping[str, str], remote: str | None
) -> Refusal | None:
    """:meth:`AccessPolicy.check` for a WebSocket upgrade to a bare ``websockets`` server:
    ``path`` with its query (the token as ``?token=…``), the request's ``headers`` (or a
    bearer token), ``remote``: the peer's IP address. The server has no page, so an
    ``Origin`` passes only when it is in ``server.allowed_origins``."""
    url = urlsplit(path)
    token = (parse_qs(url.query).get("token") or [None])[0]
    auth = headers.get(hdrs.AUTHORIZATION, "")
    if token is None and auth[:7].lower() == "bearer ":
        token = auth[7:].strip()
    return policy.check(
        method="GET",
        path=url.path or "/",
        host_header=headers.get(hdrs.HOST, ""),
        scheme="ws",
        origin=headers.get(hdrs.ORIGIN),
        content_type=None,
        has_body=False,
        websocket=True,
        remote=remote,
        token=token,
    )


def _request_token(req: web.Request) -> tuple[str | None, bool]:
    """The token a request carries and whether it came in the query (then the page gets the cookie)."""
    if "token" in req.query:
        return req.query["token"], True
    auth = req.headers.get(hdrs.AUTHORIZATION, "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip(), False
    return req.cookies.get(TOKEN_COOKIE), False


def middleware(
    policy: AccessPolicy,
) -> Callable[[web.Request, Callable[[web.Request], Awaitable[web.StreamResponse]]], Awaitable[web.StreamResponse]]:
    """The aiohttp middleware enforcing ``policy`` (see the module docstring)."""

    @web.middleware
    async def access(
        req: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        token, in_query = _request_token(req)
        headers: Mapping[str, str] = req.headers
        refusal = policy.check(
            method=req.method,
            path=req.path,
            host_header=req.host,
            scheme=req.scheme,
            origin=headers.get(hdrs.ORIGIN),
            content_type=headers.get(hdrs.CONTENT_TYPE),
            has_body=req.body_exists,
            websocket=headers.get(hdrs.UPGRADE, "").lower() == "websocket",
            remote=req.remote,
            token=token,
        )
        if refusal is not None:
            return web.json_response({"error": refusal.error}, status=refusal.status)
        resp = await handler(req)
        if policy.token is not None and in_query and req.method == "GET" and req.path == "/":
            resp.set_cookie(TOKEN_COOKIE, policy.token, httponly=True, samesite="Strict", path="/")
        return resp

    return access
