"""``guard view`` on a big audit log: p50/p95 ms of each page with 100,000 decisions.

The log is written by :class:`guard.audit.AuditLog` itself (its clock replaced so
the rows spread over 30 days): 200 sessions, five clients, six tools, five rules
(the built-in self-protection rule beside four judging ones, some cached, some
failing open), mixed verdicts. It is kept in the temp folder between runs. Every
page is asked through the real ASGI app (Starlette's test client: routing,
templates, middleware; no socket), so the figure is the server's time to answer.

    python bench/bench_view.py [--rows 100000] [--repeat 20] [--rebuild]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import guard.audit
import guard.audit.index
from guard.audit import AuditLog
from guard.core.decision import HookResult, merge

GOAL_MS = 200.0
TOOLS = ("Bash", "Edit", "Write", "Read", "WebFetch", "Grep")
CLIENTS = ("claude", "codex", "gemini", "devin", "copilot")
COMMANDS = (
    "git status",
    "pytest -q tests/",
    "rm -rf build/",
    "curl -s https://api.example.com/v1/items",
    "npm install left-pad",
    "cat ~/.ssh/id_rsa",
    "ls -la",
    "docker compose up -d",
    "psql -c 'drop table users'",
    "grep -rn TODO src/",
)


class _Clock:
    """Stands in for the ``time`` module inside guard.audit: a clock the builder moves."""

    now = 0.0

    def time(self) -> float:
        return self.now


def _hooks(rng: random.Random, tool: str, command: str) -> list[HookResult]:
    hooks = [HookResult("protect", "protect", latency_ms=0.05)]
    risky = any(word in command for word in ("rm -rf", "ssh", "drop table", "curl"))
    cached = rng.random() < 0.4
    for rule, tools in (
        ("no-secrets", TOOLS),
        ("no-destructive-shell", ("Bash",)),
        ("no-exfil", ("Bash", "WebFetch")),
        ("review-writes", ("Edit", "Write")),
    ):
        if tool not in tools:
            continue
        if rng.random() < 0.01:
            hooks.append(
                HookResult(
                    rule,
                    "smart",
                    None,
                    tier="quick",
                    model="openai/gpt-4o-mini",
                    latency_ms=5000.0,
                    error="model timed out after 5s",
                )
            )
            continue
        verdict = "deny" if risky and rng.random() < 0.6 else ("ask" if rng.random() < 0.05 else "allow")
        hooks.append(
            HookResult(
                rule,
                "smart",
                verdict,
                f"{rule}: {'looks risky' if verdict != 'allow' else 'fine'} ({command[:30]})",
                tier="quick" if rng.random() < 0.8 else "thorough",
                model="openai/gpt-4o-mini",
                confidence=round(rng.uniform(0.6, 1.0), 2),
                cached=cached,
                latency_ms=0.3 if cached else rng.lognormvariate(6.0, 0.5),
                cost_usd=None if cached else 0.00012,
            )
        )
    return hooks


def build(path: Path, rows: int, seed: int = 7) -> None:
    """Write ``rows`` decisions over 30 days ending now, through ``AuditLog.record``."""
    rng = random.Random(seed)
    clock = _Clock()
    real_time, guard.audit.time = guard.audit.time, clock  # type: ignore[assignment]
    log = AuditLog(path, redact=("api_key",))
    try:
        start = time.time() - 30 * 86_400
        for i in range(rows):
            clock.now = start + i * (30 * 86_400 / rows)
            tool = rng.choice(TOOLS)
            command = f"{rng.choice(COMMANDS)} # step {i}"
            tool_input: dict[str, Any] = (
                {"command": command}
                if tool == "Bash"
                else {"file_path": f"/home/dev/proj/src/mod{i % 500}.py", "content": "x = 1\n" * rng.randint(1, 40)}
            )
            payload = {
                "hook_event_name": "PreToolUse",
                "session_id": f"sess-{rng.randrange(200):04d}",
                "tool_name": tool,
                "cwd": "/home/dev/proj",
                "tool_input": tool_input,
            }
            decision = merge(_hooks(rng, tool, command))
            log.record(payload, decision, latency_ms=rng.lognormvariate(5.0, 1.0), client=rng.choice(CLIENTS))
    finally:
        guard.audit.time = real_time  # type: ignore[assignment]
        log.close()


def timings(client: Any, url: str, repeat: int) -> list[float]:
    client.get(url)  # warm: the first request migrates/opens
    out = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(url)
        out.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (url, response.status_code, response.text[:300])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    schema = hashlib.sha256(
        Path(guard.audit.__file__).read_bytes() + Path(guard.audit.index.__file__).read_bytes()
    ).hexdigest()[:8]
    path = (
        Path(tempfile.gettempdir()) / f"guard-bench-view-{args.rows}-{schema}.db"
    )  # rebuilt when the schema's code changes
    if args.rebuild or not path.exists():
        for leftover in path.parent.glob(path.name + "*"):
            leftover.unlink()
        started = time.perf_counter()
        build(path, args.rows)
        print(
            f"built {args.rows} rows in {time.perf_counter() - started:.1f} s ({path.stat().st_size / 1e6:.0f} MB): {path}"
        )

    from starlette.testclient import TestClient

    from guard.view import ViewSources, create_view

    client = TestClient(create_view(ViewSources(path, redact=frozenset({"api_key"}))))
    newest = client.get("/decisions").text
    middle = args.rows // 2
    since = time.strftime("%Y-%m-%dT%H:%M", time.localtime(time.time() - 86_400))
    pages = {
        "decisions (newest 50)": "/decisions",
        "decisions, page in the middle": f"/decisions?before={middle}",
        "filter decision=deny": "/decisions?decision=deny",
        "filter decision=not judged": "/decisions?decision=unjudged",
        "filter rule=no-exfil": "/decisions?rule=no-exfil",
        "filter tool=WebFetch": "/decisions?tool=WebFetch",
        "filter session": "/decisions?session=sess-0042",
        "filter client=codex": "/decisions?client=codex",
        "filter last 24 h": f"/decisions?since={since}",
        "search 'drop table' (rare-ish)": "/decisions?q=drop+table",
        "search 'step 4242' (rare)": "/decisions?q=step+4242",
        "search 'git' (1 row in 60)": "/decisions?q=git",
        "search 'dev/proj' (every row)": "/decisions?q=dev/proj",
        "rule + decision + search": "/decisions?rule=no-exfil&decision=deny&q=curl",
        "search every row + 1 session": "/decisions?q=dev/proj&session=sess-0042",
        "rule on every row + not judged": "/decisions?rule=protect&decision=unjudged",
        "live poll (nothing new)": f"/decisions/newer?after={args.rows}",
        "detail": f"/decisions/{middle}",
        "rules (all time)": "/rules",
        "rules (last 24 h)": "/rules?range=24h",
    }
    assert "#" in newest
    print(
        f"{'page':<34} {'p50 ms':>8} {'p95 ms':>8}  (goal ≤ {GOAL_MS:.0f} ms, {args.repeat} requests each, {args.rows} rows)"
    )
    worst = 0.0
    for name, url in pages.items():
        ms = timings(client, url, args.repeat)
        p50, p95 = statistics.median(ms), statistics.quantiles(ms, n=20)[18]
        worst = max(worst, p95)
        print(f"{name:<34} {p50:8.1f} {p95:8.1f}{'  OVER GOAL' if p95 > GOAL_MS else ''}")
    print(f"worst p95: {worst:.1f} ms")


if __name__ == "__main__":
    main()
