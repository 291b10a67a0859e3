"""``guard hook``: one event JSON on stdin → the client's hook output on stdout.

Deciding is the :class:`~guard.runtime.gate.Gate`'s job; this module reads
stdin, renders the client's output and makes sure an answer is written before
the client's own hook timeout (``--deadline``, which ``guard install`` writes):
a watchdog writes the failure policy's answer and exits if anything hangs —
a model, the service, a sync callable that ignores its timeout. The gate arms
it when deciding leaves the local fast path, so a cache hit starts no thread.

Exit codes are the client's protocol: 0 with JSON (or nothing), or 2 with the
reason on stderr where the client blocks by exit code. guard never exits with
a code a client reads as "proceed" for a call it did not decide to allow.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from guard.core.errors import UnknownName
from guard.core.settings import CONFIG_ENV, DEADLINE_ENV, FAIL_CLOSED_ENV, FAIL_OPEN_ENV, from_env

if TYPE_CHECKING:
    import argparse
    import threading
    from types import SimpleNamespace

    from guard.adapters import Client, Rendered
    from guard.core.decision import Decision
    from guard.runtime.deciders import Decider
    from guard.runtime.gate import Gate

    #: What argparse or :func:`parse_plain` made of the command line (the same attributes).
    Arguments = argparse.Namespace | SimpleNamespace

__all__ = ["LARGE_INPUT", "parse_plain", "register", "run"]

#: An event this large (bytes) is watched from the start, and is refused if the deadline comes first: its size is the agent's choice.
LARGE_INPUT = 64 * 1024


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "hook",
        help="judge one hook event from stdin (for settings.json)",
        description="Read one hook event (JSON) from stdin, decide it with the config's hooks and print the answer in the "
        "client's hook protocol. This is the command `guard install` writes into a client's settings; it answers "
        "before --deadline with the failure policy if anything hangs.",
    )
    p.add_argument(
        "--format",
        default="claude",
        help="client protocol: claude, devin, codex, gemini, copilot, cursor, or a plugin's client",
    )
    p.add_argument(
        "--config",
        help="guard.yaml or settings.json (default: $GUARD_CONFIG, else guard.yaml or .guard/guard.yaml in the "
        "project: --project, else the client's project folder, else the working directory)",
    )
    p.add_argument(
        "--project",
        help="the project guard was installed for (guard install writes it): its config is the one enforced "
        "wherever the client starts the hook, and finding none there blocks tool calls. Empty: the client's project folder",
    )
    p.add_argument(
        "--server",
        help="send events that need a hook run to `guard serve` at this URL, or 'auto' to start one (default: $GUARD_SERVER)",
    )
    p.add_argument(
        "--deadline",
        type=float,
        help="the client's hook timeout in seconds: guard answers before it (default: the client's own default)",
    )
    p.add_argument(
        "--fail-closed", action="store_true", help="treat every failure as fail_closed (also GUARD_FAIL_CLOSED=1)"
    )
    p.add_argument(
        "--fail-open",
        action="store_true",
        help="let calls run, with a warning, when the config does not load (also GUARD_FAIL_OPEN=1)",
    )
    p.add_argument(
        "--defer",
        action="store_true",
        help="claude only, for headless runs (claude -p): when a fail_closed hook cannot judge a tool call, answer "
        "defer instead of deny, so the session stops with the call pending and `claude -p --resume` judges it again",
    )
    p.set_defaults(func=run)


_VALUED = {
    "--format": "format",
    "--config": "config",
    "--server": "server",
    "--deadline": "deadline",
    "--project": "project",
}
_FLAGS = {"--fail-closed": "fail_closed", "--fail-open": "fail_open", "--defer": "defer"}


def parse_plain(argv: list[str]) -> SimpleNamespace | None:
    """``guard hook``'s arguments when spelled out plainly (what ``guard install`` writes), without argparse; else None.

    argparse costs a tool call a few milliseconds; anything unusual (``--help``, an
    abbreviation, a bad value) returns None and :func:`register`'s parser answers it.
    """
    from types import SimpleNamespace

    args = SimpleNamespace(
        command="hook",
        format="claude",
        config=None,
        server=None,
        deadline=None,
        fail_closed=False,
        fail_open=False,
        defer=False,
        project=None,
        func=run,
    )
    rest = iter(argv)
    for arg in rest:
        name, eq, value = arg.partition("=")
        if name in _FLAGS and not eq:
            setattr(args, _FLAGS[name], True)
        elif name in _VALUED:
            value = value if eq else next(rest, "-")
            if value.startswith("-") and not (name == "--project" and value == ""):
                return None
            setattr(args, _VALUED[name], value)
        else:
            return None
    try:
        args.deadline = None if args.deadline is None else float(args.deadline)
    except ValueError:
        return None
    return args


def _deferred(decision: Decision, client: Client, defer: bool) -> Decision:
    """With ``--defer`` (Claude Code): a fail_closed hook's failure to judge becomes Claude Code's ``defer``, not a deny.

    A headless session then ends with ``stop_reason: "tool_deferred"`` and the
    call pending; resumed, Claude Code sends the same PreToolUse and guard
    judges it again. Only a failure is deferred (the event or config could not
    be read, the deadline came, every denying hook failed rather than judged):
    a rule's deny stays a deny.
    """
    if not defer or not client.defers or decision.decision != "deny":
        return decision
    denying = [h for h in decision.hooks if h.decision == "deny"]
    if "failure" in decision.details or (denying and all(h.error for h in denying)):
        decision.details["defer"] = True
    return decision


def _emit(rendered: Rendered, decision: Decision) -> int:
    if rendered.stdout:
        sys.stdout.write(rendered.stdout + "\n")
    for line in [*decision.warnings, rendered.stderr]:
        if line:
            sys.stderr.write((line if line is rendered.stderr else f"guard: warning: {line}") + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    code: int = rendered.exit_code
    return code


def _arm_watchdog(answer_by: float, fire: Callable[[], None]) -> threading.Timer:
    """A daemon thread that calls ``fire`` at ``answer_by`` unless cancelled."""
    import threading
    import time

    timer = threading.Timer(max(answer_by - time.monotonic(), 0.0) + 0.2, fire)
    timer.daemon = True
    timer.start()
    return timer


#: The variables clients set to the project folder for their hooks (the client sets it; a command the agent runs
#: cannot change a hook's environment). Gemini CLI also sets Claude Code's name, Cursor and Devin their own.
_PROJECT_VARS = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CURSOR_PROJECT_DIR", "DEVIN_PROJECT_DIR")


def _client_project(client: Client, env: Mapping[str, str]) -> str | None:
    """The project folder the client named for this hook (its own variable first), when it is an existing folder."""
    own = client.project_var
    for name in ([own] if own else []) + [v for v in _PROJECT_VARS if v != own]:
        folder = env.get(name)
        if folder and os.path.isabs(folder) and os.path.isdir(folder):
            return str(folder)
    return None


def _event_cwd(raw: bytes) -> str | None:
    import json

    try:
        cwd = json.loads(raw).get("cwd")
    except (ValueError, AttributeError, RecursionError):  # nested past the parser's depth: the gate refuses it
        return None
    return cwd if isinstance(cwd, str) and os.path.isabs(cwd) and os.path.isdir(cwd) else None


def _anchor(args: Arguments, client: Client, raw: bytes, env: Mapping[str, str]) -> str | None:
    """Move to the folder whose config this hook enforces; return the project guard was installed for (``--project``), or None.

    Clients start hooks in the session's current folder, which the agent moves (Claude Code's
    Bash keeps a ``cd``): searched from there, guard would find no config, or one the agent
    wrote, and enforce nothing. ``guard install`` anchors the hook (``--project``, for Claude
    Code's shared settings ``--project "$CLAUDE_PROJECT_DIR"``); an unanchored hook (user scope,
    a hand-written command) takes the client's project variable. Only the config's location
    moves: guard still enforces only a config the user trusted there.
    """
    if args.config is not None or from_env(CONFIG_ENV, env):
        return None  # a named config is found wherever the hook starts
    if args.project is not None:
        # empty: the settings named the client's variable and this client does not set it (another client reads them)
        project = args.project or _client_project(client, env) or _event_cwd(raw) or os.getcwd()
        project = os.path.abspath(project)
        if os.path.isdir(project):
            os.chdir(project)
        return project  # a missing folder is the gate's to report
    from guard.config.search import find_config

    folder = _client_project(client, env)
    if folder is None and client.starts_elsewhere and find_config() is None:
        folder = _event_cwd(raw)  # Copilot CLI 1.0.102 started user-level hooks in /tmp
    if folder is not None:
        os.chdir(folder)
    return None


def _in_session_checkout(client: Client, project: str, raw: bytes, env: Mapping[str, str]) -> tuple[str, str | None]:
    """The project whose config a hook anchored to ``project`` enforces in the session's checkout, and why it must block
    instead (None: it may decide): a hook file written for one checkout travels to others (committed, moved, copied),
    and only a client that names the session's folder where the agent cannot move it says which one this is."""
    named = client.session_folder
    if not named:
        return project, None
    from guard.adapters.checkout import for_session

    folder = _event_cwd(raw) if named == "cwd" else env.get(named)
    usable = folder is not None and os.path.isabs(folder) and os.path.isdir(folder)
    project, elsewhere = for_session(client.name, project, folder if usable else None)
    if os.path.isdir(project):
        os.chdir(project)
    return project, elsewhere


