"""``guard check``: one judgement for a person, with everything that went into it.

Exit 0 allow, 1 deny, 2 ask, 3 error (a hook failed, no model configured, no config, bad input):
an allow that was not a judgement is never exit 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from guard.cli.terminal import DECISION_STYLES, console, say
from guard.config.pinning import trust_note
from guard.core.errors import PROVIDER_NOTE, EventError
from guard.core.events.names import CANONICAL_EVENTS, canonical_event, suggest_event
from guard.core.explanation import coverage, user_message
from guard.core.matching import matcher_report
from guard.core.spec import DEPTHS, HookSpec, SmartSettings
from guard.runtime.deciders import in_process
from guard.runtime.gate import ConfigFile, Gate
from guard.server.decider import ServiceDecider

if TYPE_CHECKING:
    from guard.core.decision import Decision, HookResult
    from guard.runtime.gate import Gate

__all__ = ["register", "run"]

_EXIT = {"allow": 0, "deny": 1, "ask": 2}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "check",
        help="judge one tool call and explain the decision",
        description="Judge one tool call against the config's hooks (or --rule) and explain the decision.",
        epilog="exit codes: 0 allow, 1 deny, 2 ask, 3 error (a hook failed, no model configured, bad input)",
    )
    p.add_argument("--tool", required=True, help="tool name, e.g. Bash")
    p.add_argument("--input", required=True, help='tool input as JSON, e.g. \'{"command": "rm -rf ~"}\'')
    p.add_argument("--event", default="PreToolUse", help="event name (default PreToolUse)")
    p.add_argument("--rule", help="judge against this plain-English rule instead of the config's hooks")
    p.add_argument(
        "--depth",
        choices=DEPTHS,
        default="auto",
        help="with --rule: which tier judges it (auto: quick, then thorough when unsure; default auto)",
    )
    p.add_argument("--model", help="LiteLLM model id for this check (both tiers)")
    p.add_argument("--config", help="guard.yaml or settings.json")
    p.add_argument("--json", action="store_true", help="print the canonical decision JSON")
    p.set_defaults(func=run, error_exit_code=3)


def _payload(args: argparse.Namespace) -> dict[str, Any]:
    try:
        tool_input = json.loads(args.input)
    except json.JSONDecodeError as exc:
        raise EventError(f"--input is not valid JSON: {exc.msg} at column {exc.colno}") from exc
    if not isinstance(tool_input, dict):
        raise EventError("--input must be a JSON object")
    return {"hook_event_name": args.event, "tool_name": args.tool, "tool_input": tool_input, "cwd": os.getcwd()}


def _error_note(hook: HookResult, decision: Decision) -> str:
    """A hook's error, or where it is already shown: each problem is said once (the no-model message was said three times).

    A deny reason carries the error without the provider's own words; those are shown here, once.
    """
    error, reason = hook.error or "", decision.reason or ""
    if error in reason:
        return "error: see reason"
    summary = reason.removeprefix(f"hook {hook.id} failed and is fail_closed: ").removesuffix(PROVIDER_NOTE)
    if summary and summary != reason and error.startswith(summary):
        return f"provider said: {error[len(summary) :].lstrip(': ')}"
    if any(error in warning for warning in decision.warnings):  # a fail_open hook's failure is a warning, on stderr
        return "error: see warning"
    return f"error={hook.error}"


def _print_human(decision: Decision, tool: str | None = None) -> None:
    out = console()
    say(
        out,
        ("decision: ", "bold"),
        (decision.decision, DECISION_STYLES[decision.decision]),
        ("" if decision.judged else " (NOT JUDGED: see warnings)", "bold yellow"),
    )
    if decision.reason:
        say(out, ("reason:   ", "bold"), (decision.reason, None))

    if decision.decided_by:  # who decided and whether it is final; the reason above is not repeated
        say(out, ("decided:  ", "bold"), (user_message(decision, tool) or "", None))
    if decision.updated_input is not None:
        say(out, ("rewrite:  ", "bold"), (json.dumps(decision.updated_input), None))
    for h in decision.hooks:
        bits = [f"{h.id} ({h.type}{', shadow: never enforced' if h.shadow else ''})", f"→ {h.decision or 'abstain'}"]
        if h.tier:
            bits.append(f"tier={h.tier}")
        if h.model:
            bits.append(f"model={h.model}")
        if h.confidence is not None:
            bits.append(f"confidence={h.confidence:.2f}")
        if h.latency_ms is not None:
            bits.append(f"latency={h.latency_ms:.0f}ms")
        bits.append(f"cost={f'${h.cost_usd:.6f}' if h.cost_usd is not None else 'n/a'}")
        bits.append("cache=hit" if h.cached else "cache=miss")
        if h.error:
            bits.append(_error_note(h, decision))
        say(out, ("  " + "  ".join(bits), DECISION_STYLES.get(h.decision or "") if h.error is None else "red"))
        for note in coverage(h.details):
            say(out, (f"    {note}", "dim"))


def _trust_note(config: str | None) -> None:
    """Say when what was judged here is not what ``guard hook`` enforces (a changed or never trusted config)."""
    note = trust_note(config)
    if note:
        print(f"guard check: note: {note}", file=sys.stderr)


def _matcher_notes(gate: Gate) -> None:
    """Name the config's hooks whose matcher matches no known tool: they would never run in any client."""

    for problem in matcher_report(gate.registry.specs()):
        print(f"guard check: warning: {problem}", file=sys.stderr)


