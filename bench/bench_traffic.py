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

``--provenance`` replays the same sessions in a world where the agent's writes land: each session in a project
folder of its own (``/testbed`` in its commands becomes that folder), each allowed command that only reads or changes
files (``cat <<'EOF' > x.py``, ``mkdir``, ``sed -i``, ``rm`` …) run inside bubblewrap with nothing writable but that
folder and no network, and each call followed by the ``PostToolUse`` Claude Code sends, so what the agent wrote is on
the disk when a later command runs it. Two rows: the README guide's rule (``@shell|@write|@edit``,
``skip_project_writes``, which proves reads, redirections and plain ``rm``/``mkdir``/``touch``/``cp``/``mv``/``sed -i``)
and ``guard init``'s starter (two rules; ``skip_read_only`` on ``no-destructive-changes``). Last measured (stub model,
load 7.3 → 5.9): 281 and 903 model calls per 1,000 tool calls; main before the file utilities, back to back: 395, 961. Measure another checkout of guard with
``PYTHONPATH=/that/checkout python3 bench/bench_traffic.py --provenance`` (before and after a change, same run).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import traffic_calls
from bench_session import Transcript

#: The lanes a configuration opens: the YAML key, or none.
LANES = {"off": None, "read-only": "skip_read_only", "project writes": "skip_project_writes"}
#: ``../shared/external/swe_traffic/`` beside the checkout (or beside the folder of worktrees holding it).
TRAFFIC = next(
    (
        p
        for p in (Path(__file__).resolve().parents[n] / "shared/external/swe_traffic/sessions.jsonl" for n in (2, 3))
        if p.exists()
    ),
    Path("../shared/external/swe_traffic/sessions.jsonl"),
)
RULE = "Deny shell commands that delete or overwrite files outside the project directory."
GOAL = 400


def config(api_base: str, cache: Path, *, lane: str | None, session: bool) -> str:
    """The README's starter config (without the warm service: the gate judges in-process), with the ``lane`` key if any."""
    extra = ("      context: session\n" if session else "") + (f"      {lane}: true\n" if lane else "")
    return (
        f"models:\n  quick: openai/stub-quick\n  thorough: openai/stub-thorough\n  api_base: {api_base}\n"
        f"cache:\n  url: sqlite:///{cache}\n"
        "hooks:\n  PreToolUse:\n    - id: no-destructive-shell\n      matcher: Bash\n"
        f"      rule: {RULE}\n      depth: auto\n      failure_mode: fail_closed\n" + extra
    )


class Tally:
    """What one configuration's replay counted, summed over the worker threads."""

    def add(
        self,
        calls: int,
        lane: int,
        hits: int,
        denied: int,
        clock: list[float],
        models: int,
        denials: list[str],
        reached: list[dict[str, Any]] | None = None,
    ) -> None:
        """One session's counts: its calls, lane decisions, cache hits, denies, guard's [wall, CPU] seconds, model waits,
        and the calls that reached the judge (:mod:`traffic_calls`)."""
        with self.lock:
            self.calls += calls
            self.lane, self.hits, self.denied = self.lane + lane, self.hits + hits, self.denied + denied
            self.session_seconds.append(clock[0])
            self.session_cpu.append(clock[1])
            self.session_models.append(models)
            self.denials += denials
            self.reached += reached or []

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls = self.lane = self.hits = self.denied = 0
        self.session_seconds: list[float] = []
        self.session_models: list[
            float
        ] = []  # seconds of each session spent waiting on the model (its calls × the latency)
        self.denials: list[
            str
        ] = []  # why each denied call was denied (the stub allows everything: a deny is guard's own)
        self.session_cpu: list[
            float
        ] = []  # CPU seconds guard's decisions took in each session (its thread's: the load does not count)
        self.reached: list[dict[str, Any]] = []  # each call that reached the judge, classed (traffic_calls.reached)


def decided(gate: Any, event: dict[str, Any], clock: list[float]) -> Any:
    """``gate.decide(event)``'s decision, adding its wall and this thread's CPU seconds to ``clock`` ([wall, cpu])."""
    wall, cpu = time.perf_counter(), time.thread_time()
    _, decision = gate.decide(event)
    clock[0] += time.perf_counter() - wall
    clock[1] += time.thread_time() - cpu
    return decision


