"""Fixtures for the cache, audit and serve tests: a real redis-server, both cache backends, free ports."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from guard.cache.redis import RedisCache
from guard.cache.sqlite import SQLiteCache

BACKENDS = ("sqlite", "redis")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, timeout: float = 10.0, proc: subprocess.Popen[str] | None = None) -> None:
    """Wait until something listens on ``port``; with ``proc``, fail at once (with its stderr) if it exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"the server exited with {proc.returncode} before listening on {port}: {proc.communicate()[1][-2000:]}") from None
            time.sleep(0.02)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout}s")


def start_listening(command: Callable[[int], list[str]], **popen: Any) -> tuple[subprocess.Popen[str], int]:
    """Start ``command(port)`` on a free loopback port and wait until it listens; the caller kills it.

    Another process may take the free port between the check and the bind: a
    server that exits before listening is started again on another port.
    """
    for attempt in range(3):
        port = free_port()
        proc = subprocess.Popen(command(port), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)
        try:
            wait_for_port(port, timeout=60, proc=proc)
        except RuntimeError:
            if attempt == 2:
                raise
            continue
        except TimeoutError:
            proc.kill()
            raise
        return proc, port
    raise AssertionError("unreachable")


def service_auth() -> dict[str, str]:
    """The header a user sends to their own ``guard serve``: its per-user token, as ``guard serve --print-token`` prints it."""
    from guard.server.identity import service_key

    return {"Authorization": f"Bearer {service_key()}"}


def start_serve(config: Path, cwd: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    """A real ``guard serve`` on a free loopback port, listening: the process and its base URL (the caller kills it)."""
    import sys

    def command(port: int) -> list[str]:
        return [sys.executable, "-m", "guard.cli.main", "serve", "--port", str(port), "--config", str(config), "--log-level", "warning"]

    proc, port = start_listening(command, cwd=cwd, env=env)
    return proc, f"http://127.0.0.1:{port}"


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A throwaway redis-server on a free loopback port, for the whole session."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server); the Redis backend is untested")
    port = free_port()
    workdir = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def redis_cache_url(redis_url: str) -> Iterator[str]:
    """The session's Redis, emptied before each test."""
    import redis

    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    client.close()
    yield redis_url


def make_cache(backend: str, tmp_path: Path, redis_cache_url: str | None, *, ttl: float = 3600.0) -> Any:
    if backend == "sqlite":
        return SQLiteCache(tmp_path / "cache" / "cache.db", ttl=ttl)
    assert redis_cache_url is not None
    return RedisCache(redis_cache_url, ttl=ttl)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def cache_factory(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    """Builds caches of the test's backend that share one store (as two processes or hosts would)."""
    url = request.getfixturevalue("redis_cache_url") if backend == "redis" else None
    made: list[Any] = []

    def factory(ttl: float = 3600.0) -> Any:
        made.append(make_cache(backend, tmp_path, url, ttl=ttl))
        return made[-1]

    yield factory
    for cache in made:
        cache.close()


@pytest.fixture
def cache(cache_factory: Any) -> Any:
    return cache_factory()
