"""Who may talk to the voice server (appliance.voice.access), by real HTTP requests to a
real VoiceServer on loopback (no model: a stand-in runtime and a bare pipeline)."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest
from helpers import loopback_only_network
from server_helpers import bare_pipeline, eventually, real_offer, stub_runtime

from appliance import config
from appliance.voice.server import VoiceServer


async def _server(tmp_path, features=(), **server) -> VoiceServer:
    cfg = config.load(
        overrides={
            "server": {"port": 0, **server},
            "transport": {"loopback_only": True},
            "recording": {"dir": str(tmp_path / "rec")},
        }
    )
    srv = VoiceServer(cfg, runtime=stub_runtime())
    srv.pipeline_builder = srv.mode_pipeline_builder = bare_pipeline
    for install in features:
        await install(srv)
    await srv.start()
    return srv


@pytest.fixture
async def server(tmp_path):
    srv = await _server(tmp_path)
    yield srv
    await srv.stop()


@pytest.fixture
async def http():
    async with aiohttp.ClientSession() as s:
        yield s


def _base(srv: VoiceServer) -> str:
    return f"http://127.0.0.1:{srv.port}"


async def test_a_cross_origin_offer_is_refused_and_starts_nothing(server, http):
    body = {"sdp": await real_offer(), "type": "offer", "mode": None}
    async with http.post(_base(server) + "/api/offer", json=body, headers={"Origin": "http://evil.test"}) as r:
        assert r.status == 403
        assert "Origin 'http://evil.test' may not use this appliance" in (await r.json())["error"]
    assert server.calls == {} and server.sessions == {}
    async with http.post(_base(server) + "/api/offer", json=body, headers={"Origin": "null"}) as r:
        assert r.status == 403


async def test_a_form_offer_for_an_address_the_browser_may_not_open_is_a_400_and_starts_nothing(tmp_path, http):
    from appliance.demo.site import DemoSite
    from appliance.forms.mode import FormFeature

    server = await _server(tmp_path, features=[FormFeature(site=DemoSite()).install])
    try:
        sdp = await real_offer()
        for url, why in (
            ("file:///etc/passwd", "the file: scheme is not allowed (browser.allowed_schemes: http, https)"),
            ("javascript:alert(1)", "the javascript: scheme is not allowed"),
        ):
            async with http.post(
                _base(server) + "/api/offer", json={"sdp": sdp, "type": "offer", "mode": "form", "url": url}
            ) as r:
                assert r.status == 400
                assert (await r.json())["error"].startswith(f"form URL {url!r} refused: {why}")
        assert server.calls == {} and server.sessions == {}
    finally:
        await server.stop()


async def test_a_text_plain_body_is_refused_even_from_the_page_origin(server, http):
    sdp = await real_offer()
    for origin in (_base(server), None):  # the page's own origin; our loopback client (no Origin)
        headers = {"Content-Type": "text/plain"} | ({"Origin": origin} if origin else {})
        async with http.post(
            _base(server) + "/api/offer", data=f'{{"sdp": {sdp!r}, "type": "offer"}}', headers=headers
        ) as r:
            assert r.status == 415
            assert "must be application/json, not 'text/plain'" in (await r.json())["error"]
    assert server.calls == {}


async def test_a_rebound_host_name_is_refused_on_every_route(server, http):
    for method, path in (("GET", "/"), ("GET", "/api/status"), ("POST", "/api/disconnect?pc_id=x")):
        async with http.request(method, _base(server) + path, headers={"Host": f"evil.test:{server.port}"}) as r:
            assert r.status == 403, path
            assert "Host 'evil.test:" in (await r.json())["error"]
    async with http.get(_base(server) + "/api/status", headers={"Host": f"localhost:{server.port}"}) as r:
        assert r.status == 200


async def test_the_page_origin_and_allowed_origins_pass_and_our_loopback_client_needs_none(tmp_path, http):
    srv = await _server(tmp_path, allowed_origins=["http://Tools.Example:9000"])
    try:
        for headers in ({"Origin": _base(srv)}, {"Origin": "http://tools.example:9000"}, {}):
            async with http.post(_base(srv) + "/api/disconnect?pc_id=nope", headers=headers) as r:
                assert r.status == 404, headers  # passed the guard; the session is unknown
        async with http.post(
            _base(srv) + "/api/disconnect?pc_id=nope", headers={"Origin": "http://tools.example"}
        ) as r:
            assert r.status == 403  # another port is another origin
    finally:
        await srv.stop()


async def test_a_cross_origin_event_socket_is_refused(server, http):
    with pytest.raises(aiohttp.WSServerHandshakeError) as e:
        await http.ws_connect(_base(server) + "/api/events?pc_id=x", origin="http://evil.test")
    assert e.value.status == 403
    ws = await http.ws_connect(_base(server) + "/api/events?pc_id=x", origin=_base(server))
    msg = await ws.receive_json(timeout=10)
    assert msg == {"event": "error", "error": "no session 'x'"}
    await ws.close()


async def test_on_a_non_loopback_host_everything_but_the_page_code_needs_the_token(tmp_path, http):
    srv = await _server(tmp_path, host="0.0.0.0")
    try:
        assert srv.token and srv.page_url == f"http://0.0.0.0:{srv.port}/?token={srv.token}"
        base, page = _base(srv), {"Origin": _base(srv)}
        for path in ("/", "/api/status"):
            async with http.get(base + path) as r:
                assert r.status == 401, path
                assert "needs its token" in (await r.json())["error"]
        async with http.get(base + "/api/status?token=" + "x" * 32) as r:
            assert r.status == 403 and "wrong token" in (await r.json())["error"]
        async with http.post(base + "/api/disconnect?pc_id=nope", headers=page) as r:
            assert r.status == 401
        with pytest.raises(aiohttp.WSServerHandshakeError) as e:
            await http.ws_connect(base + "/api/events?pc_id=x", origin=base)
        assert e.value.status == 401
        async with http.get(base + "/static/app.js") as r:
            assert r.status == 200  # the page's public code
        async with http.get(base + "/api/status", headers={"Authorization": f"Bearer {srv.token}"}) as r:
            assert r.status == 200
        # without an Origin, a token is not enough off loopback
        async with http.post(base + f"/api/disconnect?pc_id=nope&token={srv.token}") as r:
            assert r.status == 403 and "without an Origin" in (await r.json())["error"]
        # the page loaded with its token gets a cookie, so its own requests carry it
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
            async with browser.get(base + f"/?token={srv.token}") as r:
                assert r.status == 200 and "SameSite=Strict" in r.headers["Set-Cookie"]
            async with browser.get(base + "/api/status") as r:
                assert r.status == 200 and (await r.json())["ready"] is True
            async with browser.post(base + "/api/disconnect?pc_id=nope", headers=page) as r:
                assert r.status == 404
            ws = await browser.ws_connect(base + "/api/events?pc_id=x", origin=base)
            assert (await ws.receive_json(timeout=10))["error"] == "no session 'x'"
            await ws.close()
    finally:
        await srv.stop()


@pytest.mark.e2e
@pytest.mark.skipif(
    not loopback_only_network(), reason="WebRTC on 127.0.0.1 needs a loopback-only namespace: run scripts/test.sh"
)
async def test_the_page_opened_at_its_token_url_connects_in_chromium(tmp_path):
    """Off loopback, the URL printed at start is all the person needs: the page's own
    requests (status, offer, event socket) carry the token from its cookie."""
    import numpy as np
    import soundfile as sf

    from appliance.simulate.page_client import talk

    wav = tmp_path / "mic.wav"
    sf.write(wav, np.zeros(48_000, np.int16), 48_000)
    srv = await _server(tmp_path, host="0.0.0.0")
    try:
        page = asyncio.create_task(talk(f"http://127.0.0.1:{srv.port}/?token={srv.token}", wav, listen_s=3.0))
        await eventually(
            lambda: any(s.events.listeners for s in srv.sessions.values()) or page.done(),
            60,
            "the page's event socket is open",
        )
        assert not page.done(), page.exception()  # the page's event socket got through
        run = await page
        assert "Connected" in run.status, run.status  # offer answered, ICE and DTLS up
    finally:
        await srv.stop()


@pytest.mark.parametrize(
    "server, key, why",
    [
        ({"allowed_origins": ["http://tools.example/app"]}, "server.allowed_origins", "is not an origin"),
        ({"allowed_origins": ["file://x"]}, "server.allowed_origins", "is not an origin"),
        ({"token": "short"}, "server.token", "at least 16"),
        ({"max_sessions": 0}, "server.max_sessions", "greater than or equal to 1"),
    ],
)
def test_bad_server_keys_are_refused_at_start_naming_the_key(server, key, why):
    with pytest.raises(config.ConfigError) as e:
        config.load(overrides={"server": server})
    assert key in str(e.value) and why in str(e.value)


async def test_a_configured_token_is_required_even_on_loopback(tmp_path, http):
    srv = await _server(tmp_path, token="t" * 20)
    try:
        async with http.get(_base(srv) + "/api/status") as r:
            assert r.status == 401
        async with http.get(_base(srv) + "/api/status", params={"token": "t" * 20}) as r:
            assert r.status == 200
    finally:
        await srv.stop()


async def test_an_address_it_cannot_listen_on_is_one_config_error(tmp_path):
    import socket

    from appliance.config import ConfigError

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match=rf"server.host '127.0.0.1', server.port {port}: cannot listen there"):
            await _server(tmp_path, port=port)


async def test_aiohttps_own_refusals_are_json_too(server, http):
    async with http.post(
        _base(server) + "/api/offer", data=b"x" * (2 << 20), headers={"Content-Type": "application/json"}
    ) as r:
        assert r.status == 413 and "Maximum request body size" in (await r.json())["error"]
    async with http.get(_base(server) + "/api/nothing-here") as r:
        assert r.status == 404 and (await r.json())["error"]


async def test_the_agent_card_is_public_names_the_form_skill_and_nothing_private(tmp_path, http):
    """Issue 30: A2A's Agent Card at its well-known path, without the token the rest needs."""
    from appliance.demo.site import DemoSite
    from appliance.forms.mode import FormFeature

    site = DemoSite()
    await site.start()
    srv = await _server(tmp_path, features=[FormFeature(site=site).install], host="0.0.0.0")
    try:
        base = _base(srv)
        async with http.get(base + "/.well-known/agent-card.json") as r:
            assert r.status == 200
            card = await r.json()
        assert {"name", "description", "version", "supportedInterfaces", "capabilities", "skills"} <= set(card)
        assert [s["id"] for s in card["skills"]] == ["assistant", "form"]
        form = card["skills"][1]
        assert "interviews the person by voice" in form["description"] and form["examples"]
        assert card["supportedInterfaces"][0]["url"] == base + "/api/offer"
        assert card["securitySchemes"]["token"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
        text = json.dumps(card)
        assert srv.token not in text and str(tmp_path) not in text and "recording" not in text
        async with http.get(base + "/api/status") as r:
            assert r.status == 401  # the rest still needs the token
    finally:
        await srv.stop()
        await site.stop()
