"""The computer agent's network: ``browser.network`` open | loopback, the form-URL check, and
what Chromium really does (its argv, its net log) under each."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
from aiohttp import web

from appliance import chromium, config
from appliance.chromium import LOOPBACK_RULE, QUIET_ARGS, URLRefused, check_form_url, launch_args
from appliance.demo.site import DemoSite, resolve_url

TELEMETRY = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--metrics-recording-only",
    "--no-pings",
    "--disable-breakpad",
)


def test_open_has_no_resolver_rule_and_keeps_the_telemetry_switches():
    args = launch_args("open")
    assert not any(a.startswith("--host-resolver-rules") for a in args)
    assert set(TELEMETRY) <= set(args)
    assert launch_args("loopback") == [*args, LOOPBACK_RULE]
    assert chromium.OFFLINE_ARGS == launch_args("loopback")
    with pytest.raises(ValueError, match="open or loopback"):
        launch_args("lan")


def test_config_defaults_and_the_loopback_derivation():
    cfg = config.Config()
    assert cfg.browser.network == "open" and cfg.browser.allowed_schemes == ("http", "https")
    assert cfg.loopback().browser.network == "loopback" and cfg.browser.network == "open"
    with pytest.raises(config.ConfigError, match="browser.network"):
        config.load(overrides={"browser": {"network": "lan"}})


@pytest.mark.parametrize(
    "url, why",
    [
        ("file:///etc/passwd", "file: scheme is not allowed"),
        ("data:text/html,<form>", "data: scheme is not allowed"),
        ("javascript:alert(1)", "javascript: scheme is not allowed"),
        ("chrome://settings", "chrome: scheme is not allowed"),
        ("example.org/form", "no scheme"),
        ("https:///form", "no host name"),
    ],
)
def test_other_schemes_are_refused_naming_the_url(url, why):
    with pytest.raises(URLRefused) as e:
        check_form_url(url, network="open")
    assert url in str(e.value) and why in str(e.value)


def test_allowed_schemes_domains_and_loopback():
    assert check_form_url("file:///srv/form.html", network="open", allowed_schemes=("http", "https", "file"))
    ok = {"allowed_domains": ("example.org",)}
    assert check_form_url("https://forms.example.org/apply", network="open", **ok)
    assert check_form_url("https://EXAMPLE.org/apply", network="open", **ok)
    with pytest.raises(URLRefused, match=r"badexample\.org is not in browser.allowed_domains \(example.org\)"):
        check_form_url("https://badexample.org/", network="open", **ok)
    assert check_form_url("http://127.0.0.1:8770/flight", network="loopback")
    assert check_form_url("http://localhost:8770/flight", network="loopback")
    with pytest.raises(URLRefused, match="browser.network is loopback"):
        check_form_url("https://example.org/", network="loopback")
    cfg = config.load(overrides={"browser": {"allowed_domains": ["example.org"]}}).browser
    with pytest.raises(URLRefused, match="allowed_domains"):
        cfg.check_url("http://127.0.0.1:8770/flight")


def test_demo_names_resolve_before_the_check():
    site = DemoSite()
    site.base_url = "http://127.0.0.1:8770"
    url = resolve_url("demo:flight", site)
    assert config.Config().loopback().browser.check_url(url) == "http://127.0.0.1:8770/flight"
    with pytest.raises(URLRefused, match="demo:register"):
        resolve_url("demo:nope", site)


def test_form_command_refuses_file_urls_before_loading_anything(capsys):
    from appliance.cli import main

    assert main(["form", "--url", "file:///etc/passwd"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "error: form URL 'file:///etc/passwd' refused: the file: scheme is not allowed "
        "(browser.allowed_schemes: http, https)"
    )


# --- real Chromium -------------------------------------------------------------------------------

OUTSIDE = """<!doctype html><html><head><title>outside</title>
<link rel="stylesheet" href="https://fonts.example.com/a.css">
<link rel="dns-prefetch" href="//prefetch.example.org"><link rel="preconnect" href="https://pre.example.net">
<script src="https://cdn.example.net/lib.js"></script></head>
<body><img src="http://tracker.example.org/p.gif"><iframe src="https://frame.example.com/"></iframe>
<script>fetch('https://api.example.io/v1').catch(() => {}); new Image().src = 'https://beacon.example.com/b';
navigator.sendBeacon && navigator.sendBeacon('https://beacon.example.com/s', 'x');</script>
<p>a page that references outside hosts</p></body></html>"""


def _cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


@pytest.mark.e2e
@pytest.mark.parametrize("network", ["open", "loopback"])
async def test_chromium_argv_follows_browser_network(network):
    from appliance.computer_agent.browser import Browser

    b = Browser(config.Config().browser.model_copy(update={"network": network}))
    await b.start()
    try:
        argv = _cmdline(b.pids[0])
    finally:
        await b.close()
    assert set(QUIET_ARGS) <= set(argv)
    assert (LOOPBACK_RULE in argv) == (network == "loopback")
    assert not any(a.startswith("--host-resolver-rules") for a in argv if a != LOOPBACK_RULE)


def _loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "::1", "localhost")


@pytest.mark.e2e
async def test_loopback_nothing_names_another_host_in_the_net_log(tmp_path):
    """Chromium's own net log while a page that references seven outside hosts loads:
    no DNS lookup of any name, no TCP connection and no UDP datagram to anything but
    127.0.0.1, and each of the page's outside requests ends at the resolver rule
    (``ERR_NAME_NOT_RESOLVED``) before any lookup. Chromium's IPv6 reachability probe
    ``connect()``s a UDP socket to 2001:4860:4860::8888 without sending a byte (a route
    check); the test allows exactly that, and fails if such a socket sends anything."""
    from appliance.computer_agent.browser import Browser

    async def outside(_request: web.Request) -> web.Response:
        return web.Response(text=OUTSIDE, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", outside)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/"
    log_file = tmp_path / "net.json"
    b = Browser(config.Config().loopback().browser, extra_args=(f"--log-net-log={log_file}",))
    try:
        page = await b.start()
        await page.goto(url)
        await page.wait_for_load_state("networkidle")
    finally:
        await b.close()  # a clean exit writes the log's closing bracket
        await runner.cleanup()
    log = json.loads(log_file.read_text())
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    events = [(names[e["type"]], e["source"]["id"], e.get("params") or {}) for e in log["events"]]

    lookups = {p["host"] for t, _, p in events if t.startswith("HOST_RESOLVER") and "host" in p}
    assert {h.split("://")[-1].rsplit(":", 1)[0] for h in lookups} <= {"127.0.0.1", "localhost", "~notfound"}
    assert not [t for t, _, _ in events if t.startswith("HOST_RESOLVER_DNS") or t == "HOST_RESOLVER_SYSTEM_TASK"]
    tcp = {p["address"] for t, _, p in events if t in ("TCP_CONNECT", "TCP_CONNECT_ATTEMPT") and "address" in p}
    assert tcp and all(_loopback(a) for a in tcp)
    udp = {src: p["address"] for t, src, p in events if t == "UDP_CONNECT" and "address" in p}
    sent = {src for t, src, _ in events if t in ("UDP_BYTES_SENT", "SOCKET_BYTES_SENT")}
    assert not [a for src, a in udp.items() if not _loopback(a) and src in sent]

    started = {src: p["url"] for t, src, p in events if t == "URL_REQUEST_START_JOB" and "url" in p}
    errors = {src: p["net_error"] for t, src, p in events if t == "URL_REQUEST_START_JOB" and "net_error" in p}
    outside = {src: u for src, u in started.items() if not u.startswith("http://127.0.0.1")}
    hosts = {u.split("/")[2] for u in outside.values()}
    assert {"fonts.example.com", "cdn.example.net", "tracker.example.org", "api.example.io"} <= hosts
    assert all(errors.get(src) == -105 for src in outside), {u: errors.get(s) for s, u in outside.items()}


@pytest.mark.e2e
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root for unshare -m")
async def test_open_resolves_a_real_hostname_through_the_hosts_file(tmp_path):
    """``open`` uses the system's resolver: inside a private mount namespace whose
    ``/etc/hosts`` maps ``forms.example.test`` to 127.0.0.1, Chromium loads the demo flight
    form by that name; ``loopback`` refuses the same name."""
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost forms.example.test\n")
    script = tmp_path / "load.py"
    script.write_text(
        textwrap.dedent("""
        import asyncio, sys
        from appliance.computer_agent.browser import Browser
        from appliance.config import Config

        async def main(url, network):
            b = Browser(Config().browser.model_copy(update={"network": network}))
            page = await b.start()
            try:
                await page.goto(url, timeout=10000)
                print("TITLE", await page.title())
            except Exception as e:
                print("FAILED", str(e).splitlines()[0])
            finally:
                await b.close()

        asyncio.run(main(sys.argv[1], sys.argv[2]))
    """)
    )
    async with DemoSite() as site:
        url = site.urls["flight"].replace("127.0.0.1", "forms.example.test")
        out = {}
        for network in ("open", "loopback"):
            proc = await asyncio.create_subprocess_exec(
                "unshare",
                "-m",
                "sh",
                "-c",
                'mount --bind "$0" /etc/hosts && exec "$@"',
                str(hosts),
                sys.executable,
                str(script),
                url,
                network,
                stdout=asyncio.subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
            )
            out[network] = (await asyncio.wait_for(proc.communicate(), 60))[0].decode()
    assert "TITLE SkyLoop Air" in out["open"], out
    assert "FAILED" in out["loopback"] and "ERR_NAME_NOT_RESOLVED" in out["loopback"], out
