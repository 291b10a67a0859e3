"""Spellings of "run guard" that self-protection let through, each through a real ``guard hook``.

The config judges no shell command (its one rule is about WebFetch), so a Bash call runs unless self-protection refuses
it: a spelling it misses is a tool call that runs guard's CLI (``guard install claude --uninstall`` switches guard off)
with no model asked. Each spelling below is literal in the call (nothing built at run time), and each ran guard's CLI
when this test was written (the Python ones are run again below).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_protect_naming import CONFIG, run_hook

pytestmark = pytest.mark.project(config=CONFIG, files={".claude/settings.json": '{"hooks": {}}\n'})

#: Python's own spellings of "run guard's module", which run guard wherever the interpreter has it.
PYTHON = [
    "python3 -Imguard.cli.main cache clear",  # -m clustered with a flag
    "python3 -Pm guard.cli.main cache clear",
    "python3 -c 'import os,guard.cli.main as m; m.main()' cache clear",  # an import list
    "python3 -c 'import importlib; importlib.import_module(\"guard.cli.main\").main()' cache clear",
    "python3 -c 'from importlib import import_module as i; i(\"guard.cli.main\").main()' cache clear",
    'python3 -c \'import runpy; runpy.run_module("guard.cli.main", run_name="__main__")\' cache clear',
    "python3 -m runpy guard.cli.main cache clear",
]
#: Runners and tools that start the program they are given, with options before it.
RUNNERS = [
    "uv run --no-project --python /usr/bin/python3 guard install claude --uninstall",
    "uv run --with rich --with pyyaml guard install claude --uninstall",
    "uvx --from plainguard --with rich guard install claude --uninstall",
    "pipx run --spec plainguard --python python3 guard install claude --uninstall",
    "coverage run -m guard.cli.main install claude --uninstall",
    "xvfb-run guard install claude --uninstall",
    "valgrind -q guard install claude --uninstall",
    "gdb -batch -ex run --args guard install claude --uninstall",
    "awk 'BEGIN { system(\"guard install claude --uninstall\") }'",
    "vim -c '!guard install claude --uninstall' -c q",
]


@pytest.mark.slow
@pytest.mark.parametrize("command", PYTHON + RUNNERS)
def test_a_spelling_of_running_guard_is_refused(project: Path, command: str) -> None:
    denied, said, _ = run_hook(project, "claude", "Bash", {"command": command})
    assert denied, said
    assert "guard self-protection" in said and "guard" in said, said


@pytest.mark.slow
@pytest.mark.parametrize("command", PYTHON)
def test_the_python_spellings_really_run_guard(tmp_path: Path, command: str) -> None:
    """Without guard in the way, each runs guard's CLI (here ``guard --help`` in place of ``cache clear``)."""
    python = shutil.which("python3") or sys.executable
    line = command.replace("python3", python, 1).replace("cache clear", "--help")
    done = subprocess.run(
        ["bash", "-c", line], cwd=tmp_path, capture_output=True, text=True, timeout=120, env={**os.environ}
    )
    assert done.returncode == 0 and "guard install" in done.stdout + done.stderr or "usage: guard" in done.stdout, (
        done.stdout[-500:],
        done.stderr[-500:],
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        "python3 -m pytest -q tests/test_guard.py",
        "python3 scripts/render.py --out guard.txt",
        "python3 -c 'print(\"guardrails\")'",
        "uv run pytest -q",
        "awk '{ print $1 }' notes.txt",
        "git log --oneline -- src/guard_rails.py",
    ],
)
def test_ordinary_spellings_near_guard_are_not_refused(project: Path, command: str) -> None:
    denied, said, _ = run_hook(project, "claude", "Bash", {"command": command})
    assert not denied, said


#: Spellings of 127.0.0.1 that curl and Python's resolver read as this machine (inet_aton's decimal, hex, octal and
#: short forms, IPv4-mapped IPv6, ``*.localhost``); ``localhost.`` curl 8 reads as localhost too.
LOOPBACK = [
    "2130706433",
    "0x7f000001",
    "127.000.000.001",
    "0177.0.0.1",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "0",
    "127.1",
    "api.localhost",
    "LOCALHOST",
]
TO_THE_SERVICE = [
    *(f"curl -s -X POST http://{host}:8787/v1/decide -d @event.json" for host in [*LOOPBACK, "localhost."]),
    "curl -s --resolve x:8787:127.0.0.1 http://x:8787/metrics",
    "exec 3<>/dev/tcp/0x7f000001/8787",
    "socat - TCP:2130706433:8787",
    "python3 -c \"import urllib.request as u; u.urlopen('http://user@127.1:08787/metrics')\"",
]


@pytest.mark.slow
@pytest.mark.parametrize("command", TO_THE_SERVICE)
def test_a_request_to_guard_s_service_in_any_spelling_of_this_machine_is_refused(project: Path, command: str) -> None:
    """Only ``127.0.0.1``, ``localhost``, ``[::1]`` and a few more were read as guard's service: the rest reached the
    judge (or ran, with no rule on shell commands)."""
    denied, said, _ = run_hook(project, "claude", "Bash", {"command": command})
    assert denied and "guard's service" in said, said


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    ["curl -s http://10.1.2.3:8787/", "curl -s https://example.com:8787/", "echo 12:30:45 8787", "curl localhost:3000"],
)
def test_other_hosts_and_ports_are_not_guard_s_service(project: Path, command: str) -> None:
    denied, said, _ = run_hook(project, "claude", "Bash", {"command": command})
    assert not denied, said


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl (apt-get install curl)")
def test_each_spelling_reaches_a_service_on_127_0_0_1() -> None:
    import http.server
    import threading

    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for host in LOOPBACK:
            url = f"http://{host}:{server.server_port}/"
            done = subprocess.run(
                ["curl", "-sg", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", url],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            assert done.stdout == "200", (host, done.stdout, done.stderr)
    finally:
        server.shutdown()
        server.server_close()
