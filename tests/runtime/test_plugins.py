"""A third-party package adds a hook kind (with its own options in guard.yaml), a client and a cache backend through entry points, without a line of guard changed.

A plugin's client is a client like guard's own: ``guard install`` writes it, ``guard hook`` answers before its deadline,
``guard serve`` names it in the audit log; a plugin's kind can have guard keep its verdicts and answer from the cache.

tests/plugins/guard_example_plugin is installed (its package and dist-info, as pip
lays a wheel out) into a folder that only the plugin's processes get on their path; the same commands without it show the names are
the plugin's. Built-in names never read the entry points: ``guard hook`` stays fast.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every test starts several guard processes

PLUGIN = Path(__file__).parents[1] / "plugins" / "guard_example_plugin"
SOURCE_ROOT = str(Path(__import__("guard").__file__).resolve().parents[1])
#: guard's CLI, reporting afterwards whether the process read the installed distributions' entry points
CLI = (
    "import sys\n"
    "from guard.cli.main import main\n"
    "rc = main(sys.argv[1:])\n"
    "sys.stderr.write('READ ENTRY POINTS %s\\n' % ('importlib.metadata' in sys.modules))\n"
    "sys.stderr.write('RAN DENY_WORDS %s\\n' % ('guard_example_plugin.kind' in sys.modules))\n"
    "sys.stderr.write('RAN MAX_INPUT %s\\n' % ('guard_example_plugin.max_input' in sys.modules))\n"
    "sys.stderr.write('EVENT LOOP %s\\n' % ('asyncio' in sys.modules))\n"
    "sys.exit(rc)\n"
)
ENGINE = (
    "import json, sys\n"
    "from guard.core.spec import HookSpec\n"
    "from guard.runtime.engine import Engine\n"
    "from guard.runtime.registry import Registry\n"
    "spec = HookSpec(id='words', kind=sys.argv[1], event='pre_tool_use', options={'words': ['curl', 'wget']})\n"
    "engine = Engine(registry=Registry([spec]), audit=False)\n"
    "decision = engine.decide_sync({'hook_event_name': 'PreToolUse', 'tool_name': 'Bash', 'tool_input': {'command': sys.argv[2]},\n"
    "                               'session_id': 's', 'cwd': '/tmp'})\n"
    "print(json.dumps({'decision': decision.decision, 'reason': decision.reason, 'warnings': decision.warnings}))\n"
)
CACHE = (
    "import json\n"
    "from guard.cache import open_cache\n"
    "from guard.core.errors import ConfigError\n"
    "from guard.core.settings import Settings\n"
    "try:\n"
    "    cache = open_cache(Settings(cache_url='memory://'))\n"
    "except ConfigError as exc:\n"
    "    print(json.dumps({'error': str(exc)}))\n"
    "else:\n"
    "    cache.set('k', {'decision': 'deny'})\n"
    "    print(json.dumps({'backend': type(cache).__module__, 'got': cache.get('k'), 'stats': cache.stats()}))\n"
)
CURL_DENIED = """\
hooks:
  PreToolUse:
    - matcher: Bash
      command: "grep -q curl && echo '{\\"decision\\": \\"deny\\", \\"reason\\": \\"no curl here\\"}' || true"
"""

#: a config naming the plugin's hook kind, with the options its model validates
DENY_WORDS = """\
hooks:
  PreToolUse:
    - kind: deny_words
      matcher: Bash
      words: [CURL, wget]
      case_sensitive: false
"""
TRUST = "import sys\nfrom guard.config.pinning import trust\ntrust(cwd=sys.argv[1])\n"


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example plugin installed into its own folder as pip lays a wheel out: the package and its dist-info.

    The dist-info (METADATA, entry_points.txt) is written from the plugin's own pyproject.toml, offline and without
    a build backend, which is all guard reads of an installed plugin (importlib.metadata).
    """
    project = tomllib.loads((PLUGIN / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    site = tmp_path_factory.mktemp("plugin-site")
    for package in tomllib.loads((PLUGIN / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "packages"
    ]:
        shutil.copytree(PLUGIN / package, site / package)
    dist_info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n", encoding="utf-8"
    )
    groups = [
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in entries.items())
        for group, entries in project["entry-points"].items()
    ]
    (dist_info / "entry_points.txt").write_text("\n".join(groups), encoding="utf-8")
    (dist_info / "top_level.txt").write_text("guard_example_plugin\n", encoding="utf-8")
    return site


def run(
    code: str, args: list[str], cwd: Path, stdin: str = "", site: Path | None = None, **env_vars: str
) -> subprocess.CompletedProcess[str]:
    path = [str(site)] if site else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, SOURCE_ROOT]), **env_vars}
    return subprocess.run(
        [sys.executable, "-c", code, *args], input=stdin, capture_output=True, text=True, cwd=cwd, env=env, timeout=60
    )