def exit_past_hung_threads(code: int) -> int:
    """Exit now if a hook left a thread running: the interpreter would wait for it at exit.

    Only the process's own entry calls this (:func:`guard.cli.main.main` with no argv): code that calls ``main``
    in-process (a test, an embedding program) gets the exit code back and keeps running.
    """
    threading = sys.modules.get("threading")
    if threading is None:
        return code
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join(0.05)
            if thread.is_alive():
                os._exit(code)
    return code


def run(args: Arguments) -> int:
    import time

    started = time.monotonic()
    from guard.adapters import adapter, event_of

    try:
        client = adapter(args.format)
    except UnknownName as exc:
        print(f"guard hook: {exc}", file=sys.stderr)
        return 2  # a misconfigured hook command must not let calls through
    from guard.core.logs import set_up as set_up_logging
    from guard.runtime.gate import answer_by

    env = os.environ
    raw = sys.stdin.buffer.read()
    project = _anchor(args, client, raw, env)
    project, elsewhere = _in_session_checkout(client, project, raw, env) if project is not None else (None, None)
    replaced = client.sandbox_replaced(project, env) if project is not None and client.sandbox_replaced else None
    gate = _gate(args, project, elsewhere, env, replaced)
    deadline = args.deadline or _float(from_env(DEADLINE_ENV, env)) or client.deadline
    by = answer_by(deadline, started)
    if by is not None:
        budget = by - started
        for spec in gate.registry.specs():
            if spec.timeout > budget:
                sys.stderr.write(
                    f"guard: warning: hook {spec.id} may run {spec.timeout:g}s but the client waits {deadline:g}s:"
                    f" guard answers at {budget:.1f}s with its failure_mode ({spec.failure_mode})\n"
                )
    if env.get("DEVIN_PROJECT_DIR"):  # Devin also runs .claude hooks: guard's own Devin entry may be the one to judge
        from guard.cli.reused_entry import devin_entry

        elsewhere = devin_entry(args.format, raw, env)
        if elsewhere:
            sys.stderr.write(
                f"guard: this .claude entry steps aside under Devin: guard's entry in {elsewhere} judges this call\n"
            )
            return 0

    def on_deadline() -> None:
        payload, _ = gate.current
        decision = gate.deadline_answer("the client's hook deadline was reached before guard answered")
        if len(raw) > LARGE_INPUT and decision.decision != "deny":
            from guard.core.decision import Decision

            reason = f"guard could not judge this {len(raw)}-byte call before the client's deadline; a call too large to judge is refused"
            decision = Decision(
                "deny", reason, details={"failure": "deadline", "error": "input too large to judge in time"}
            )
        decision = _deferred(decision, client, args.defer)
        os._exit(_emit(client.render(payload, decision), decision))

    watchdog: list[threading.Timer] = []

    def before_slow_path() -> None:
        set_up_logging()  # the engine's modules log through plain loggers
        if by is not None:
            watchdog.append(_arm_watchdog(by, on_deadline))

    if len(raw) > LARGE_INPUT:
        before_slow_path()  # reading and analysing it may take a while: the watchdog covers it from the start
    else:
        gate.before_slow_path = before_slow_path
    try:
        payload, decision = gate.decide(raw, fmt=args.format, answer_by=by)
    except Exception as exc:  # a bug in guard is never a silent allow
        payload, event = gate.current
        decision = gate.failure(f"internal error: {type(exc).__name__}: {exc}", event=event or None)
    gate.close()
    if client.missing_setup is not None and event_of(payload) == "session_start":
        note = client.missing_setup(project, env)
        if note:
            decision.warnings.append(note)
    rendered = client.render(payload, _deferred(decision, client, args.defer))
    for timer in watchdog:
        timer.cancel()
    code = _emit(rendered, decision)
    for timer in watchdog:
        timer.join(0.1)  # cancelled, it ends at once: a process left without threads ships its audit row from a fork
    gate.ship_audit()  # after the answer: a shipper sends the row on to the team's audit store
    return code