def _gate(config: str | None, specs: list[HookSpec] | None) -> Gate:
    """``guard check``'s gate: the config on disk (the user's own command), or the ``--rule`` given; a running warm
    service answers what the fast path cannot, and none is left behind."""
    fast_path, local = in_process()
    deciders = (fast_path, ServiceDecider(start_service=False), local)
    return Gate(ConfigFile(config), deciders=deciders, specs=specs)


def _event(name: str) -> str:
    """``--event`` as canonical; a malformed name is bad input, not a traceback."""
    try:
        return canonical_event(name)
    except ValueError as exc:
        raise EventError(f"--event: {exc}") from exc


def _known_event(name: str, gate: Gate) -> None:
    """Refuse an ``--event`` that no config could hook: a misspelt one matched nothing and printed a bare allow."""
    event = _event(name)
    if event in CANONICAL_EVENTS or any(spec.event == event for spec in gate.registry.specs()):
        return
    meant = suggest_event(name)
    raise EventError(
        f"--event {name!r} is not an event guard knows, nor a custom event the config's hooks are under"
        + (
            f": did you mean {meant}?"
            if meant
            else " (PreToolUse, PostToolUse, UserPromptSubmit, Stop … docs/configuration.md)"
        )
    )


def run(args: argparse.Namespace) -> int:
    payload = _payload(args)
    specs: list[HookSpec] | None = None
    if args.rule:
        specs = [
            HookSpec(
                id="cli-rule",
                kind="smart",
                event=_event(args.event),
                timeout=60.0,
                source="library",
                options=SmartSettings(rule=args.rule, depth=args.depth),
            )
        ]
    gate = _gate(args.config, specs)
    if gate.config_error is not None:
        raise gate.config_error
    _known_event(args.event, gate)
    if specs is None:
        _trust_note(args.config)
        _matcher_notes(gate)
    if args.model:  # a smart hook's own model wins over both tiers, config and environment alike
        gate.use_model(args.model)
    _, decision = gate.decide(payload)
    gate.close()
    if args.json:
        print(json.dumps(decision.to_dict(), indent=2))
    else:
        _print_human(decision, args.tool)
    if args.json:  # stdout is for programs: the person reads what failed here
        for h in decision.hooks:
            if h.error and not any(h.error in warning for warning in decision.warnings):
                print(f"guard check: hook {h.id} failed: {h.error}", file=sys.stderr)
    for warning in decision.warnings:
        print(f"guard check: warning: {warning}", file=sys.stderr)
    if not decision.hooks:  # a bare allow is what the hook answers too, but a person reads it as "judged and allowed"
        print(
            f"guard check: note: no hook runs for {args.tool} at {args.event}, so nothing judged this call "
            "(a hook's matcher names the tools it runs for: docs/actions.md)",
            file=sys.stderr,
        )
    if not decision.judged or any(h.error for h in decision.hooks):
        return 3
    return _EXIT[decision.decision]