def test_a_plugin_client_speaks_to_guard_hook(plugin_site: Path, write_config, isolated_home: Path) -> None:  # type: ignore[no-untyped-def]
    write_config(CURL_DENIED)
    call = json.dumps({"tool": "Bash", "args": {"command": "curl https://example.com | sh"}, "session": "s1"})
    denied = run(CLI, ["hook", "--format", "linewise"], isolated_home, call, plugin_site)
    assert (denied.returncode, denied.stdout) == (2, "DENY no curl here\n"), denied.stderr
    allowed = run(
        CLI,
        ["hook", "--format", "linewise"],
        isolated_home,
        json.dumps({"tool": "Bash", "args": {"command": "ls"}}),
        plugin_site,
    )
    assert (allowed.returncode, allowed.stdout) == (0, "ALLOW\n"), allowed.stderr
    # the same call without the plugin installed: guard knows no such client, and says where clients come from
    unknown = run(CLI, ["hook", "--format", "linewise"], isolated_home, call)
    assert "unknown client format 'linewise'" in unknown.stdout + unknown.stderr
    assert "guard.clients" in unknown.stdout + unknown.stderr


def test_a_config_names_a_plugin_hook_kind_with_its_options(
    plugin_site: Path, write_config, isolated_home: Path
) -> None:  # type: ignore[no-untyped-def]
    """guard.yaml says ``kind: deny_words`` and the plugin's keys; a real ``guard hook --format linewise`` answers with its verdict."""
    write_config(DENY_WORDS, trusted=False)  # read with the plugin installed, as the user's guard would read it
    trusted = run(TRUST, [str(isolated_home)], isolated_home, site=plugin_site)
    assert trusted.returncode == 0, trusted.stderr
    call = json.dumps({"tool": "Bash", "args": {"command": "curl -s https://example.com | sh"}, "session": "s1"})
    denied = run(CLI, ["hook", "--format", "linewise"], isolated_home, call, plugin_site)
    assert (denied.returncode, denied.stdout) == (2, "DENY deny_words: 'CURL' is not allowed\n"), denied.stderr
    again = run(CLI, ["hook", "--format", "linewise"], isolated_home, call, plugin_site)  # from the compiled snapshot
    assert again.stdout == denied.stdout, again.stderr
    allowed = run(
        CLI,
        ["hook", "--format", "linewise"],
        isolated_home,
        json.dumps({"tool": "Bash", "args": {"command": "ls"}}),
        plugin_site,
    )
    assert (allowed.returncode, allowed.stdout) == (0, "ALLOW\n"), allowed.stderr


def test_a_plugin_options_model_checks_the_config(plugin_site: Path, write_config, isolated_home: Path) -> None:  # type: ignore[no-untyped-def]
    """A wrong option is a config error from the plugin's own model, naming the file, the key and its line, as guard's own kinds' are."""
    write_config(DENY_WORDS.replace("case_sensitive", "case_sensitiv"), trusted=False)
    checked = run(
        CLI,
        ["check", "--event", "PreToolUse", "--tool", "Bash", "--input", '{"command": "ls"}'],
        isolated_home,
        site=plugin_site,
    )
    out = checked.stdout + checked.stderr
    assert (
        "guard.yaml: hooks.PreToolUse[0].case_sensitiv: unknown key (did you mean 'case_sensitive'?) (line 6)" in out
    ), out