def _gate(
    args: Arguments, project: str | None, elsewhere: str | None, env: Mapping[str, str], replaced: str | None = None
) -> Gate:
    """``guard hook``'s gate: the config the user trusted for ``project``, and its deciders, which this builder makes."""
    from guard.runtime.deciders import FastPath, LocalEngine, OnFirstUse
    from guard.runtime.gate import ConfigFile, FailurePolicy, Gate

    local = LocalEngine()  # builds the engine when a call first gets past the fast path and the service
    return Gate(
        # the config the user trusted, never whatever the agent left on disk
        ConfigFile(args.config, pinned=True, project=project, elsewhere=elsewhere, sandbox_replaced=replaced),
        # a running guard serve (--server, GUARD_SERVER, server.url, a session's) answers what the fast path cannot
        deciders=(FastPath(local), OnFirstUse(lambda: _service(args.server)), local),
        policy=FailurePolicy(
            fail_closed=args.fail_closed or from_env(FAIL_CLOSED_ENV, env) == "1",
            fail_open_config=args.fail_open or from_env(FAIL_OPEN_ENV, env) == "1",
        ),
    )


def _service(server: str | None) -> Decider:
    """The warm service's decider, made when an event gets past the fast path (or a session starts):
    imported here, not at the top, so a cache hit never loads guard.server."""
    from guard.server.decider import ServiceDecider

    return ServiceDecider(server)


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:
        return None
