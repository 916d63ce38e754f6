"""Shared pytest fixtures. Each fixture here is self-contained; add yours below."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


# -- bus: a real redis-server on loopback ---------------------------------------------------

@pytest.fixture(scope="session")
def redis_server() -> Iterator["RedisServer"]:  # noqa: F821
    """A throw-away ``redis-server`` on 127.0.0.1 (free port, no persistence) for the session.

    Its ``url`` attribute is ``redis://127.0.0.1:PORT/0``. Tests share it: use unique
    stream names (see ``redis_url``) rather than assuming an empty server.
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