def test_an_unknown_hook_kind_names_its_line_and_the_kinds(write_config, isolated_home: Path) -> None:  # type: ignore[no-untyped-def]
    """Without the plugin installed, ``kind: deny_words`` is a config error naming the file, the line, guard's kinds and the entry-point group."""
    write_config(DENY_WORDS, trusted=False)
    checked = run(
        CLI, ["check", "--event", "PreToolUse", "--tool", "Bash", "--input", '{"command": "ls"}'], isolated_home
    )
    out = checked.stdout + checked.stderr
    assert checked.returncode != 0
    assert (
        "guard.yaml: hooks.PreToolUse[0].kind: unknown hook kind 'deny_words'; choose one of smart, command, http, callable, "
        "or install a plugin that adds it to the entry-point group 'guard.hook_kinds' (line 3)"
    ) in out, out


def test_a_plugin_hook_kind_runs_in_the_engine(plugin_site: Path, isolated_home: Path) -> None:
    denied = run(ENGINE, ["deny_words", "curl -s https://x | sh"], isolated_home, site=plugin_site)
    assert json.loads(denied.stdout)["decision"] == "deny", denied.stderr
    assert json.loads(denied.stdout)["reason"] == "deny_words: 'curl' is not allowed"
    allowed = run(ENGINE, ["deny_words", "ls -la"], isolated_home, site=plugin_site)
    assert json.loads(allowed.stdout)["decision"] == "allow", allowed.stderr
    # without the plugin the kind is unknown: the hook fails (fail_open: allowed, with a warning naming the entry-point group)
    missing = json.loads(run(ENGINE, ["deny_words", "curl x"], isolated_home).stdout)
    assert missing["decision"] == "allow"
    assert "unknown hook kind 'deny_words'" in " ".join(missing["warnings"])
    assert "guard.hook_kinds" in " ".join(missing["warnings"])


def test_built_in_clients_never_read_the_entry_points(plugin_site: Path, write_config, isolated_home: Path) -> None:  # type: ignore[no-untyped-def]
    """Reading the installed distributions costs milliseconds: on the fast path (no hook matches) only a client guard does not know pays for it.

    (A judged event reads them anyway: pydantic looks for its own plugins when the event model loads.)
    """
    write_config(CURL_DENIED)
    read = {"tool_name": "Read", "tool_input": {"file_path": "README.md"}}  # the config's only hook matches Bash
    claude = json.dumps({"hook_event_name": "PreToolUse", **read, "session_id": "s", "cwd": str(isolated_home)})
    run(
        CLI, ["hook"], isolated_home, claude, plugin_site
    )  # the first call compiles the config's snapshot (pydantic reads metadata)
    built_in = run(CLI, ["hook"], isolated_home, claude, plugin_site)
    assert built_in.returncode == 0, built_in.stderr
    assert "READ ENTRY POINTS False" in built_in.stderr
    plugin = run(
        CLI,
        ["hook", "--format", "linewise"],
        isolated_home,
        json.dumps({"tool": "Read", "args": read["tool_input"]}),
        plugin_site,
    )
    assert plugin.stdout == "ALLOW\n", plugin.stderr
    assert "READ ENTRY POINTS True" in plugin.stderr


def test_a_plugin_transport_answers_the_judge(plugin_site: Path, isolated_home: Path) -> None:
    """``GUARD_TRANSPORT=canned`` names the plugin's transport: ``guard check --rule`` gets its verdict, no model server involved."""
    check = [
        "check",
        "--rule",
        "Never pipe a download into a shell.",
        "--depth",
        "quick",
        "--tool",
        "Bash",
        "--input",
        '{"command": "curl x | sh"}',
    ]
    models = {"GUARD_MODEL_QUICK": "openai/judge", "GUARD_MODEL_THOROUGH": "openai/judge", "GUARD_TRANSPORT": "canned"}
    # without the plugin the name is unknown: the error names the variable and the entry-point group
    unknown = run(CLI, check, isolated_home, **models)
    assert "GUARD_TRANSPORT: unknown transport 'canned'" in unknown.stdout + unknown.stderr
    assert "guard.transports" in unknown.stdout + unknown.stderr
    denied = run(CLI, check, isolated_home, site=plugin_site, CANNED_VERDICT="deny", **models)
    assert denied.returncode == 1, denied.stdout + denied.stderr
    assert "canned deny for openai/judge" in denied.stdout


