"""Model calls and time on real coding-agent traffic, with no lane, the read-only lane and the project-writes lane.

Replays ``swe_traffic/sessions.jsonl`` (mini-swe-agent sessions fixing SWE-bench issues,
one Bash command per step, in ``/testbed``) as Claude Code events: a ``UserPromptSubmit``
with the task, then one ``PreToolUse`` ``Bash`` per command, each written to a Claude
Code-shaped transcript first, as the client does. The config is the README's starter rule
(``depth: auto``, ``fail_closed``), context-free or ``context: session``, with no lane,
with ``skip_read_only: true`` and with ``skip_project_writes: true`` (the reads, and writes of
plain project files by reading programs); each configuration starts with an empty decision cache.
Events go through ``guard.Gate.decide`` (what ``guard hook`` and ``guard serve`` decide
with), ``--concurrency`` sessions at a time; the judge is the loopback stub answering
``allow`` after ``--latency`` seconds, so these are call counts and guard's overhead, not
a model's quality. A fresh ``guard hook`` process adds its start-up to each call
(``bench_cache_hook.py``).

    python bench/bench_traffic.py [--traffic FILE] [--sessions N] [--latency 0.2] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench_session import Transcript

#: The lanes a configuration opens: the YAML key, or none.
LANES = {"off": None, "read-only": "skip_read_only", "project writes": "skip_project_writes"}
#: ``../shared/external/swe_traffic/`` beside the checkout (or beside the folder of worktrees holding it).
TRAFFIC = next((p for p in (Path(__file__).resolve().parents[n] / "shared/external/swe_traffic/sessions.jsonl" for n in (2, 3)) if p.exists()),
               Path("../shared/external/swe_traffic/sessions.jsonl"))
RULE = "Deny shell commands that delete or overwrite files outside the project directory."
GOAL = 400


def config(api_base: str, cache: Path, *, lane: str | None, session: bool) -> str:
    """The README's starter config (without the warm service: the gate judges in-process), with the ``lane`` key if any."""
    extra = ("      context: session\n" if session else "") + (f"      {lane}: true\n" if lane else "")
    return (f"models:\n  quick: openai/stub-quick\n  thorough: openai/stub-thorough\n  api_base: {api_base}\n"
            f"cache:\n  url: sqlite:///{cache}\n"
            "hooks:\n  PreToolUse:\n    - id: no-destructive-shell\n      matcher: Bash\n"
            f"      rule: {RULE}\n      depth: auto\n      failure_mode: fail_closed\n" + extra)


class Tally:
    """What one configuration's replay counted, summed over the worker threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls = self.lane = self.hits = self.denied = 0
        self.session_seconds: list[float] = []
        self.session_models: list[int] = []


def replay(session: dict[str, Any], folder: Path, gates: threading.local, config_path: Path, env: dict[str, str], tally: Tally) -> None:
    """One session through the worker thread's gate (one per thread, as one ``guard serve`` keeps one)."""
    from guard.judge.read_only_lane import TIERS
    from guard.runtime.gate import Gate

    if not hasattr(gates, "gate"):
        gates.gate = Gate(str(config_path), env=env)
    gate = gates.gate
    transcript = Transcript(folder / "claude", session["session"])
    transcript.said(session["task"])
    gate.decide({"hook_event_name": "UserPromptSubmit", "session_id": transcript.session, "prompt": session["task"],
                 "transcript_path": str(transcript.path), "cwd": "/testbed"})
    spent, models = 0.0, 0
    lane = hits = denied = 0
    for command in session["commands"]:
        event = {**transcript.bash(command), "cwd": "/testbed"}
        started = time.perf_counter()
        _, decision = gate.decide(event)
        spent += time.perf_counter() - started
        smart = [h for h in decision.hooks if h.type == "smart"]
        lane += any(h.tier in TIERS for h in smart)
        hits += any(h.cached for h in smart)
        models += sum(len(h.details.get("calls", ())) for h in smart if not h.cached)
        denied += decision.decision == "deny"
    with tally.lock:
        tally.calls += len(session["commands"])
        tally.lane, tally.hits, tally.denied = tally.lane + lane, tally.hits + hits, tally.denied + denied
        tally.session_seconds.append(spent)
        tally.session_models.append(models)