def replay(
    session: dict[str, Any], folder: Path, gates: threading.local, config_path: Path, env: dict[str, str], tally: Tally
) -> None:
    """One session through the worker thread's gate (one per thread, as one ``guard serve`` keeps one)."""
    from guard.judge.read_only_lane import LANE_TIERS
    from guard.runtime.deciders import in_process
    from guard.runtime.gate import ConfigFile, Gate

    if not hasattr(gates, "gate"):
        gates.gate = Gate(ConfigFile(str(config_path)), deciders=in_process(), env=env)
    gate = gates.gate
    transcript = Transcript(folder / "claude", session["session"])
    transcript.said(session["task"])
    gate.decide(
        {
            "hook_event_name": "UserPromptSubmit",
            "session_id": transcript.session,
            "prompt": session["task"],
            "transcript_path": str(transcript.path),
            "cwd": "/testbed",
        }
    )
    clock, models = [0.0, 0.0], 0
    lane = hits = denied = 0
    for command in session["commands"]:
        event = {**transcript.bash(command), "cwd": "/testbed"}
        decision = decided(gate, event, clock)
        smart = [h for h in decision.hooks if h.type == "smart"]
        lane += any(h.tier in LANE_TIERS for h in smart)
        hits += any(h.cached for h in smart)
        models += model_wait(smart)
        denied += decision.decision == "deny"
    tally.add(len(session["commands"]), lane, hits, denied, clock, models, [])


def run(
    sessions: list[dict[str, Any]], *, lane: str | None, session: bool, latency: float, concurrency: int
) -> tuple[Tally, int]:
    return replayed(
        sessions,
        lambda url, cache: config(url, cache, lane=lane, session=session),
        replay,
        latency=latency,
        concurrency=concurrency,
    )


def replayed(
    sessions: list[dict[str, Any]],
    make_config: Callable[[str, Path], str],
    replay_one: Callable[..., None],
    *,
    latency: float,
    concurrency: int,
) -> tuple[Tally, int]:
    """``sessions`` replayed ``concurrency`` at a time by ``replay_one`` under the config ``make_config(stub URL, cache file)`` writes,
    in a fresh state and cache folder, against the stub: what was counted, and the model calls the stub answered."""
    from guard.testing.openai_stub import Reply, StubServer

    tally = Tally()
    with (
        tempfile.TemporaryDirectory() as tmp,
        StubServer(latency=latency, default=Reply.verdict("allow", "inside the project", confidence=0.95)) as stub,
    ):
        folder = Path(tmp)
        config_path = folder / "guard.yaml"
        config_path.write_text(make_config(stub.url, folder / "cache.db"))
        env = {
            **os.environ,
            "XDG_STATE_HOME": str(folder / "state"),
            "XDG_CACHE_HOME": str(folder / "cache"),
            "CLAUDE_CONFIG_DIR": str(folder / "claude"),
        }
        os.environ.update(
            XDG_STATE_HOME=env["XDG_STATE_HOME"],
            XDG_CACHE_HOME=env["XDG_CACHE_HOME"],
            CLAUDE_CONFIG_DIR=env["CLAUDE_CONFIG_DIR"],
        )
        env.pop(
            "PYTHONPATH", None
        )  # how this process found guard, not the agent's environment (`$PYTHONPATH` would name guard's own files)
        os.environ.pop(
            "PYTHONPATH", None
        )  # (guard is imported by now; self-protection expands variables from this process's environment)
        gates = threading.local()
        with ThreadPoolExecutor(concurrency) as pool:
            for done in [pool.submit(replay_one, s, folder, gates, config_path, env, tally) for s in sessions]:
                done.result()
        tally.lock = None  # type: ignore[assignment]  # sent back to the parent process
        return tally, stub.calls


#: The README guide's hook, as ``guard install`` users run it.
GUIDE = (
    'hooks:\n  PreToolUse:\n    - id: no-destructive-shell\n      matcher: "@shell|@write|@edit"\n'
    f"      rule: {RULE}\n      depth: auto\n      failure_mode: fail_closed\n      skip_project_writes: true\n"
)
#: Programs an allowed command may run to be replayed for real (in bubblewrap): they read or change files, and run nothing.
REPLAYED = frozenset(
    {"cat", "echo", "printf", "mkdir", "touch", "cp", "mv", "rm", "sed", "chmod", "ln", "head", "tail", "true", "cd"}
)
#: What the world replay counts as guard's own policy for the rows.
WORLD_GOALS = {"guide": 200, "starter": 400}