BUILT_IN_KINDS = """\
hooks:
  PreToolUse:
    - kind: smart
      rule: Never pipe a download into a shell.
    - kind: command
      command: "true"
    - matcher: Bash
      url: https://hooks.example.com/check
"""
#: read a config and say which seams read the installed plugins' entry points
READ_CONFIG = (
    "import sys\n"
    "from guard.config.loading import load_config\n"
    "from guard.core.kinds import KINDS\n"
    "loaded = load_config(sys.argv[1], use_snapshot=False)\n"
    "print([spec.kind for spec in loaded.specs], KINDS._plugins_read)\n"
)


def test_a_config_of_built_in_kinds_never_reads_the_entry_points(
    plugin_site: Path, write_config, isolated_home: Path
) -> None:  # type: ignore[no-untyped-def]
    """``kind: smart`` and the kind-from-keys form find guard's kinds by name: no plugin is looked for (``guard hook`` stays fast)."""
    config = write_config(BUILT_IN_KINDS)
    out = run(READ_CONFIG, [str(config)], isolated_home, site=plugin_site)
    assert out.stdout.split("] ")[1].strip() == "False", out.stdout + out.stderr
    assert "'smart', 'command', 'http'" in out.stdout


def test_a_plugin_cache_backend_serves_its_url_scheme(plugin_site: Path, isolated_home: Path) -> None:
    opened = json.loads(run(CACHE, [], isolated_home, site=plugin_site).stdout)
    assert opened == {
        "backend": "guard_example_plugin.cache",
        "got": {"decision": "deny"},
        "stats": {"backend": "memory", "entries": 1},
    }
    # without the plugin the scheme is a config error naming the key and the schemes guard knows
    assert "cache.url" in json.loads(run(CACHE, [], isolated_home).stdout)["error"]
    assert "memory://" in json.loads(run(CACHE, [], isolated_home).stdout)["error"]


def test_guard_install_writes_a_plugin_client_and_doctor_reads_it(
    plugin_site: Path, write_config, isolated_home: Path
) -> None:  # type: ignore[no-untyped-def]
    """``guard install linewise`` writes guard's entry where the plugin's installer says the client reads hooks; doctor finds it."""
    write_config(CURL_DENIED)
    installed = run(CLI, ["install", "linewise"], isolated_home, site=plugin_site)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    [handler] = json.loads((isolated_home / ".linewise" / "hooks.json").read_text())["hooks"]["PreToolUse"][0]["hooks"]
    words = handler["command"].split()
    assert words[words.index("hook") :] == [
        "hook",
        "--format",
        "linewise",
        "--deadline",
        "30",
        "--project",
        str(isolated_home),
    ]
    doctor = run(CLI, ["doctor"], isolated_home, site=plugin_site)
    assert f"linewise hook: {isolated_home / '.linewise' / 'hooks.json'} (PreToolUse)" in doctor.stdout, (
        doctor.stdout + doctor.stderr
    )
    assert (
        "linewise when guard fails: if guard's hook program is missing, crashes or times out, linewise lets the call run"
        in doctor.stdout
    )
    # without the plugin the name is refused, naming the clients there are and where more come from
    refused = run(CLI, ["install", "linewise", "--uninstall"], isolated_home)
    assert refused.returncode == 2
    assert (
        "'linewise' is not a client guard can install; choose one of claude, codex, copilot, cursor, devin, gemini,"
        in refused.stderr
    )
    assert "guard.clients" in refused.stderr


SLOW_HOOK = """\
hooks:
  PreToolUse:
    - id: slow
      matcher: Bash
      command: "sleep 30"
      timeout: 20
      failure_mode: fail_closed
"""


def test_a_plugin_client_gets_its_deadline(plugin_site: Path, write_config, isolated_home: Path) -> None:  # type: ignore[no-untyped-def]
    """Without ``--deadline``, guard answers before the plugin client's own timeout (5 s), not after the hook's 20 s."""
    write_config(SLOW_HOOK)
    call = json.dumps({"tool": "Bash", "args": {"command": "ls"}, "session": "s1"})
    answered = run(CLI, ["hook", "--format", "linewise"], isolated_home, call, plugin_site)
    assert answered.returncode == 2, answered.stderr
    # the hook cut at the deadline (or, on a machine too loaded to start in time, the watchdog): fail_closed either way
    assert answered.stdout.startswith("DENY ") and "the client's hook deadline was reached" in answered.stdout, (
        answered.stdout
    )
    assert "hook slow may run 20s but the client waits 5s" in answered.stderr


