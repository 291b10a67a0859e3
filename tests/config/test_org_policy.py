"""The signed org policy, through real ``guard hook`` processes: projects and users cannot weaken it, and a policy that is
not exactly what the admin signed denies every tool call, saying why (docs/org-policy.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.processes import SOURCE_ROOT, guard_modules, modules, run_guard, serve_argv

#: The org's rule: a shell command naming "rm " is denied (a command hook: no model needed to show who wins).
ORG = """serial: 5
hooks:
  PreToolUse:
    - id: no-rm
      matcher: Bash
      command: "grep -q 'rm ' && echo '{\\"decision\\": \\"deny\\", \\"reason\\": \\"org: no rm\\"}' || true"
"""

#: A project that tries everything a project can: allow every call, switch protection off.
PERMISSIVE = """protect: false
hooks:
  PreToolUse:
    - id: allow-all
      matcher: "*"
      command: "echo '{\\"decision\\": \\"allow\\", \\"reason\\": \\"project allows everything\\"}'"
"""


def _hook(
    cwd: Path,
    command: str = "rm -rf build",
    *,
    tool: str = "Bash",
    tool_input: dict[str, object] | None = None,
    event: str = "PreToolUse",
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
    probe: bool = False,
) -> tuple[str, dict[str, object], subprocess.CompletedProcess[str]]:
    """One ``guard hook`` call: (the permission decision or "" for none, the whole output, the process)."""
    payload = {
        "session_id": "s1",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": tool_input or {"command": command},
        "cwd": str(cwd),
    }
    done = run_guard(["hook", *args], cwd, stdin=json.dumps(payload), env=env, probe=probe)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout) if done.stdout.strip() else {}
    return out.get("hookSpecificOutput", {}).get("permissionDecision", ""), out, done


def _reason(out: dict[str, object]) -> str:
    return str(out.get("hookSpecificOutput", {}).get("permissionDecisionReason", ""))  # type: ignore[union-attr]


@pytest.mark.slow
def test_a_permissive_project_with_protection_off_cannot_override_an_org_rule(
    org_policy, write_config, isolated_home: Path
) -> None:
    org_policy(ORG)
    write_config(PERMISSIVE)
    decision, out, _ = _hook(isolated_home, "rm -rf build")
    assert decision == "deny" and "org: no rm" in _reason(out) and "org:no-rm" in _reason(out)
    assert _hook(isolated_home, "ls")[0] != "deny", "what the org does not deny, the project decides"
    decision, out, _ = _hook(
        isolated_home, tool="Write", tool_input={"file_path": str(isolated_home / "guard.yaml"), "content": "hooks: {}"}
    )
    assert decision == "deny" and "self-protection" in _reason(out), (
        "protect: false is the org's to set, not the project's"
    )


@pytest.mark.slow
def test_empty_hooks_no_config_and_a_same_id_hook_do_not_remove_the_org_rule(
    org_policy, write_config, isolated_home: Path
) -> None:
    org_policy(ORG)
    assert _hook(isolated_home)[0] == "deny", "no project config at all: the org policy alone applies"
    write_config("hooks: {}\n")
    assert _hook(isolated_home)[0] == "deny"
    write_config("hooks:\n  PreToolUse:\n    - id: org:no-rm\n      matcher: Bash\n      command: \"echo '{}'\"\n")
    decision, out, _ = _hook(isolated_home, "ls")
    assert decision == "deny" and "reserved for the org policy" in _reason(out), (
        "a project hook cannot take the org hook's place"
    )


@pytest.mark.slow
def test_a_new_shadowing_file_and_fail_open_do_not_drop_the_org_rule(
    org_policy, write_config, isolated_home: Path
) -> None:
    org_policy(ORG)
    write_config(PERMISSIVE)
    (isolated_home / ".guard").mkdir()
    (isolated_home / ".guard" / "guard.yaml").write_text("hooks: {}\n")
    (isolated_home / "guard.yaml").write_text(
        "protect: false\nhooks: {}\n"
    )  # the trusted copy is enforced, the change noted
    decision, out, _ = _hook(isolated_home, "rm -rf build", env={"GUARD_FAIL_OPEN": "1"}, args=("--fail-open",))
    assert decision == "deny" and "org: no rm" in _reason(out)
    (isolated_home / "guard.yaml").unlink()
    untrusted = isolated_home / "sub"
    untrusted.mkdir()
    (untrusted / "guard.yaml").write_text(PERMISSIVE)  # never trusted: with --fail-open only the org's rules run
    decision, out, _ = _hook(untrusted, "rm -rf build", args=("--fail-open",))
    assert decision == "deny" and "org: no rm" in _reason(out)
    decision, out, _ = _hook(untrusted, "ls", args=("--fail-open",))
    assert decision != "deny" and "only the org policy's rules are enforced" in json.dumps(out)


@pytest.mark.slow
def test_a_policy_altered_after_signing_denies_every_call_and_says_why(
    org_policy, write_config, isolated_home: Path
) -> None:
    org = org_policy(ORG)
    write_config(PERMISSIVE)
    assert _hook(isolated_home, "ls")[0] != "deny"
    org.policy.write_text(ORG.replace("'rm '", "'never-matches '"))  # loosened, not re-signed
    for command in ("ls", "echo hi", "rm -rf build"):
        decision, out, _ = _hook(isolated_home, command, env={"GUARD_FAIL_OPEN": "1"}, args=("--fail-open",))
        assert decision == "deny"
        assert (
            "fails its signature check" in _reason(out)
            and "altered after signing" in _reason(out)
            and str(org.policy) in _reason(out)
        )
    decision, out, _ = _hook(isolated_home, event="UserPromptSubmit")
    assert decision == "" and "fails its signature check" in out.get("systemMessage", ""), "other events pass, visibly"


@pytest.mark.slow
@pytest.mark.parametrize("broken", ["missing signature", "missing policy", "another key's signature", "not a key"])
def test_an_unsigned_or_missing_policy_denies_every_call(
    org_policy, write_config, isolated_home: Path, tmp_path: Path, broken: str
) -> None:
    org = org_policy(ORG)
    write_config(PERMISSIVE)
    if broken == "missing signature":
        org.signature.unlink()
        expected = "is not signed"
    elif broken == "missing policy":
        org.policy.unlink()
        expected = "is missing"
    elif broken == "another key's signature":
        other = tmp_path / "other"
        assert run_guard(["policy", "keygen", "--out", str(other)], tmp_path).returncode == 0
        assert run_guard(["policy", "sign", str(org.policy), "--key", str(other / "org.key")], tmp_path).returncode == 0
        expected = "fails its signature check"
    else:
        org.public.write_text("not a key\n")
        expected = "not a PEM public key"
    decision, out, _ = _hook(isolated_home, "ls")
    assert decision == "deny" and expected in _reason(out)


@pytest.mark.slow
def test_an_older_signed_policy_replayed_is_refused(org_policy, write_config, isolated_home: Path) -> None:
    org = org_policy(ORG)
    write_config(PERMISSIVE)
    older = (org.policy.read_bytes(), org.signature.read_bytes())
    org.sign(ORG.replace("serial: 5", "serial: 6"))
    assert _hook(isolated_home, "ls")[0] != "deny", "serial 6 is enforced, and remembered"
    org.policy.write_bytes(older[0])
    org.signature.write_bytes(older[1])
    decision, out, _ = _hook(isolated_home, "ls")
    assert decision == "deny" and "serial 5, older than serial 6" in _reason(out)


@pytest.mark.slow
def test_the_org_rewrite_wins_over_a_project_rewrite(org_policy, write_config, isolated_home: Path) -> None:
    rewrite = 'echo \'{{\\"hookSpecificOutput\\": {{\\"hookEventName\\": \\"PreToolUse\\", \\"updatedInput\\": {{\\"command\\": \\"{}\\"}}}}}}\''
    org_policy(
        f'hooks:\n  PreToolUse:\n    - id: dry\n      matcher: Bash\n      command: "{rewrite.format("make --dry-run")}"\n'
    )
    write_config(
        f'hooks:\n  PreToolUse:\n    - id: wet\n      matcher: Bash\n      command: "{rewrite.format("make deploy")}"\n'
    )
    _, out, _ = _hook(isolated_home, "make")
    assert out["hookSpecificOutput"]["updatedInput"] == {"command": "make --dry-run"}  # type: ignore[index]


@pytest.mark.slow
def test_the_agent_cannot_write_the_org_files(org_policy, isolated_home: Path) -> None:
    org = org_policy(ORG)
    for target in (org.policy, org.signature, org.public):
        decision, out, _ = _hook(isolated_home, tool="Write", tool_input={"file_path": str(target), "content": "x"})
        assert decision == "deny" and f"names {target} (" in _reason(out) and "self-protection" in _reason(out)


@pytest.mark.slow
def test_an_org_policy_set_after_a_cached_verdict_is_enforced_on_the_hit(  # type: ignore[no-untyped-def]
    org_policy, write_config, isolated_home: Path, stub
) -> None:
    """A hook with no org key never loads the org policy's module; once an admin configures one, the next call is
    denied by the org's rule even though the project's rule answers from the decision cache."""
    from guard.testing.openai_stub import Reply

    stub.default = Reply.verdict("allow", "the build folder is the project's own")
    write_config(
        f"models:\n  quick: openai/stub-quick\n  api_base: {stub.url}\n"
        "hooks:\n  PreToolUse:\n    - id: outside\n      matcher: Bash\n      depth: quick\n"
        "      rule: Deny shell commands that delete files outside the project.\n"
    )
    decision, _, done = _hook(isolated_home, probe=True)
    assert decision != "deny" and stub.calls == 1, decision
    assert "guard.config.org_policy" not in guard_modules(done), "no org key configured: its module is not loaded"
    org_policy(ORG)
    for _ in range(2):
        decision, out, done = _hook(isolated_home, probe=True)
        assert decision == "deny" and "org: no rm" in _reason(out), out
        assert stub.calls == 1, "the project's rule answered from the cache"
        assert "guard.config.org_policy" in guard_modules(done)


PROBE = (
    "import sys\nfrom guard.cli.main import main\nrc = main(sys.argv[1:])\n"
    "sys.stderr.write('CRYPTO ' + str('cryptography' in sys.modules) + '\\n')\nsys.exit(rc)\n"
)


def _crypto_loaded(cwd: Path, env: dict[str, str] | None = None) -> bool:
    payload = json.dumps(
        {
            "session_id": "s1",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "ls"},
            "cwd": str(cwd),
        }
    )
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "hook"],
        input=payload,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": SOURCE_ROOT, **(env or {})},
        timeout=60,
    )
    return [line for line in done.stderr.splitlines() if line.startswith("CRYPTO ")][-1] == "CRYPTO True"


@pytest.mark.slow
def test_a_hook_verifies_once_and_no_org_key_costs_no_import(org_policy, write_config, isolated_home: Path) -> None:
    write_config(PERMISSIVE)
    assert not _crypto_loaded(isolated_home), "no org key configured: the signature library is never imported"
    org = org_policy(ORG)
    assert _crypto_loaded(isolated_home), "the first call verifies the signature"
    assert not _crypto_loaded(isolated_home), "the same policy again: its verification is on record"
    write_config("hooks: {}\n")  # nothing of the project's matches a Read, nor does the org's Bash rule
    read = json.dumps(
        {
            "session_id": "s1",
            "hook_event_name": "PreToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": "x"},
            "cwd": str(isolated_home),
        }
    )
    run_guard(["hook"], isolated_home, stdin=read, probe=True)  # compiles the new config's snapshot
    assert modules(run_guard(["hook"], isolated_home, stdin=read, probe=True)) == [], (
        "under an org policy a no-match call still loads nothing heavy"
    )
    org.sign(ORG.replace("serial: 5", "serial: 7"))
    assert _crypto_loaded(isolated_home), "a new policy is verified again"


def test_the_system_key_wins_over_the_variables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from guard.core import settings

    system = tmp_path / "etc-guard"
    system.mkdir()
    (system / "org.pub").write_text("key")
    monkeypatch.setattr(settings, "SYSTEM_DIR", system)
    elsewhere = tmp_path / "mine.yaml"
    elsewhere.write_text("hooks: {}\n")
    elsewhere.chmod(0o666)  # anyone may write it: not an admin's file
    located = settings.locate({"GUARD_ORG_KEY": str(tmp_path / "my.pub"), "GUARD_ORG_POLICY": str(elsewhere)})
    assert (
        located is not None and located.key == str(system / "org.pub") and located.policy == str(system / "policy.yaml")
    )
    assert located.note and "ignored" in located.note
    assert settings.locate({}) is not None and settings.locate({}).source == "system"  # type: ignore[union-attr]
    (system / "org.pub").unlink()
    assert settings.locate({}) is None, "no system key, no variable: no org policy"
    moved = settings.locate({"GUARD_ORG_KEY": str(tmp_path / "my.pub"), "GUARD_ORG_POLICY": str(elsewhere)})
    assert moved is not None and moved.policy == str(elsewhere) and moved.source == "environment"


@pytest.mark.slow
def test_policy_verify_and_sign_refuse_what_would_not_be_enforced(org_policy, isolated_home: Path) -> None:
    org = org_policy(ORG)
    done = run_guard(["policy", "verify"], isolated_home)
    assert done.returncode == 0 and "serial 5" in done.stdout
    org.policy.write_text(ORG + "# edited\n")
    done = run_guard(["policy", "verify"], isolated_home)
    assert done.returncode == 1 and "fails its signature check" in done.stdout
    org.policy.write_text("include: [more.yaml]\n")
    done = run_guard(["policy", "sign", str(org.policy), "--key", str(org.private)], isolated_home)
    assert done.returncode == 1 and "cannot include files" in done.stderr
    assert run_guard(["policy", "keygen", "--out", str(org.folder)], isolated_home).returncode == 1, (
        "an existing key is never overwritten"
    )


@pytest.mark.slow
def test_guard_doctor_reports_the_org_policy_and_what_waits_for_the_audit_store(
    org_policy, write_config, isolated_home: Path
) -> None:
    org = org_policy(ORG.replace("serial: 5\n", "audit:\n  url: postgresql://guard@127.0.0.1:9/nowhere\n"))
    write_config(PERMISSIVE)
    _hook(isolated_home, "rm -rf build")  # a row for the org's store, which cannot be reached
    # The hook's forked shipper may not have tried yet on a busy machine: a shipping of our own has, once it returns.
    assert run_guard(["log", "ship"], isolated_home).returncode != 0
    done = run_guard(["doctor"], isolated_home, env={"GUARD_PLAIN": "1"})
    org_lines = [line for line in done.stdout.splitlines() if "org policy:" in line]
    assert org_lines[0].startswith("ok") and "signed by key" in org_lines[0] and "1 hook(s)" in org_lines[0]
    assert any(line.startswith("WARN") and "no serial" in line for line in org_lines)
    store = [line for line in done.stdout.splitlines() if "audit store:" in line]
    assert store and store[0].startswith("WARN") and "1 row(s) wait in the local log" in store[0], done.stdout
    org.policy.write_text(org.policy.read_text() + "# edited\n")
    done = run_guard(["doctor"], isolated_home, env={"GUARD_PLAIN": "1"})
    assert done.returncode == 1 and any(
        line.startswith("FAIL") and "org policy:" in line and "fails its signature check" in line
        for line in done.stdout.splitlines()
    )


@pytest.mark.slow
def test_a_project_cannot_shorten_the_org_judges_time(org_policy, write_config, isolated_home: Path, stub) -> None:  # type: ignore[no-untyped-def]
    """The org's smart rule keeps the org's models.timeouts: a project's shorter one would make it time out into its failure mode."""
    from guard.testing.openai_stub import Reply

    stub.default = Reply.verdict("deny", "deletes the build", delay=3.0)
    org_policy(
        f"serial: 1\nmodels:\n  quick: openai/stub-quick\n  api_base: {stub.url}\n  timeouts: {{quick: 30}}\n"
        "hooks:\n  PreToolUse:\n    - id: no-deletes\n      matcher: Bash\n      depth: quick\n      rule: Deny shell commands that delete files.\n"
    )
    write_config("models:\n  timeouts: {quick: 1}\nhooks: {}\n")
    decision, out, _ = _hook(isolated_home, "rm -rf build")
    assert decision == "deny" and "deletes the build" in _reason(out), out


