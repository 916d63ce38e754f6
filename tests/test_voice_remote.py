"""Use from another device (issue 30), end to end: a page on another "host" (its own network
namespace) opens the appliance over HTTPS with a certificate from ``appliance cert`` and
talks to it through a real TURN server (Debian's coturn) and nothing else.

The topology, built and torn down by the test (root, inside scripts/test.sh's loopback-only
namespace):

- here: the appliance, its HTTPS server on ``10.77.0.1`` and WebRTC candidates on
  127.0.0.1 only (``transport.loopback_only``), and coturn on ``10.77.0.1`` (shared secret:
  ``transport.turn_secret_env``, credentials minted per call);
- a ``caller`` namespace: Chromium at ``10.77.0.2``, joined to here by a veth pair, no route
  to 127.0.0.1 of this side: the only way its audio reaches the appliance is the relay.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import subprocess
import time
from contextlib import contextmanager

import pytest
from helpers import loopback_only_network, make_wav, word_recall

from appliance import chromium, config, models
from appliance.simulate.page_client import talk
from appliance.voice import tls
from appliance.voice.server import VoiceServer

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        os.geteuid() != 0 or not loopback_only_network() or not shutil.which("turnserver"),
        reason="needs root, coturn and a loopback-only namespace (scripts/test.sh)",
    ),
]

HERE, CALLER = "10.77.0.1", "10.77.0.2"
SECRET_ENV = "APPLIANCE_TEST_TURN_SECRET"


def _run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True)


@contextmanager
def caller_namespace():
    """A network namespace joined to this one by a veth pair (here ``HERE``, there ``CALLER``),
    IPv4 only: an IPv6 link-local address that appears once its duplicate check is done is a
    network change to Chromium, and a page load under way fails (CI: ``net::ERR_NETWORK_CHANGED``)."""
    name, here_if = f"caller{os.getpid()}", f"vc{os.getpid() % 100000}"
    no_ipv6 = "echo 1 > /proc/sys/net/ipv6/conf/{}/disable_ipv6"
    _run("ip", "netns", "add", name)
    try:
        _run("ip", "link", "add", here_if, "type", "veth", "peer", "name", "vcaller")
        _run("ip", "link", "set", "vcaller", "netns", name)
        _run("sh", "-c", no_ipv6.format(here_if))
        _run("ip", "netns", "exec", name, "sh", "-c", no_ipv6.format("vcaller"))
        _run("ip", "addr", "add", f"{HERE}/24", "dev", here_if)
        _run("ip", "link", "set", here_if, "up")
        for cmd in (("ip", "addr", "add", f"{CALLER}/24", "dev", "vcaller"), ("ip", "link", "set", "vcaller", "up")):
            _run("ip", "netns", "exec", name, *cmd)
        _run("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up")
        yield name
    finally:
        subprocess.run(["ip", "link", "del", here_if], capture_output=True)
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def _free_udp_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@contextmanager
def coturn(tmp_path, secret: str):
    """coturn on ``HERE`` with a shared secret (use-auth-secret); yields (port, log path)."""
    port, log = _free_udp_port(HERE), tmp_path / "turn.log"
    proc = subprocess.Popen(
        [
            "turnserver",
            "-n",
            f"--listening-ip={HERE}",
            f"--relay-ip={HERE}",
            f"--listening-port={port}",
            "--min-port=49160",
            "--max-port=49260",
            "--use-auth-secret",
            f"--static-auth-secret={secret}",
            "--realm=appliance.test",
            "--no-tls",
            "--no-dtls",
            "--no-cli",
            "--allow-loopback-peers",  # the appliance's candidates are 127.0.0.1 on this side
            "--verbose",
            f"--log-file={log}",
            "--simple-log",
            f"--pidfile={tmp_path / 'turn.pid'}",
            f"--userdb={tmp_path / 'turndb'}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    try:
        time.sleep(1.0)
        assert proc.poll() is None, log.read_text() if log.exists() else "coturn exited"
        yield port, log
    finally:
        proc.terminate()
        proc.wait(10)


async def test_a_caller_on_another_host_talks_over_https_through_turn_only(runtime, arctic, tmp_path, monkeypatch):
    secret = "turn-secret-for-this-test"
    monkeypatch.setenv(SECRET_ENV, secret)
    clip = "arctic_a0009.wav"
    wav = make_wav(tmp_path / "mic.wav", [3.0, arctic[clip], 8.0])
    with caller_namespace() as ns, coturn(tmp_path, secret) as (turn_port, turn_log):
        files = tls.make_certificate(HERE, tmp_path / "tls")
        cfg = config.load(
            overrides={
                "server": {"port": 0, "host": HERE, "tls_cert": str(files.cert), "tls_key": str(files.key)},
                "transport": {
                    "loopback_only": True,  # the appliance's own candidates: 127.0.0.1, which the caller cannot reach
                    "ice_servers": [f"turn:{HERE}:{turn_port}?transport=udp"],
                    "turn_secret_env": SECRET_ENV,
                },
                "recording": {"enabled": False},
            }
        )
        srv = VoiceServer(cfg, runtime=runtime)
        await srv.start()
        try:
            assert srv.page_url.startswith(f"https://{HERE}:") and "token=" in srv.page_url
            wrapper = tmp_path / "chromium-in-caller"
            wrapper.write_text(f'#!/bin/sh\nexec ip netns exec {ns} {chromium.executable()} "$@"\n')
            wrapper.chmod(0o755)

            def answered(r) -> bool:
                mic = r.audible("mic")
                return bool(mic) and sum(t > max(mic) for t in r.audible("bot")) >= 25

            run = await talk(
                srv.page_url,
                wav,
                listen_s=12,
                done=answered,
                max_s=60,
                executable=str(wrapper),
                extra_args=(
                    "--ignore-certificate-errors",  # the caller has not imported ca.pem
                    f"{chromium.LOOPBACK_RULE} , EXCLUDE {HERE}",  # the page's own address resolves (the last rule wins)
                ),
            )
        finally:
            await srv.stop()
        relayed = 0
        for _ in range(50):  # coturn logs an allocation's usage about a second after it is released
            relayed = sum(int(n) for n in re.findall(r"\brb=(\d+)", turn_log.read_text()))
            if relayed > 20_000:
                break
            await asyncio.sleep(0.1)
    assert run.user_lines, f"nothing heard over the relay; page status: {run.status}"
    assert word_recall(models.ARCTIC_TEXT[clip], " ".join(run.user_lines)) >= 0.8, run.user_lines
    assert answered(run), "no answer reached the caller"
    assert relayed > 20_000, f"coturn relayed {relayed} bytes: the call did not go through it"