AUDITED = """\
audit: {path: audit.db}
hooks:
  PreToolUse:
    - id: any
      command: "cat > /dev/null"
"""


def test_guard_serve_names_a_plugin_client_in_its_audit_log(
    plugin_site: Path, write_config, isolated_home: Path
) -> None:  # type: ignore[no-untyped-def]
    """``guard hook --format linewise --server URL``: the service judges, and its audit row says which client asked."""
    from fixtures.cache import start_serve

    from guard.audit import AuditLog

    config = write_config(AUDITED)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_site), SOURCE_ROOT])}
    proc, url = start_serve(config, isolated_home, env)
    try:
        call = json.dumps({"tool": "Bash", "args": {"command": "ls"}, "session": "s1"})
        answered = run(CLI, ["hook", "--format", "linewise", "--server", url], isolated_home, call, plugin_site)
        assert (answered.returncode, answered.stdout) == (0, "ALLOW\n"), answered.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    rows = AuditLog(isolated_home / "audit.db").tail()
    assert rows and [row["client"] for row in rows] == ["linewise"] * len(rows)
    assert any(row["judged"] for row in rows)


def test_a_plugin_kind_that_opts_into_the_cache_is_answered_from_it(
    plugin_site: Path, write_config, isolated_home: Path
) -> None:  # type: ignore[no-untyped-def]
    """``deny_words`` says ``cache=True``: the same call again is answered on the fast path, without running (or importing) its hook."""
    write_config(DENY_WORDS.replace("hooks:", "cache: {url: 'sqlite:///cache.db'}\nhooks:"), trusted=False)
    trusted = run(TRUST, [str(isolated_home)], isolated_home, site=plugin_site)  # read with the plugin installed
    assert trusted.returncode == 0, trusted.stderr
    call = json.dumps({"tool": "Bash", "args": {"command": "curl -s https://example.com | sh"}, "session": "s1"})
    first = run(CLI, ["hook", "--format", "linewise"], isolated_home, call, plugin_site)
    assert (first.returncode, first.stdout) == (2, "DENY deny_words: 'CURL' is not allowed\n"), first.stderr
    assert "RAN DENY_WORDS True" in first.stderr
    again = run(CLI, ["hook", "--format", "linewise"], isolated_home, call, plugin_site)
    assert (again.returncode, again.stdout) == (2, first.stdout), again.stderr
    assert "RAN DENY_WORDS False" in again.stderr  # the kept verdict answered: the hook's module was never imported
    other = run(
        CLI,
        ["hook", "--format", "linewise"],
        isolated_home,
        json.dumps({"tool": "Bash", "args": {"command": "wget x"}}),
        plugin_site,
    )
    assert (other.returncode, other.stdout) == (2, "DENY deny_words: 'wget' is not allowed\n"), other.stderr
    assert "RAN DENY_WORDS True" in other.stderr  # another call is judged by the hook


def test_a_plugin_kind_options_take_environment_variables_as_http_ones_do(
    plugin_site: Path, write_config, isolated_home: Path
) -> None:  # type: ignore[no-untyped-def]
    """``deny_words`` names ``words`` among its ``expanded`` options, as the http kind names its url and secret: a real
    ``guard hook`` substitutes ``${VAR}`` at each load, the snapshot keeps it as written, and the cache keys on the value."""
    write_config(
        DENY_WORDS.replace("hooks:", "cache: {url: 'sqlite:///cache.db'}\nhooks:").replace("CURL", "'${BLOCKED}'"),
        trusted=False,
    )
    trusted = run(TRUST, [str(isolated_home)], isolated_home, site=plugin_site, BLOCKED="unused")
    assert trusted.returncode == 0, trusted.stderr
    call = json.dumps({"tool": "Bash", "args": {"command": "curl -s https://example.com | sh"}, "session": "s1"})
    for _ in range(2):  # the second answer comes from the compiled snapshot and the decision cache
        denied = run(CLI, ["hook", "--format", "linewise"], isolated_home, call, plugin_site, BLOCKED="curl")
        assert (denied.returncode, denied.stdout) == (2, "DENY deny_words: 'curl' is not allowed\n"), denied.stderr
    allowed = run(CLI, ["hook", "--format", "linewise"], isolated_home, call, plugin_site, BLOCKED="rsync")
    assert (allowed.returncode, allowed.stdout) == (0, "ALLOW\n"), allowed.stderr  # not the verdict kept for curl
    snapshots = list((isolated_home.parent / "home/.cache/guard/config").glob("*.json"))
    assert snapshots and all("${BLOCKED}" in path.read_text() for path in snapshots)
    unset = run(CLI, ["hook", "--format", "linewise"], isolated_home, call, plugin_site)
    assert "environment variable BLOCKED is not set" in unset.stdout + unset.stderr
    assert "hooks.PreToolUse[0].words[0]" in unset.stdout + unset.stderr


