"""``guard serve`` and ``guard view`` on a port another program listens on say so in one line, with what to do.

Before, uvicorn logged ``ERROR: [Errno 98] error while attempting to bind`` after its start-up lines (guard serve's
"Application startup complete" among them) and the command exited 3.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.processes import run_guard

pytestmark = pytest.mark.slow


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


@pytest.mark.parametrize("command", ["serve", "view"])
def test_a_taken_port_is_one_line_naming_it_and_the_way_out(command: str, taken_port: int, isolated_home: Path) -> None:
    done = run_guard([command, "--port", str(taken_port)], isolated_home, timeout=60)
    assert done.returncode == 1, done.stderr
    assert f"127.0.0.1:{taken_port} is already in use (another guard {command}?)" in done.stderr
    assert "pass --port N (0 picks a free one)" in done.stderr
    assert "Errno" not in done.stderr and "startup complete" not in done.stderr, done.stderr