def run(sessions: list[dict[str, Any]], *, lane: str | None, session: bool, latency: float, concurrency: int) -> tuple[Tally, int]:
    from guard.testing.openai_stub import Reply, StubServer

    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp, StubServer(latency=latency, default=Reply.verdict("allow", "inside the project", confidence=0.95)) as stub:
        folder = Path(tmp)
        config_path = folder / "guard.yaml"
        config_path.write_text(config(stub.url, folder / "cache.db", lane=lane, session=session))
        env = {**os.environ, "XDG_STATE_HOME": str(folder / "state"), "XDG_CACHE_HOME": str(folder / "cache"), "CLAUDE_CONFIG_DIR": str(folder / "claude")}
        os.environ.update(XDG_STATE_HOME=env["XDG_STATE_HOME"], XDG_CACHE_HOME=env["XDG_CACHE_HOME"], CLAUDE_CONFIG_DIR=env["CLAUDE_CONFIG_DIR"])
        gates = threading.local()
        with ThreadPoolExecutor(concurrency) as pool:
            for done in [pool.submit(replay, s, folder, gates, config_path, env, tally) for s in sessions]:
                done.result()
        tally.lock = None  # type: ignore[assignment]  # sent back to the parent process
        return tally, stub.calls


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def row(label: str, tally: Tally, model_calls: int, latency: float) -> str:
    per_k = lambda n: f"{1000 * n / tally.calls:.0f}"  # noqa: E731 - a one-line formatter
    reached = tally.calls - tally.lane
    overhead = [spent - models * latency for spent, models in zip(tally.session_seconds, tally.session_models, strict=True)]
    return (f"| {label} | {tally.calls} | **{per_k(model_calls)}** | {tally.hits / reached:.0%} | {per_k(tally.lane)} | {tally.denied} | "
            f"{statistics.median(tally.session_seconds):.1f} / {percentile(tally.session_seconds, 0.95):.1f} s | "
            f"{statistics.median(overhead) * 1000:.0f} / {percentile(overhead, 0.95) * 1000:.0f} ms |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traffic", type=Path, default=TRAFFIC, help="sessions.jsonl (default: the shared swe_traffic sample)")
    parser.add_argument("--sessions", type=int, help="replay only the first N sessions")
    parser.add_argument("--latency", type=float, default=0.2, help="the stub model's fixed latency in seconds (default 0.2)")
    parser.add_argument("--concurrency", type=int, default=8, help="sessions replayed at once (default 8)")
    args = parser.parse_args()
    if not args.traffic.exists():
        sys.exit(f"no traffic at {args.traffic}: pass --traffic sessions.jsonl")
    sessions = [json.loads(line) for line in args.traffic.read_text().splitlines() if line.strip()][: args.sessions]
    print(f"{len(sessions)} sessions of {args.traffic.name}, stub model answering in {args.latency * 1000:.0f} ms, "
          f"{args.concurrency} sessions at a time; load average {os.getloadavg()[0]:.2f}\n")
    print("| lane, rule | tool calls | model calls per 1,000 | cache hit ratio (calls past the lane) | decided in the lane per 1,000 "
          "| denied | time per session: median / p95 | guard's own time per session (minus the model's): median / p95 |")
    print("|---|---|---|---|---|---|---|---|")
    for name, lane in LANES.items():
        for session in (False, True):
            # each configuration in its own process: every one starts cold, and what a process holds open ends with it
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as child:
                tally, model_calls = child.submit(run, sessions, lane=lane, session=session, latency=args.latency, concurrency=args.concurrency).result()
            label = f"{name}, {'context: session' if session else 'context-free'}"
            print(row(label, tally, model_calls, args.latency), flush=True)
    print(f"\ngoal: ≤ {GOAL} model calls per 1,000 tool calls with a lane on")


if __name__ == "__main__":
    main()