@pytest.mark.slow
def test_a_project_endpoint_does_not_judge_the_orgs_models(org_policy, write_config, isolated_home: Path, stub) -> None:  # type: ignore[no-untyped-def]
    """The org names its model and leaves the endpoint to the provider's own: a project's models.api_base (a judge of its own,
    answering allow) is not where the org's rule is judged."""
    from guard.testing.openai_stub import Reply, StubServer

    stub.default = Reply.verdict("deny", "the org's provider: deletes the build")
    org_policy(
        "serial: 1\nmodels:\n  quick: openai/stub-quick\n"
        "hooks:\n  PreToolUse:\n    - id: no-deletes\n      matcher: Bash\n      depth: quick\n      rule: Deny shell commands that delete files.\n"
    )
    with StubServer(default=Reply.verdict("allow", "the project's own judge")) as projects:
        write_config(f"models:\n  api_base: {projects.url}\nhooks: {{}}\n")
        decision, out, _ = _hook(
            isolated_home, "rm -rf build", env={"OPENAI_BASE_URL": stub.url, "OPENAI_API_KEY": "sk-org"}
        )
        assert projects.requests == [], "the project's endpoint was asked to judge the org's rule"
    assert decision == "deny" and "the org's provider" in _reason(out), out


@pytest.mark.slow
def test_guard_serves_client_route_denies_once_the_org_policy_changes(
    org_policy, write_config, isolated_home: Path
) -> None:
    """A Claude Code http hook reads guard serve's answer as it is: after the policy changed, the answer is a deny, not the
    failure policy's allow (the org's rules judged nothing)."""
    import urllib.request

    from fixtures.cache import start_listening

    org = org_policy(ORG)
    config = write_config(PERMISSIVE)
    serve, port = start_listening(
        lambda port: serve_argv("--port", str(port), "--config", str(config), "--token", "t0ken"),
        cwd=isolated_home,
        env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
    )

    def ask(command: str) -> str:
        event = {
            "session_id": "s1",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "cwd": str(isolated_home),
        }
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/hooks/claude",
            data=json.dumps(event).encode(),
            method="POST",
            headers={"Authorization": "Bearer t0ken", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return str(answer.headers["X-Guard-Decision"])

    try:
        assert ask("rm -rf build") == "deny" and ask("ls") == "allow"
        org.policy.write_text(ORG.replace("'rm '", "'never-matches '"))  # loosened, not re-signed
        assert ask("ls") == "deny"
    finally:
        serve.kill()
        serve.communicate(timeout=10)


@pytest.mark.slow
@pytest.mark.parametrize("where", ["project", "user", "cleared"])
def test_client_settings_that_move_the_org_variables_deny_every_call(
    org_policy, write_config, isolated_home: Path, where: str
) -> None:
    """Claude Code hands a settings file's ``env`` to its hooks (tests/e2e/test_claude_org_env.py with the real CLI): a project's or
    user's settings naming the org variables, or the key's variable set to nothing, is not where an admin puts the org policy."""
    org_policy(ORG)
    write_config(PERMISSIVE)
    env: dict[str, str] = {"CLAUDE_PROJECT_DIR": str(isolated_home)}
    if where == "cleared":
        env["GUARD_ORG_KEY"] = ""
    else:
        folder = isolated_home / ".claude" if where == "project" else Path(os.environ["HOME"]) / ".claude"
        folder.mkdir(exist_ok=True)
        (folder / ("settings.json" if where == "project" else "settings.local.json")).write_text(
            '{"env": {"GUARD_ORG_KEY": ""}}'
        )
    decision, out, _ = _hook(isolated_home, "ls", env=env)
    assert decision == "deny" and "GUARD_ORG_KEY" in _reason(out), out


@pytest.mark.slow
def test_a_projects_settings_env_cannot_point_the_org_judge_elsewhere(
    org_policy, write_config, isolated_home: Path
) -> None:
    """Wherever the policy comes from: a project's Claude Code settings setting GUARD_API_BASE (a judge of its own) deny every call."""
    org_policy(ORG)
    write_config(PERMISSIVE)
    (isolated_home / ".claude").mkdir()
    (isolated_home / ".claude" / "settings.json").write_text(
        '{"env": {"GUARD_API_BASE": "http://127.0.0.1:9/v1", "NODE_ENV": "test"}}'
    )
    decision, out, _ = _hook(isolated_home, "ls", env={"CLAUDE_PROJECT_DIR": str(isolated_home)})
    assert decision == "deny" and "sets $GUARD_API_BASE in its env" in _reason(out), out
    (isolated_home / ".claude" / "settings.json").write_text('{"env": {"NODE_ENV": "test"}}')
    assert _hook(isolated_home, "ls", env={"CLAUDE_PROJECT_DIR": str(isolated_home)})[0] != "deny", (
        "other variables are the project's"
    )
    (isolated_home / ".claude" / "settings.local.json").write_text(
        '{"env": {"GUARD_HOOK": "/opt/guard/bin/guard hook"}}'
    )
    assert _hook(isolated_home, "ls", env={"CLAUDE_PROJECT_DIR": str(isolated_home)})[0] != "deny", (
        "guard install claude's own GUARD_HOOK"
    )
