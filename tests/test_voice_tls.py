"""HTTPS for other devices (appliance/voice/tls.py): ``appliance cert``'s files, a real
VoiceServer (stand-in runtime, bare pipeline) serving the page, the API and a WebRTC call
over TLS, the access rules behind a proxy, and the plain-HTTP warning."""

from __future__ import annotations

import ssl

import aiohttp
import pytest
from server_helpers import bare_pipeline, real_offer, stub_runtime

from appliance import config
from appliance.config import ConfigError
from appliance.voice import access, tls
from appliance.voice.server import VoiceServer


def _client_context(files: tls.CertificateFiles) -> ssl.SSLContext:
    """A client that trusts only the CA ``appliance cert`` wrote, and checks the name."""
    return ssl.create_default_context(cafile=str(files.ca))


def test_the_certificate_names_the_host_and_loopback_and_its_ca_vouches_for_it(tmp_path):
    from cryptography import x509

    files = tls.make_certificate("appliance.lan", tmp_path / "tls")
    cert = x509.load_pem_x509_certificate(files.cert.read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["appliance.lan", "localhost"]
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert (cert.not_valid_after_utc - cert.not_valid_before_utc).days <= 398  # browsers refuse longer
    assert files.key.stat().st_mode & 0o077 == 0  # the key is the owner's alone
    cert.verify_directly_issued_by(x509.load_pem_x509_certificate(files.ca.read_bytes()))
    ip = x509.load_pem_x509_certificate(tls.make_certificate("192.168.1.20", tmp_path / "ip").cert.read_bytes())
    san = ip.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "192.168.1.20" in [str(a) for a in san.get_values_for_type(x509.IPAddress)]


@pytest.mark.parametrize(
    ("host", "days", "why"), [("", 30, "give the name"), ("a b", 30, "give the name"), ("x", 500, "398")]
)
def test_a_certificate_that_cannot_serve_is_refused_plainly(tmp_path, host, days, why):
    with pytest.raises(ValueError, match=why):
        tls.make_certificate(host, tmp_path, days)


def test_tls_files_go_together_and_must_exist(tmp_path):
    with pytest.raises(ConfigError, match="server.tls_cert and server.tls_key go together"):
        config.load(overrides={"server": {"tls_cert": str(tmp_path / "cert.pem")}})
    cfg = config.load(overrides={"server": {"tls_cert": str(tmp_path / "c.pem"), "tls_key": str(tmp_path / "k.pem")}})
    with pytest.raises(ConfigError, match=r"server.tls_cert .*c.pem': no such file \(make one with: appliance cert"):
        tls.server_context(cfg)
    (tmp_path / "c.pem").write_text("not a certificate")
    (tmp_path / "k.pem").write_text("not a key")
    with pytest.raises(ConfigError, match="not a PEM certificate and its key"):
        tls.server_context(cfg)


async def test_the_page_the_api_and_a_call_are_served_over_tls(tmp_path):
    files = tls.make_certificate("localhost", tmp_path / "tls")
    cfg = config.load(
        overrides={
            "server": {"port": 0, "tls_cert": str(files.cert), "tls_key": str(files.key)},
            "transport": {"loopback_only": True},
            "recording": {"enabled": False},
        }
    )
    srv = VoiceServer(cfg, runtime=stub_runtime())
    srv.pipeline_builder = bare_pipeline
    await srv.start()
    try:
        assert srv.url.startswith("https://127.0.0.1:")
        base = f"https://localhost:{srv.port}"
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=_client_context(files))) as http:
            async with http.get(base + "/") as r:
                assert r.status == 200 and "Connect" in await r.text()
            body = {"sdp": await real_offer(), "type": "offer"}
            async with http.post(base + "/api/offer", json=body, headers={"Origin": base}) as r:
                assert r.status == 200, await r.text()
                answer = await r.json()
            assert answer["type"] == "answer" and answer["pc_id"] in srv.calls
        async with aiohttp.ClientSession() as plain:  # the default trust store does not know this CA
            with pytest.raises(aiohttp.ClientConnectorCertificateError):
                await plain.get(base + "/")
    finally:
        await srv.stop()


def test_behind_a_proxy_every_request_is_remote():
    """The proxy is this machine's: a loopback peer proves nothing, so the token is required
    and a request without an Origin is refused, whatever server.host is."""
    cfg = config.load(overrides={"server": {"behind_proxy": True, "allowed_origins": ["https://appliance.example"]}})
    policy = access.policy_for(cfg.server)
    assert policy.token is not None
    request = dict(
        method="POST",
        path="/api/offer",
        host_header="127.0.0.1:8765",
        scheme="http",
        content_type="application/json",
        has_body=True,
        websocket=False,
        remote="127.0.0.1",
        token=policy.token,
    )
    assert policy.check(origin="https://appliance.example", **request) is None
    refusal = policy.check(origin=None, **request)
    assert refusal is not None and refusal.status == 403 and "server.behind_proxy" in refusal.error
    assert access.policy_for(config.load().server).token is None  # loopback, no proxy: as before


@pytest.mark.parametrize(
    ("server", "transport", "warned"),
    [
        ({"host": "0.0.0.0"}, "webrtc", True),
        ({"host": "192.168.1.20", "tls_cert": "c.pem", "tls_key": "k.pem"}, "webrtc", False),
        ({"host": "0.0.0.0", "behind_proxy": True}, "webrtc", False),
        ({"host": "0.0.0.0"}, "websocket", False),
        ({"host": "127.0.0.1"}, "webrtc", False),
    ],
)
def test_a_page_other_devices_cannot_use_is_warned_about_once(server, transport, warned):
    cfg = config.load(overrides={"server": server, "transport": {"kind": transport}})
    warning = tls.plain_http_warning(cfg)
    assert (warning is not None) is warned
    if warned:
        assert "refuse it the microphone" in warning and "appliance cert --host NAME --dir DIR" in warning
