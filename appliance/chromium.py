"""Debian Chromium: the one place its path and its command-line switches live.

Every Chromium the appliance starts — the computer agent's (:mod:`appliance.computer_agent.browser`),
the test and benchmark page clients — gets its switches from :func:`launch_args`:

* always (:data:`QUIET_ARGS`): no telemetry, crash reports, sync, component updates,
  extension or default-app downloads, pings, DNS prefetch, QUIC. Chromium 156 still
  checks some components on demand (``update.googleapis.com``, even with
  ``--disable-component-update``) and asks Google for the signed-in accounts
  (``accounts.google.com/ListAccounts``): both services are pointed at :data:`NOWHERE`,
  a closed local port, so those requests fail on the machine (measured in Chromium's net
  log; see ``tests/test_browser_network.py``);
* ``loopback`` adds :data:`LOOPBACK_RULE`, the resolver rule that makes every hostname but
  ``127.0.0.1``/``localhost`` fail to resolve without a lookup. Without it Chromium looked up
  Google and DuckDuckGo hosts even with every other switch set. Tests, benchmarks and
  simulations use it; ``open`` (``appliance serve``/``form`` on a real site) leaves
  Chromium's normal DNS in place.

:func:`check_form_url` is where a form's address is judged before Chromium sees it;
:func:`descendants` and :func:`alive` read a launch's process tree from ``/proc`` (the
browser's clean stop, the soak benchmark's Chromium count).
"""

from __future__ import annotations

import ipaddress
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from appliance.errors import ApplianceError

#: The real binary (``/usr/bin/chromium`` is a wrapper script that adds flags).
CHROMIUM_PATH = "/usr/lib/chromium/chromium"

Network = Literal["open", "loopback"]

#: The discard port on loopback: where Chromium's own Google services are sent to fail.
NOWHERE = "http://127.0.0.1:9/"

#: Switches every launch gets, whatever the network: nothing is sent that the page did not ask for.
QUIET_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-component-extensions-with-background-pages",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-breakpad",
    "--metrics-recording-only",
    "--no-pings",
    "--dns-prefetch-disable",
    f"--component-updater=url-source={NOWHERE}",
    f"--gaia-url={NOWHERE}",
)

#: ``loopback`` only: every hostname except 127.0.0.1 and localhost resolves to nothing.
LOOPBACK_RULE = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost"


def launch_args(network: Network) -> list[str]:
    """Chromium's switches for ``network`` (``open`` | ``loopback``).

    Raises:
        ValueError: another ``network``.
    """
    if network == "open":
        return list(QUIET_ARGS)
    if network == "loopback":
        return [*QUIET_ARGS, LOOPBACK_RULE]
    raise ValueError(f"browser.network must be open or loopback, got {network!r}")


#: What the test and benchmark page clients launch with (they always stay on loopback).
OFFLINE_ARGS = launch_args("loopback")


def executable(path: str | None = None) -> str:
    """Path of the Chromium binary: ``path`` when given (``browser.chromium_path``), else
    Debian's :data:`CHROMIUM_PATH`, else ``chromium`` on ``PATH``.

    Raises:
        FileNotFoundError: naming the path that is missing, or how to install Chromium.
    """
    if path is not None:
        if not Path(path).is_file():
            raise FileNotFoundError(f"browser.chromium_path: no Chromium at {path}")
        return path
    if Path(CHROMIUM_PATH).is_file():
        return CHROMIUM_PATH
    found = shutil.which("chromium")
    if not found:
        raise FileNotFoundError(
            "Chromium not found: install Debian's package with `apt-get install chromium` (scripts/install.sh does)"
        )
    return found


def fake_microphone_args(wav: str | Path) -> list[str]:
    """Flags that make ``wav`` the microphone, played once (``%noloop``), with WebRTC on
    loopback allowed (Chromium gathers loopback ICE candidates only with it) and autoplay on."""
    return [
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={Path(wav).resolve()}%noloop",
        "--autoplay-policy=no-user-gesture-required",
        "--allow-loopback-in-peer-connection",
    ]


class URLRefused(ApplianceError, ValueError):
    """A form address the browser will not open: the message names the URL and why."""


def _loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_form_url(
    url: str,
    *,
    network: Network,
    allowed_schemes: Sequence[str] = ("http", "https"),
    allowed_domains: Sequence[str] = (),
) -> str:
    """``url`` when the computer agent may open it, else :class:`URLRefused`.

    Rules, in order: the scheme must be in ``allowed_schemes`` (``file:``, ``data:``,
    ``javascript:``, ``chrome:`` … are refused unless listed); an ``http(s)`` URL needs a
    host; with a non-empty ``allowed_domains`` the host must be one of them or a subdomain
    (``example.org`` allows ``forms.example.org``); with ``network: loopback`` the host
    must be 127.0.0.1/``localhost`` (nothing else resolves there). ``demo:NAME`` is resolved
    to its address before this check (:func:`appliance.demo.site.resolve_url`).

    Raises:
        URLRefused: "form URL <url> refused: <why>".
    """

    def refuse(why: str) -> URLRefused:
        return URLRefused(f"form URL {url!r} refused: {why}")

    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    schemes = [s.lower().rstrip(":") for s in allowed_schemes]
    if not scheme:
        raise refuse(f"no scheme; give a full address such as https://{url.strip() or 'example.org'}")
    if scheme not in schemes:
        raise refuse(f"the {scheme}: scheme is not allowed (browser.allowed_schemes: {', '.join(schemes)})")
    host = (parts.hostname or "").lower()
    if scheme in ("http", "https") and not host:
        raise refuse("no host name")
    if host and allowed_domains:
        domains = [d.lower().lstrip(".") for d in allowed_domains]
        if not any(host == d or host.endswith("." + d) for d in domains):
            raise refuse(f"{host} is not in browser.allowed_domains ({', '.join(domains)})")
    if network == "loopback" and host and not _loopback(host):
        raise refuse(f"browser.network is loopback: only 127.0.0.1 and localhost resolve, not {host}")
    return url


def descendants(pid: int) -> list[int]:
    """All descendants of ``pid`` (from /proc; Linux)."""
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie counts as gone)."""
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def webaudio_microphone_args() -> list[str]:
    """Flags for a page whose microphone is WebAudio (the voice benchmark's hook): the
    permission prompt answered, WebRTC on loopback allowed, autoplay on."""
    return [
        "--use-fake-ui-for-media-stream",
        "--autoplay-policy=no-user-gesture-required",
        "--allow-loopback-in-peer-connection",
    ]