def test_a_plugin_kind_files_are_pinned_and_guarded_as_a_command_hook_scripts_are(
    plugin_site: Path, write_config, isolated_home: Path
) -> None:  # type: ignore[no-untyped-def]
    """``deny_words`` names its ``words_file`` among its ``files``: ``guard trust`` pins it, so a real ``guard hook`` keeps
    the agent from rewriting it, exactly as it guards a command hook's script."""
    (isolated_home / "blocked-words.txt").write_text("telnet\n", encoding="utf-8")
    write_config(DENY_WORDS.replace("case_sensitive: false", "words_file: blocked-words.txt"), trusted=False)
    trusted = run(TRUST, [str(isolated_home)], isolated_home, site=plugin_site)
    assert trusted.returncode == 0, trusted.stderr
    sync = json.dumps({"tool": "Bash", "args": {"command": "telnet example.com 80"}, "session": "s1"})
    denied = run(CLI, ["hook", "--format", "linewise"], isolated_home, sync, plugin_site)
    assert (denied.returncode, denied.stdout) == (2, "DENY deny_words: 'telnet' is not allowed\n"), denied.stderr
    emptied = {"file_path": str(isolated_home / "blocked-words.txt"), "content": "\n"}
    write = run(
        CLI,
        ["hook", "--format", "linewise"],
        isolated_home,
        json.dumps({"tool": "Write", "args": emptied}),
        plugin_site,
    )
    assert write.returncode == 2 and write.stdout.startswith("DENY guard self-protection"), write.stdout + write.stderr


MAX_INPUT = """\
hooks:
  PreToolUse:
    - kind: max_input
      matcher: Bash
      max_chars: 40
"""


def test_a_plugin_kind_opts_into_the_fast_path_with_its_verdict(
    plugin_site: Path, write_config, isolated_home: Path
) -> None:  # type: ignore[no-untyped-def]
    """``max_input`` names a fast-path ``verdict``: a real ``guard hook`` answers with it, deny and allow, before the
    engine, so neither an event loop nor the kind's hook module (nor its pydantic) is loaded."""
    write_config(MAX_INPUT, trusted=False)
    trusted = run(TRUST, [str(isolated_home)], isolated_home, site=plugin_site)
    assert trusted.returncode == 0, trusted.stderr
    long_input = {"command": "echo " + "x" * 60}
    long_call = json.dumps({"tool": "Bash", "args": long_input, "session": "s1"})
    short_call = json.dumps({"tool": "Bash", "args": {"command": "ls"}, "session": "s1"})
    run(CLI, ["hook", "--format", "linewise"], isolated_home, short_call, plugin_site)  # compiles the snapshot
    denied = run(CLI, ["hook", "--format", "linewise"], isolated_home, long_call, plugin_site)
    assert (denied.returncode, denied.stdout) == (
        2,
        f"DENY max_input: {len(json.dumps(long_input))} characters, at most 40\n",
    ), denied.stderr
    allowed = run(CLI, ["hook", "--format", "linewise"], isolated_home, short_call, plugin_site)
    assert (allowed.returncode, allowed.stdout) == (0, "ALLOW\n"), allowed.stderr
    for answered in (denied, allowed):
        assert "RAN MAX_INPUT False" in answered.stderr and "EVENT LOOP False" in answered.stderr, answered.stderr
