"""``guard hook``: one event JSON on stdin → the client's hook output on stdout.

Exit codes: 0 with the client's JSON (or nothing) on stdout. A malformed event
exits 1 with the reason on stderr: every client reads "other" exit codes as a
non-blocking error, so a broken event never blocks the agent silently — unless
``--fail-closed`` (or ``GUARD_FAIL_CLOSED=1``) asks for exit 2, which the
clients read as "block".
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

__all__ = ["register", "run"]


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("hook", help="judge one hook event from stdin (for settings.json)")
    p.add_argument("--format", default="claude", help="client protocol: claude, devin, codex, gemini, copilot")
    p.add_argument("--config", help="guard.yaml or settings.json (default: $GUARD_CONFIG, ./guard.yaml, ./.guard/guard.yaml)")
    p.add_argument("--server", help="send events that need a hook run to `guard serve` at this URL, or 'auto' to start one (default: $GUARD_SERVER)")
    p.add_argument("--fail-closed", action="store_true", help="exit 2 (block) when the event cannot be read")
    p.add_argument("--deadline", type=float, metavar="SECONDS", help="the client's timeout for this hook: answer before it (guard install writes it)")
    p.set_defaults(func=run)


def _read_event(fmt: str) -> dict[str, Any]:
    from guard.adapters import adapter
    from guard.errors import EventError

    raw = sys.stdin.read()
    if not raw.strip():
        raise EventError("no event on stdin (expected one JSON object)")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise EventError(f"stdin is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    if not isinstance(data, dict):
        raise EventError(f"stdin must hold a JSON object, got {type(data).__name__}")
    payload: dict[str, Any] = adapter(fmt).normalize(data, os.environ)
    name = payload.get("hook_event_name")
    if not isinstance(name, str) or not name:
        raise EventError("field 'hook_event_name' is missing or not a string")
    from guard.events.names import canonical_event

    try:
        canonical_event(name)
    except ValueError as exc:
        raise EventError(f"field 'hook_event_name': {exc}") from exc
    return payload


def _decide(payload: dict[str, Any], loaded: Any, registry: Any, args: argparse.Namespace) -> Any:
    """No-match and cache-hit events locally; then the service if one is configured; else the engine."""
    from guard.fastpath import decide_fast

    decision = decide_fast(payload, loaded, registry)
    if decision is not None:
        return decision
    server = args.server or os.environ.get("GUARD_SERVER") or loaded.settings.server_url
    note = None
    if server:
        from guard.server import autostart
        from guard.server.client import send_event

        url = autostart.running_url(loaded) if server == "auto" else server
        timeout = max((s.timeout for s in loaded.specs), default=10.0) + 5
        reply = send_event(url, payload, timeout=timeout) if url else None
        if reply is not None:
            from guard.decision import Decision

            served = Decision.from_dict(reply)
            served.details["server"] = url
            return served
        if server == "auto":
            started = autostart.start(loaded)
            note = "started guard serve in the background for later calls; judged in-process" if started else "guard serve is starting; judged in-process"
        else:
            note = f"guard serve at {server} unreachable; judged in-process"
    from guard.engine import Engine

    decision = Engine(loaded.settings, registry).decide_sync(payload)
    if note:
        decision.details["server_fallback"] = note
    return decision


def run(args: argparse.Namespace) -> int:
    from guard.adapters import adapter
    from guard.errors import EventError, GuardError

    fail_closed = args.fail_closed or os.environ.get("GUARD_FAIL_CLOSED") == "1"
    try:
        module = adapter(args.format)
    except ValueError as exc:
        print(f"guard hook: {exc}", file=sys.stderr)
        return 1
    payload: dict[str, Any] = {}
    registry = None
    try:
        payload = _read_event(args.format)
        from guard.config import load_config
        from guard.registry import Registry, default_registry

        loaded = load_config(args.config)
        registry = Registry([*loaded.specs, *default_registry.specs()])
        decision = _decide(payload, loaded, registry, args)
    except EventError as exc:
        print(f"guard hook: malformed event: {exc}", file=sys.stderr)
        return 2 if fail_closed else 1
    except GuardError as exc:
        print(f"guard hook: {exc}", file=sys.stderr)
        return 2 if fail_closed else 1
    except Exception as exc:  # a bug in guard must not wave through a call a fail_closed hook guards
        print(f"guard hook: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        guarded = registry is not None and any(
            s.failure_mode == "fail_closed" for s in registry.matching(payload["hook_event_name"], payload.get("tool_name"))
        )
        if not (guarded or fail_closed):
            return 1
        from guard.decision import Decision

        decision = Decision("deny", f"guard failed ({type(exc).__name__}) and this call is guarded fail_closed")
    rendered = module.render(payload, decision)
    if rendered.stdout:
        sys.stdout.write(rendered.stdout + "\n")
    if rendered.stderr:
        sys.stderr.write(rendered.stderr + "\n")
    return rendered.exit_code