def world_config(api_base: str, cache: Path, which: str) -> str:
    """The guide's rule or ``guard init``'s starter, judged by the stub (in-process: no warm service)."""
    models = f"models:\n  quick: openai/stub-quick\n  thorough: openai/stub-thorough\n  api_base: {api_base}\ncache:\n  url: sqlite:///{cache}\n"
    if which == "guide":
        return models + GUIDE
    from guard.config.starter import STARTER

    return models + STARTER[STARTER.index("hooks:") :]


def replayable(command: str) -> bool:
    """Whether ``command`` only runs programs that read or change files (no substitution): safe to run in the sandbox."""
    from guard.command_analysis.shell_syntax import ShellSyntaxError, parse

    try:
        script = parse(command)
    except ShellSyntaxError:
        return False
    parts = [part for pipeline in script.pipelines for part in pipeline.commands]
    return bool(parts) and all(
        part.words
        and part.words[0].text in REPLAYED
        and not part.assignments
        and not any(w.substitutions or w.process for w in part.words)
        for part in parts
    )


def run_sandboxed(command: str, project: Path) -> None:
    """Run ``command`` in ``project`` with bubblewrap: the whole file system read-only but ``project``, no network."""
    import subprocess

    ran = subprocess.run(
        [
            "bwrap",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--bind",
            str(project),
            str(project),
            "--unshare-all",
            "--die-with-parent",
            "--chdir",
            str(project),
            "bash",
            "-c",
            command,
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if ran.stderr.startswith(
        "bwrap:"
    ):  # the sandbox itself failed: nothing would land, and the row would measure another world
        raise RuntimeError(f"bubblewrap could not run {command[:60]!r}: {ran.stderr.strip()}")


def replay_world(
    session: dict[str, Any], folder: Path, gates: threading.local, config_path: Path, env: dict[str, str], tally: Tally
) -> None:
    """One session in a project folder of its own, its allowed file changes made for real, each call reported after it ran."""
    from guard.judge.read_only_lane import LANE_TIERS
    from guard.runtime.deciders import in_process
    from guard.runtime.gate import ConfigFile, Gate

    if not hasattr(gates, "gate"):
        gates.gate = Gate(ConfigFile(str(config_path)), deciders=in_process(), env=env)
    gate = gates.gate
    project = folder / "projects" / session["session"] / "testbed"
    project.mkdir(parents=True)
    transcript = Transcript(folder / "claude", session["session"])
    transcript.said(session["task"])
    gate.decide(
        {
            "hook_event_name": "UserPromptSubmit",
            "session_id": transcript.session,
            "prompt": session["task"],
            "transcript_path": str(transcript.path),
            "cwd": str(project),
        }
    )
    clock, models = [0.0, 0.0], 0
    lane = hits = denied = 0
    reasons: list[str] = []
    judged: list[dict[str, Any]] = []
    for raw in session["commands"]:
        command = raw.replace("/testbed", str(project))
        event = {**transcript.bash(command), "cwd": str(project)}
        decision = decided(gate, event, clock)
        smart = [h for h in decision.hooks if h.type == "smart"]
        lane += any(h.tier in LANE_TIERS for h in smart)
        hits += any(h.cached for h in smart)
        models += model_wait(smart)
        call = traffic_calls.reached(session["session"], raw, command, str(project), smart, env)
        judged += [call] if call is not None else []
        if decision.decision == "deny":
            denied += 1
            reasons.append(f"{raw[:80]!r}: {decision.reason}")
            continue
        if replayable(command):
            run_sandboxed(command, project)
        post = {
            "hook_event_name": "PostToolUse",
            "session_id": transcript.session,
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": event["tool_use_id"],
            "transcript_path": str(transcript.path),
            "cwd": str(project),
            "tool_response": {"stdout": "", "stderr": "", "interrupted": False},
        }
        decided(gate, post, clock)
    tally.add(len(session["commands"]), lane, hits, denied, clock, models, reasons, judged)


def model_wait(smart: list[Any]) -> int:
    """How many model latencies a call waited: the rules run side by side, so the longest chain of one rule's own calls."""
    return max(
        (
            sum(1 for call in h.details.get("calls", ()) if not call.get("shared_with") and not call.get("cached"))
            for h in smart
            if not h.cached
        ),
        default=0,
    )


def run_world(sessions: list[dict[str, Any]], *, which: str, latency: float, concurrency: int) -> tuple[Tally, int]:
    return replayed(
        sessions,
        lambda url, cache: world_config(url, cache, which),
        replay_world,
        latency=latency,
        concurrency=concurrency,
    )


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def row(label: str, tally: Tally, model_calls: int, latency: float) -> str:
    per_k = lambda n: f"{1000 * n / tally.calls:.0f}"  # noqa: E731 - a one-line formatter
    reached = tally.calls - tally.lane
    overhead = [
        spent - models * latency for spent, models in zip(tally.session_seconds, tally.session_models, strict=True)
    ]
    return (
        f"| {label} | {tally.calls} | **{per_k(model_calls)}** | {tally.hits / reached:.0%} | {per_k(tally.lane)} | {tally.denied} | "
        f"{statistics.median(tally.session_seconds):.1f} / {percentile(tally.session_seconds, 0.95):.1f} s | "
        f"{statistics.median(overhead) * 1000:.0f} / {percentile(overhead, 0.95) * 1000:.0f} ms | "
        f"{statistics.median(tally.session_cpu) * 1000:.0f} / {percentile(tally.session_cpu, 0.95) * 1000:.0f} ms |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--traffic", type=Path, default=TRAFFIC, help="sessions.jsonl (default: the shared swe_traffic sample)"
    )
    parser.add_argument("--sessions", type=int, help="replay only the first N sessions")
    parser.add_argument(
        "--latency", type=float, default=0.2, help="the stub model's fixed latency in seconds (default 0.2)"
    )
    parser.add_argument("--concurrency", type=int, default=8, help="sessions replayed at once (default 8)")
    parser.add_argument(
        "--provenance",
        action="store_true",
        help="the guide's rule and guard init's starter, in a world where the agent's writes land",
    )
    parser.add_argument(
        "--calls",
        type=Path,
        help="with --provenance: write each call that reached the judge to this JSON Lines file, "
        "classed, and print where each row's model calls go",
    )
    args = parser.parse_args()
    if not args.traffic.exists():
        sys.exit(f"no traffic at {args.traffic}: pass --traffic sessions.jsonl")
    sessions = [json.loads(line) for line in args.traffic.read_text().splitlines() if line.strip()][: args.sessions]
    print(
        f"{len(sessions)} sessions of {args.traffic.name}, stub model answering in {args.latency * 1000:.0f} ms, "
        f"{args.concurrency} sessions at a time; load average {os.getloadavg()[0]:.2f}\n"
    )
    print(
        "| lane, rule | tool calls | model calls per 1,000 | cache hit ratio (calls past the lane) | decided in the lane per 1,000 "
        "| denied | time per session: median / p95 | guard's own time per session (minus the model's): median / p95 "
        "| guard's CPU per session: median / p95 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    if args.provenance:
        import guard

        if shutil.which("bwrap") is None:
            sys.exit("--provenance runs the agent's file changes in bubblewrap: apt-get install bubblewrap")
        denials: list[str] = []
        tables: list[str] = []
        if args.calls is not None:
            args.calls.write_text("")
        for which, label in (
            ("guide", "the guide's rule (skip_project_writes)"),
            ("starter", "guard init's starter (two rules)"),
        ):
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as child:
                tally, model_calls = child.submit(
                    run_world, sessions, which=which, latency=args.latency, concurrency=args.concurrency
                ).result()
            print(row(f"{label}, writes replayed", tally, model_calls, args.latency), flush=True)
            denials.extend(f"{label}: {why}" for why in tally.denials)
            if args.calls is not None:
                traffic_calls.write(args.calls, which, tally.reached)
                tables.append(traffic_calls.table(label, tally.reached, tally.calls))
        print(
            f"\nguard from {Path(guard.__file__).parent}; goals: ≤ {WORLD_GOALS['guide']} (guide), ≤ {WORLD_GOALS['starter']} (starter) "
            f"model calls per 1,000 tool calls; load average {os.getloadavg()[0]:.2f} at the end"
        )
        for why in denials:
            print(f"denied: {why}")
        print(*tables, sep="\n")
        return
    for name, lane in LANES.items():
        for session in (False, True):
            # each configuration in its own process: every one starts cold, and what a process holds open ends with it
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as child:
                tally, model_calls = child.submit(
                    run, sessions, lane=lane, session=session, latency=args.latency, concurrency=args.concurrency
                ).result()
            label = f"{name}, {'context: session' if session else 'context-free'}"
            print(row(label, tally, model_calls, args.latency), flush=True)
    print(f"\ngoal: ≤ {GOAL} model calls per 1,000 tool calls with a lane on")


if __name__ == "__main__":
    main()
