"""The fast suite stays fast: conftest refuses model files, Chromium and redis-server to any
test not marked ``e2e``, loudly (an error that names the missing mark, never a skip)."""

from __future__ import annotations

from pathlib import Path

pytest_plugins = ["pytester"]

_INNER = """
import pytest

from appliance import models


def test_asks_for_the_models(runtime):
    pass


def test_asks_for_redis(redis_url):
    pass


def test_loads_a_model_file():
    models.path("whisper-tiny.en")


def test_starts_redis_server():
    from appliance.bus.redis_server import RedisServer

    RedisServer().start().stop()


async def test_starts_chromium():
    from appliance.computer_agent.browser import Browser
    from appliance import config

    browser = Browser(config.Config().browser)
    await browser.start()
    await browser.close()


def test_pure():
    assert models.models_dir().is_dir() and not any(models.models_dir().iterdir())
"""


def test_a_fast_test_that_needs_a_model_chromium_or_redis_fails_naming_the_mark(pytester):
    pytester.makeconftest(Path(__file__).with_name("conftest.py").read_text())
    pytester.makeini("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_inner=_INNER)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rA")
    outcomes = result.parseoutcomes()
    assert (outcomes.get("passed"), outcomes.get("failed"), outcomes.get("errors")) == (1, 3, 2), outcomes
    out = result.stdout.str()
    for line in (
        "test_asks_for_the_models uses runtime (model files or redis-server): mark it e2e",
        "test_asks_for_redis uses redis_server, redis_url (model files or redis-server): mark it e2e",
        "test_starts_redis_server starts redis-server: mark it e2e",
        "test_starts_chromium starts Chromium: mark it e2e",
        "missing: ",
    ):
        assert line in out, line
