"""``guard doctor``'s checks: would guard actually judge the next tool call here?

Each check turns one way guard silently stops guarding into a finding that says
what is wrong and what to do: a config that does not load, a smart hook with no
model or an unreachable one, a client whose hook command cannot start guard (gone,
relative to a PATH the client may not have) or kills it before its slowest hook
answers, and which ``guard`` the PATH finds.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from guard.adapters import claude_local
from guard.adapters.checkout import in_main_checkout
from guard.adapters.installers import installable
from guard.audit import chain as audit_chain
from guard.audit import open_audit
from guard.audit import recovery as audit_recovery
from guard.config.loading import load_config
from guard.config.own_hook import LAUNCHER_PROGRAM, parse_guard_hook
from guard.config.pinning import load_trusted
from guard.config.search import find_config
from guard.core.errors import GuardError, ModelNotConfigured
from guard.core.extras import DISTRIBUTION
from guard.core.kinds import judged
from guard.core.matching import matcher_report
from guard.core.settings import CLAUDE_BIN_ENV, LoadedConfig, from_env
from guard.core.spec import SmartSettings
from guard.judge.keys import tiers_for
from guard.judge.model import RetryPolicy, complete, load_client
from guard.judge.providers import ModelUnusable, model_origin, preflight
from guard.judge.tiers import models_for
from guard.sandbox.claude import denied
from guard.sandbox.levels import SANDBOXES, level
from guard.sandbox.paths import protected_paths
from guard.sandbox.probe import probe
from guard.setup import team_hook
from guard.setup.codex_trust import untrusted
from guard.setup.curl_client import SCRIPT, hook_budget
from guard.setup.finding import Finding, Status
from guard.setup.install import (
    InstalledHook,
    guard_program,
    guard_script,
    installed_hooks,
    needed_timeout,
    plugin_guard,
    plugin_scopes,
)
from guard.setup.team_checks import audit_store_findings, org_findings
from guard.setup.team_hook import BLOCKING

__all__ = ["Finding", "diagnose"]

#: Seconds a hook command gets to answer ``--version``.
VERSION_TIMEOUT = 30.0


def diagnose(config: str | None, *, project_dir: Path, home: Path, model_timeout: float) -> Iterator[Finding]:
    """Every check, in the order a user fixes things: config, trust, models, installed hooks, PATH."""
    found = list(_installed(project_dir, home))
    written = [h for h in found if isinstance(h, InstalledHook)]
    hooks, launched = _launched(written, project_dir, home)
    installed_here = any(h.scope == "project" for h in written)

    yield from org_findings()
    loaded, finding = _config(config, installed_here=installed_here)
    yield finding
    for problem in matcher_report(loaded.specs if loaded is not None else []):
        yield Finding(
            "warn", "matcher", problem, "name the tool as the client does, or use a canonical action (docs/actions.md)"
        )
    if loaded is not None and loaded.sources:
        yield _trusted(config, installed_here=installed_here)
    if loaded is not None:
        yield from _shadow(loaded)
        yield from _audit(loaded)
        yield from audit_store_findings(loaded)
        yield from _models(loaded, model_timeout)
    yield from (f for f in found if isinstance(f, Finding))
    yield from launched
    yield from _when_hooks_fail(hooks)
    yield from _codex_trusted(hooks, project_dir, home)
    yield from _claude_uncommitted(written, project_dir)
    plugins = plugin_scopes(project_dir=project_dir, home=home)
    yield from _plugins(plugins, home)
    yield from _hook_commands(hooks, loaded, unreadable=len(found) > len(written) or bool(plugins) or bool(launched))
    yield from _sandboxes(sorted({h.client for h in hooks}), loaded or LoadedConfig(), project_dir, home)
    yield from _curl_clients(hooks, project_dir, home)
    yield from _path(hooks)


def _config(path: str | None, *, installed_here: bool) -> tuple[LoadedConfig | None, Finding]:
    found = find_config(path)
    if found is None:
        status: Status = "fail" if installed_here else "warn"
        why = "guard is installed in this project and" if installed_here else "guard"
        return LoadedConfig(), Finding(
            status,
            "config",
            f"no guard.yaml here (nor .guard/guard.yaml or $GUARD_CONFIG): {why} has no rules, every call is allowed",
            "write guard.yaml in the project, or point GUARD_CONFIG at one",
        )
    try:
        loaded = load_config(str(found), use_snapshot=False)
    except GuardError as exc:
        return None, Finding(
            "fail", "config", f"does not load: {exc}", "fix that key: until then the calls it guards are blocked"
        )
    return loaded, Finding("ok", "config", loaded.summary())


def _shadow(loaded: LoadedConfig) -> Iterator[Finding]:
    """The rules in shadow mode: judged and logged, never enforced (a deliberate state, so ok, but one to be told)."""
    shadow = [spec for spec in loaded.specs if spec.shadow]
    if shadow:
        names = ", ".join(f"{spec.id} ({spec.event}{f', {spec.matcher}' if spec.matcher else ''})" for spec in shadow)
        yield Finding(
            "ok",
            "shadow",
            f"{len(shadow)} rule{'s' if len(shadow) > 1 else ''} in shadow mode, judged and logged but never enforced: {names}."
            " guard view's Rules page shows what each would have denied; to enforce one, remove its mode: shadow and run guard trust",
        )


@dataclass
class _Model:
    """One model id smart hooks call: the tiers it serves, as written and where, and the first hook that needs it."""

    tiers: set[str]
    written: str
    origin: str


def _trusted(path: str | None, *, installed_here: bool) -> Finding:
    """Whether ``guard hook`` enforces the config on disk, the copy you trusted before it changed, or nothing (never trusted)."""

    try:
        pinned = load_trusted(path)
    except GuardError as exc:
        return Finding(
            "fail",
            "trust",
            f"the trusted copy guard hook enforces does not load: {exc}",
            "review the config and run guard trust",
        )
    if pinned.status == "untrusted":
        status: Status = "fail" if installed_here else "warn"
        return Finding(
            status,
            "trust",
            "the config was never trusted: guard hook blocks every tool call until you trust it",
            "review it and run guard trust (in your terminal)",
        )
    if pinned.status == "changed":
        return Finding(
            "warn", "trust", pinned.notes[0], "guard trust shows the change and asks before guard hook enforces it"
        )
    return Finding("ok", "trust", "guard hook enforces this config as you trusted it")


def _audit(loaded: LoadedConfig) -> Iterator[Finding]:
    """Is the audit log the whole record: readable, its sealed chain intact, no failed writes, nothing set aside?"""

    settings = loaded.settings
    if settings.audit_path is None:
        yield Finding("ok", "audit log", "off (audit.enabled: false)")
        return
    log = open_audit(settings)
    try:
        gone = None if log.path.exists() else audit_chain.missing_log(log.path)
        if gone is not None:
            yield Finding(
                "fail",
                "audit log",
                gone,
                f"if you moved it yourself, also remove {audit_chain.record_path(log.path)}; "
                "else the decisions logged so far are gone: keep the client's sandbox on (guard install) and see docs/team.md",
            )
        elif not log.path.exists():
            yield Finding("ok", "audit log", f"no decisions logged yet in {log.path}")
        else:
            report = log.verify()
            if report.intact:
                older = f"; {report.unchained} older rows unchained" if report.unchained else ""
                yield Finding("ok", "audit log", f"{log.path}: sealed chain intact ({report.chained} rows{older})")
            else:
                yield Finding(
                    "fail",
                    "audit log",
                    f"{log.path}: the sealed chain is broken: {report.problems[0]}"
                    + (f" (and {len(report.problems) - 1} more)" if len(report.problems) > 1 else ""),
                    "guard log verify lists every problem: rows changed or removed outside guard, or the whole file replaced. Keep the "
                    "client's sandbox on (guard install) so the agent cannot reach the log",
                )
    except GuardError as exc:
        yield Finding("fail", "audit log", str(exc), "move the file aside, or let the next guard hook decision do it")
    finally:
        log.close()
    failed = audit_recovery.failures(log.path)
    if failed:
        yield Finding(
            "warn",
            "audit log",
            f"{len(failed)} audit write{'s' if len(failed) > 1 else ''} failed, the last: {failed[-1]['error']}: "
            "those decisions are not in the log",
            "check the disk and the file's permissions",
        )
    for aside in audit_recovery.set_aside_files(log.path):
        yield Finding(
            "warn", "audit log", f"an unreadable audit log was set aside as {aside}", "review it, then delete it"
        )


def _models(loaded: LoadedConfig, timeout: float) -> Iterator[Finding]:
    """Each model a hook of a judged kind (smart, a plugin's) may call: checked for a provider and a key, then asked
    one tiny question."""

    settings = loaded.settings
    needed: dict[str, _Model] = {}
    missing: set[str] = set()  # tiers a hook needs and has no model for: said once per tier, never also "not needed"
    for judged_spec in (s for s in loaded.specs if judged(s.kind)):
        # a plugin's kind a model judges has no smart settings: it is looked at as a smart hook's defaults (the tiers' models)
        smart = judged_spec.options if isinstance(judged_spec.options, SmartSettings) else SmartSettings()
        spec = judged_spec.replace(options=smart)
        try:
            models = models_for(spec, settings)
        except ModelNotConfigured as exc:
            tiers = set(tiers_for(smart.depth)) - missing
            missing |= tiers
            if tiers:
                yield Finding("fail", "model", str(exc), "set the model; until then this hook cannot judge anything")
            continue
        for tier, model in models.items():
            written = smart.model or settings.model_for(tier) or model
            needed.setdefault(model, _Model(set(), written, model_origin(spec, settings, tier))).tiers.add(tier)
    for tier in ("quick", "thorough"):
        if tier not in missing and not any(tier in m.tiers for m in needed.values()) and not settings.model_for(tier):
            yield Finding("ok", "model", f"{tier}: no model configured (no smart hook needs one)")
    api_base = settings.effective_api_base()
    for model, use in sorted(needed.items()):
        label = _label(model, use, api_base)
        try:
            preflight(model, api_base, use.origin)
        except ModelUnusable as exc:  # the message says what to set
            yield Finding("fail", "model", f"{label}: {_about(model, str(exc))}")
            continue
        problem = _ask(model, api_base, timeout)
        if problem is None:
            yield Finding("ok", "model", f"{label} answers")
        else:
            yield Finding(
                "fail",
                "model",
                f"{label} does not answer: {_about(model, problem)}",
                "check the model id, the provider key (e.g. OPENAI_API_KEY) and GUARD_API_BASE / models.api_base",
            )


def _label(model: str, use: _Model, api_base: str | None) -> str:
    """The model as the user wrote it and where (``quick: stub (GUARD_MODEL_QUICK; sent as openai/stub to …)``)."""
    where = [use.origin]
    if api_base:
        where.append(f"sent as {model} to {api_base}" if model != use.written else f"at {api_base}")
    return f"{'/'.join(sorted(use.tiers))}: {use.written} ({'; '.join(where)})"


def _about(model: str, message: str) -> str:
    """A judge error without its leading "model X" (the finding names the model already)."""
    for lead in (f"model {model}: ", f"model {model} "):
        if message.startswith(lead):
            return message[len(lead) :]
    return message


def _ask(model: str, api_base: str | None, timeout: float) -> str | None:
    """One tiny completion within ``timeout`` seconds (after the client library loads); None when it answered, else why not."""

    schema = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    }
    messages = [{"role": "user", "content": 'Reply with the JSON {"ok": true} and nothing else.'}]

    async def ask() -> None:
        await load_client([model], api_base)  # seconds of imports that must not eat the model's time
        await asyncio.wait_for(
            complete(
                model,
                messages,
                schema=schema,
                max_tokens=16,
                temperature=0.0,
                deadline=time.monotonic() + timeout,
                api_base=api_base,
                policy=RetryPolicy(attempts=1),
            ),
            timeout + 1,
        )

    try:
        asyncio.run(ask())
    except Exception as exc:  # noqa: BLE001 - every failure is the finding
        return str(exc) or type(exc).__name__
    return None


def _installed(project_dir: Path, home: Path) -> Iterator[InstalledHook | Finding]:
    main = in_main_checkout(str(project_dir))
    for client, profile in installable().items():  # guard's clients and the installed plugins'
        for scope in ("project", "user", *(("policy",) if profile.policy_file is not None else ())):
            # Codex (0.171) runs a git worktree's sessions with the main checkout's project hooks, never the worktree's
            folder = Path(main) if main is not None and client == "codex" and scope == "project" else project_dir
            try:
                hooks = installed_hooks(client, scope, project_dir=folder, home=home)
                if hooks and folder != project_dir:
                    yield Finding(
                        "ok",
                        f"{client} worktree",
                        f"this is a git worktree: Codex runs the main checkout's hooks here ({hooks[0].path}), and "
                        "guard's hook there enforces this worktree's own trusted config",
                    )
                yield from hooks
            except GuardError as exc:
                yield Finding("fail", f"{client} hooks", f"cannot read the settings: {exc}", "fix the file's JSON")


def _launched(hooks: list[InstalledHook], project_dir: Path, home: Path) -> tuple[list[InstalledHook], list[Finding]]:
    """The hooks with each shared-settings launcher replaced by what it runs for this user, and what to know about those.

    The launcher in a project's ``.claude/settings.json`` runs ``$GUARD_HOOK`` from this
    user's own settings, else a ``guard`` on PATH, else blocks every tool call saying what
    to install (:mod:`guard.setup.team_hook`): a teammate's clone is told which.
    """

    resolved: list[InstalledHook] = []
    findings: list[Finding] = []
    personal, on_path = claude_local.personal(project_dir=project_dir, home=home), shutil.which("guard")
    reported: set[Path] = set()
    for hook in hooks:
        parsed = parse_guard_hook(hook.command)
        if parsed is None or parsed.program != (LAUNCHER_PROGRAM,):
            resolved.append(hook)
            continue
        command = team_hook.resolve(hook.command, project_dir=project_dir, home=home)
        if command is None and on_path is not None:
            command = f"{shlex.quote(on_path)} hook --deadline {hook.timeout_s or 0:g} {team_hook.launcher_options(hook.command)}"
        if command is not None:
            resolved.append(replace(hook, command=command))
        if personal is not None or hook.path in reported:
            continue
        reported.add(hook.path)
        if on_path is None:
            findings.append(
                Finding(
                    "fail",
                    "claude hook",
                    f"{hook.path} runs guard on every tool call in this project, but guard is not "
                    f"installed for you here (no {team_hook.VARIABLE} in your settings, no guard on PATH): Claude Code "
                    "blocks every tool call and prompt with a message saying to install it",
                    f"pip install {DISTRIBUTION}, then guard install claude in this project (docs/team.md)",
                )
            )
        else:
            findings.append(
                Finding(
                    "warn",
                    "claude hook",
                    f"{hook.path} runs the guard on PATH ({on_path}) for you: guard install claude "
                    "was not run here, so this machine's hook program and sandbox are not set up",
                    "guard install claude in this project (docs/team.md)",
                )
            )
    return resolved, findings


def _codex_trusted(hooks: list[InstalledHook], project_dir: Path, home: Path) -> Iterator[Finding]:
    """Whether Codex reads the project's ``.codex/`` where guard's project hooks are: only in a project trusted in Codex."""
    if not any(h.client == "codex" and h.scope == "project" for h in hooks):
        return
    problem = untrusted(project_dir, home)
    if problem is not None:
        yield Finding(
            "warn", "codex trust", problem, "start codex in this project and trust it (docs/clients.md#codex-cli)"
        )


def _claude_uncommitted(hooks: list[InstalledHook], project_dir: Path) -> Iterator[Finding]:
    """Whether the project's ``.claude/settings.json`` with guard's hooks is in git: Claude Code (2.1.332) starts a
    session in a worktree (``claude --worktree``, EnterWorktree, an agent's ``isolation: "worktree"``, ``git worktree
    add``) with that worktree's own copy, so where it is not committed such a session runs no hook at all."""
    shared = project_dir / ".claude" / "settings.json"
    if not any(h.client == "claude" and h.scope == "project" and h.path == shared for h in hooks):
        return
    try:
        listed = subprocess.run(
            ["git", "ls-tree", "--name-only", "HEAD", "--", ".claude/settings.json"],  # a worktree starts from a commit
            cwd=project_dir,
            capture_output=True,
            timeout=VERSION_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return  # no git: no worktree either
    if listed.returncode == 0 and not listed.stdout.strip():
        yield Finding(
            "warn",
            "claude worktree",
            f"{shared} (guard's hooks) is not in the last commit: a git worktree of this project (claude --worktree, the "
            "EnterWorktree tool, a subagent's isolated worktree, git worktree add) or a clone has none, and Claude Code "
            "runs a session started there with no guard hook at all",
            "commit .claude/settings.json (your own paths stay in the ignored settings.local.json; docs/team.md)",
        )


#: The first Claude Code release that honours ``onFailure: "block"`` on command hooks.
ON_FAILURE_SINCE = (2, 1, 295)


def _when_hooks_fail(hooks: list[InstalledHook]) -> Iterator[Finding]:
    """Per installed client: what happens to a call when guard's hook program is missing, crashes or times out."""
    profiles = installable()
    for client in sorted({h.client for h in hooks}):
        mine = [h for h in hooks if h.client == client]
        topic, behaviour = f"{client} when guard fails", profiles[client].when_hook_fails
        if client == "claude":
            yield from _claude_on_failure(topic, mine)
        elif profiles[client].fail_closed_events:
            yield Finding(
                "ok", topic, f"if guard's hook program is missing, crashes or times out, {client} {behaviour}"
            )
        else:
            yield Finding(
                "warn",
                topic,
                f"if guard's hook program is missing, crashes or times out, {client} {behaviour}",
                "keep guard's program where the hook names it (guard doctor checks it); prefer a client that can fail closed",
            )


def _claude_on_failure(topic: str, hooks: list[InstalledHook]) -> Iterator[Finding]:
    open_ = sorted({f"{h.path} ({h.event})" for h in hooks if h.event in BLOCKING and h.on_failure != "block"})
    if open_:
        yield Finding(
            "warn",
            topic,
            f'{", ".join(open_)}: no onFailure: "block", so a guard hook that cannot start, crashes or '
            "times out lets the call run",
            'guard install claude (it writes onFailure: "block")',
        )
    version = _claude_version()
    if version is None:
        yield Finding(
            "ok",
            topic,
            'a guard hook that cannot start, crashes or times out blocks the call (onFailure: "block"); the claude '
            "CLI is not on PATH here, so its version (2.1.295 or later needed) was not checked",
        )
    elif version < ON_FAILURE_SINCE:
        yield Finding(
            "fail",
            topic,
            f"Claude Code {'.'.join(map(str, version))} is older than 2.1.295 and ignores onFailure: a guard hook it "
            "kills at its timeout lets the call run, and so does a guard run directly (user scope) that cannot start or crashes",
            "update Claude Code (npm install -g @anthropic-ai/claude-code)",
        )
    elif not open_:
        yield Finding(
            "ok",
            topic,
            f'a guard hook that cannot start, crashes or times out blocks the call (onFailure: "block", '
            f"Claude Code {'.'.join(map(str, version))})",
        )


def _claude_version() -> tuple[int, ...] | None:
    """The installed Claude Code's version (``$GUARD_CLAUDE_BIN``, else ``claude`` on PATH), or None when it cannot be told."""

    claude = from_env(CLAUDE_BIN_ENV) or shutil.which("claude")
    if claude is None:
        return None
    try:
        ran = subprocess.run(
            [claude, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", ran.stdout)
    return tuple(int(part) for part in found.groups()) if found else None


def _plugins(enabled: list[tuple[str, Path]], home: Path) -> Iterator[Finding]:
    """Each settings file enabling guard's Claude Code plugin: does its hook find a guard to run?"""
    program = plugin_guard(os.environ, home) if enabled else None
    for scope, path in enabled:
        topic = f"claude plugin ({scope})"
        if program is None:
            yield Finding(
                "fail",
                topic,
                f"{path} enables guard's plugin, but its hook finds no guard ($GUARD_BIN, PATH, "
                "~/.local/bin/guard): it blocks every tool call",
                f"install guard on PATH (pipx install {DISTRIBUTION}) or set GUARD_BIN",
            )
        else:
            yield Finding("ok", topic, f"{path} enables guard's plugin; its hook runs {program}")


def _hook_commands(hooks: list[InstalledHook], loaded: LoadedConfig | None, *, unreadable: bool) -> Iterator[Finding]:
    """Per distinct installed command: does it start guard, from an absolute path, with time to answer?"""
    if not hooks and not unreadable:
        yield Finding(
            "warn",
            "clients",
            "guard is not installed in any client here or in your home directory",
            "guard install claude (or devin, codex, gemini, cursor)",
        )
    timeouts = [s.timeout for s in loaded.specs] if loaded else []
    groups: dict[tuple[str, Path, str, float | None], list[str]] = {}
    for hook in hooks:
        groups.setdefault((hook.client, hook.path, hook.command, hook.timeout_s), []).append(hook.event)
    for (client, path, command, timeout_s), events in groups.items():
        parsed = parse_guard_hook(command)
        assert parsed is not None  # installed_hooks keeps only guard's own commands
        topic, where = f"{client} hook", f"{path} ({', '.join(events)})"
        yield from _program(topic, where, list(parsed.program), client)
        deadline = parsed.options.get("--deadline")
        if SCRIPT.name in command:  # --client curl: curl's share of the timeout comes first
            deadline = hook_budget(command, deadline)
        yield from _timeouts(topic, where, deadline, timeout_s, timeouts, client)
    yield from _fail_open_handlers(hooks)


def _fail_open_handlers(hooks: list[InstalledHook]) -> Iterator[Finding]:
    """A handler the client runs fail-open where guard needs it closed (Cursor's ``failClosed``)."""
    profiles = installable()
    for hook in hooks:
        if hook.event in profiles[hook.client].fail_closed_events and not hook.fail_closed:
            yield Finding(
                "warn",
                f"{hook.client} hook",
                f'{hook.path} ({hook.event}): no "failClosed": true, so a guard '
                "the client cannot start, or kills, lets the call through unjudged",
                f"guard install {hook.client}",
            )


def _sandboxes(clients: list[str], loaded: LoadedConfig, project_dir: Path, home: Path) -> Iterator[Finding]:
    """Each client's protection level: sandboxed (its sandbox, tried here, keeps guard's files out of reach) or unsandboxed."""

    paths = protected_paths(loaded)
    for client in clients:
        topic = f"{client} sandbox"
        found = level(client, paths, project_dir=project_dir, home=home)
        if not found.sandboxed:
            fix = f"guard install {client} (it configures the sandbox)" if client in SANDBOXES else None
            yield Finding(
                "warn",
                topic,
                f"unsandboxed: guard refuses the calls it recognises, nothing more holds: {'; '.join(found.reasons)}",
                fix,
            )
            continue
        held, what = probe(client, paths, project_dir=project_dir)
        if held is False:
            yield Finding(
                "fail",
                topic,
                f"the settings ask for a sandbox, but it does not hold here: {what}",
                "Claude Code's sandbox needs user namespaces (bubblewrap) and socat; in a container, run it with them allowed",
            )
        else:
            checked = f"checked: {what}" if held else f"its settings hold guard's files; {what}"
            yield Finding(
                "ok",
                topic,
                f"sandboxed: guard's files are outside what the agent may write, its secret outside what it may read ({checked})",
            )


def _curl_clients(hooks: list[InstalledHook], project_dir: Path, home: Path) -> Iterator[Finding]:
    """``--client curl``: which hook program Claude Code runs, and whether its socket and credential are in place and out of reach."""

    curl = {(h.path, h.command): h for h in hooks if h.client == "claude" and SCRIPT.name in h.command}
    if any(h.client == "claude" for h in hooks) and not curl:
        yield Finding(
            "ok",
            "claude client",
            "guard hook (a Python process per call; guard install claude --client curl asks the warm service with curl)",
        )
    reinstall = "guard install claude --client curl (from the project), or without --client curl"
    for path, command in sorted(curl):
        sock, credential = (Path(word) for word in shlex.split(command)[2:4])
        where = f"{path}: curl over {sock}"
        if shutil.which("curl") is None:
            yield Finding(
                "warn",
                "claude client",
                f"{where}, but curl is not on PATH here: every call runs guard hook",
                "install curl",
            )
        elif sock.is_socket():
            yield Finding("ok", "claude client", f"{where} (a service listens)")
        else:
            yield Finding(
                "ok",
                "claude client",
                f"{where}; no service there now, so each call runs guard hook (a session's start launches it "
                "when the config has smart hooks)",
            )
        try:
            private = credential.stat().st_mode & 0o077 == 0
        except OSError:
            yield Finding(
                "warn", "claude client", f"no credential file {credential}: every call runs guard hook", reinstall
            )
            continue
        if not private:
            yield Finding(
                "fail",
                "claude client",
                f"{credential} is readable by other users: they could post events to guard serve",
                f"chmod 600 {credential}",
            )
        if not denied(credential, reads=True, project_dir=project_dir, home=home):
            yield Finding(
                "fail",
                "claude client",
                f"the sandbox settings do not deny the agent reads of {credential}: it could post forged events",
                reinstall,
            )
        if not denied(sock.parent, reads=False, project_dir=project_dir, home=home):
            yield Finding(
                "fail",
                "claude client",
                f"the sandbox settings do not deny the agent writes to {sock.parent}: something of its own "
                "could answer on the socket",
                reinstall,
            )


def _program(topic: str, where: str, program: list[str], client: str) -> Iterator[Finding]:
    reinstall = f"run `guard install {client}` again from the environment guard is installed in"
    executable = program[0]
    located = executable if os.path.isabs(executable) else shutil.which(executable)
    if located is None or not os.path.isfile(located) or not os.access(located, os.X_OK):
        yield Finding(
            "fail",
            topic,
            f"{where}: {executable!r} does not exist or is not executable: the client cannot start guard and every call runs unchecked",
            reinstall,
        )
        return
    if not os.path.isabs(executable):
        yield Finding(
            "warn",
            topic,
            f"{where}: {executable!r} is found through PATH ({located}); a client started with another PATH cannot run it",
            reinstall + " (it writes the absolute path)",
        )
    try:
        ran = subprocess.run(
            [*program, "--version"],
            check=False,
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
        output = (ran.stdout + ran.stderr).strip()
        works = ran.returncode == 0 and output.startswith("guard")
    except (OSError, subprocess.TimeoutExpired) as exc:
        works, output = False, str(exc)
    if works:
        yield Finding("ok", topic, f"{where}: {' '.join(program)} runs ({output})")
        if not _isolated(program):
            yield Finding(
                "warn",
                topic,
                f"{where}: its Python reads PYTHONPATH and your user site-packages, where the agent can put code that "
                "runs inside guard (a .pth file, a module named like one of the standard library's)",
                reinstall + " (it writes `python -I`, which reads neither)",
            )
    else:
        yield Finding(
            "fail",
            topic,
            f"{where}: `{' '.join(program)} --version` does not run guard: {output[-300:] or 'no output'}",
            reinstall,
        )


def _isolated(program: list[str]) -> bool:
    """Whether the hook's Python ignores PYTHONPATH and the user's site-packages (what ``guard install`` writes:
    ``-I``, or ``-E -P`` for a guard in the user's site-packages, which self-protection then guards)."""
    flags = set(program[1:])
    return "-I" in flags or {"-E", "-P"} <= flags


def _timeouts(
    topic: str, where: str, deadline: str | None, timeout_s: float | None, hook_timeouts: list[float], client: str
) -> Iterator[Finding]:
    need = needed_timeout(hook_timeouts)
    if timeout_s is not None and timeout_s < need:
        yield Finding(
            "fail",
            topic,
            f"{where}: the client kills guard after {timeout_s:g} s, but the slowest hook with guard's "
            f"margin needs {need} s: such a call runs unjudged",
            f"guard install {client} --timeout {need}",
        )
    if deadline is None:
        yield Finding(
            "warn",
            topic,
            f"{where}: the command does not tell guard the client's timeout (--deadline)",
            f"guard install {client} (writes --deadline)",
        )
    elif timeout_s is not None and _number(deadline) != timeout_s:
        yield Finding(
            "warn",
            topic,
            f"{where}: --deadline {deadline} but the client's timeout is {timeout_s:g} s",
            f"guard install {client} --timeout {timeout_s:g}",
        )


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _path(hooks: list[InstalledHook]) -> Iterator[Finding]:
    """Which guard a bare ``guard`` means here, against the one running this check."""
    this = guard_script() or guard_program()[0]
    on_path = shutil.which("guard")
    bare = any(not os.path.isabs(p.program[0]) for p in map(parse_guard_hook, (h.command for h in hooks)) if p)
    if on_path is None and bare:
        yield Finding(
            "fail",
            "PATH",
            "no guard on PATH here, and an installed hook runs a bare `guard`",
            f"reinstall the hooks so they run {this}",
        )
    elif on_path is None:
        yield Finding("ok", "PATH", "no guard on PATH here (installed hooks do not need it)")
    elif os.path.realpath(on_path) != os.path.realpath(this):
        yield Finding(
            "warn",
            "PATH",
            f"guard on PATH is {on_path}, not this one ({this}): a bare `guard` runs the other",
            "activate the environment you mean, or reinstall the hooks from it",
        )
    else:
        yield Finding("ok", "PATH", f"guard on PATH is this one ({on_path})")
