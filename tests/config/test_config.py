from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from guard.config.loading import load_config
from guard.config.search import find_config
from guard.config.snapshot import FORMAT
from guard.core.errors import ConfigError
from guard.core.settings import LoadedConfig
from guard.core.spec import HookSpec, SmartSettings
from guard.protection.targets import HOOK_ID


def _own(loaded: LoadedConfig) -> list[HookSpec]:
    """The config's own hooks, without the built-in self-protection hook that ends every list."""
    assert loaded.specs[-1].id == HOOK_ID
    return loaded.specs[:-1]


FULL = """
models:
  quick: openai/gpt-4.1-mini
  thorough: anthropic/claude-sonnet-4-5
cache:
  url: sqlite:///.guard/cache.db
  ttl: 12h
webhooks:
  allow_networks: ["10.20.0.0/16"]
hooks:
  PreToolUse:
    - id: no-destructive-shell
      matcher: Bash
      rule: Deny shell commands that delete or overwrite files outside the project directory.
      depth: auto
      failure_mode: fail_closed
      timeout: 20
    - tools: ["mcp__github__*"]
      url: https://ops.example.com/hook
      secret: ${OPS_WEBHOOK_SECRET}
      fire_and_forget: true
    - matcher: Write|Edit
      command: ./scripts/check-path.sh
    - matcher: Bash
      callable: mypkg.guards:no_force_push
  Stop:
    - rule: Do not stop while the tests fail.
"""


def test_contract_example_loads(write_config, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPS_WEBHOOK_SECRET", "s3cret")
    write_config(FULL)
    cfg = load_config()
    specs = _own(cfg)
    assert cfg.settings.models == {"quick": "openai/gpt-4.1-mini", "thorough": "anthropic/claude-sonnet-4-5"}
    assert cfg.settings.cache_ttl == 12 * 3600 and cfg.settings.allow_networks == ("10.20.0.0/16",)
    kinds = [(s.id, s.kind, s.event) for s in specs]
    assert kinds == [
        ("no-destructive-shell", "smart", "pre_tool_use"),
        ("pre_tool_use[1]", "http", "pre_tool_use"),
        ("pre_tool_use[2]", "command", "pre_tool_use"),
        ("pre_tool_use[3]", "callable", "pre_tool_use"),
        ("stop[0]", "smart", "stop"),
    ]
    smart, http = specs[0], specs[1]
    assert smart.failure_mode == "fail_closed" and smart.timeout == 20 and smart.options["depth"] == "auto"
    assert http.options["secret"] == "s3cret" and http.tools == ("mcp__github__*",) and http.fire_and_forget
    assert specs[2].failure_mode == "fail_open"  # the default


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            "hooks:\n  PreToolUse:\n    - matcher: Bash\n      timeout: 900\n      command: x\n",
            "hooks.PreToolUse[0].timeout",
        ),
        ("hooks:\n  PreToolUse:\n    - matcher: Bash\n      rule: a\n      command: b\n", "hooks.PreToolUse[0]"),
        ("hooks:\n  PreToolUse:\n    - matcher: '(bad'\n      command: x\n", "hooks.PreToolUse[0].matcher"),
        ("hooks:\n  PreToolUse:\n    - tools: []\n      command: x\n", "hooks.PreToolUse[0].tools"),
        ("hooks:\n  PreToolUse:\n    - command: x\n      colour: red\n", "hooks.PreToolUse[0].colour"),
        ("hooks:\n  PreToolUse:\n    - callable: not-a-target\n", "hooks.PreToolUse[0].callable"),
        ("hooks:\n  PreToolUse: {command: x}\n", "hooks.PreToolUse"),
        ("hooks:\n  'bad event!':\n    - command: x\n", "hooks.bad event!"),
        ("cache:\n  ttl: soon\n", "cache.ttl"),
        ("models:\n  fast: x\n", "models.fast"),
        ("webhooks:\n  allow_networks: [10.0.0.0/33]\n", "webhooks.allow_networks"),
        (
            "hooks:\n  PreToolUse:\n    - id: a\n      command: x\n    - id: a\n      command: y\n",
            "hooks.PreToolUse[1].id",
        ),
        ("hooks:\n  PreToolUse:\n    - url: https://h/${NOT_SET_ANYWHERE}\n", "hooks.PreToolUse[0].url"),
    ],
)
def test_errors_name_the_file_and_key_path(write_config, text: str, where: str) -> None:  # type: ignore[no-untyped-def]
    path = write_config(text)
    with pytest.raises(ConfigError) as info:
        load_config(str(path))
    assert str(path) in str(info.value) and where in str(info.value)


def test_invalid_yaml_names_the_line(write_config) -> None:  # type: ignore[no-untyped-def]
    path = write_config("hooks:\n  PreToolUse:\n    - command: [unclosed\n")
    with pytest.raises(ConfigError, match=r"line \d+"):
        load_config(str(path))


def test_discovery_order(isolated_home: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert find_config() is None and load_config().specs == []
    (isolated_home / ".guard").mkdir()
    (isolated_home / ".guard/guard.yaml").write_text("hooks: {}\n")
    assert find_config() == Path(".guard/guard.yaml")
    (isolated_home / "guard.yaml").write_text("hooks: {}\n")
    assert find_config() == Path("guard.yaml")
    monkeypatch.setenv("GUARD_CONFIG", "/elsewhere.yaml")
    assert find_config() == Path("/elsewhere.yaml")
    assert find_config("x.yaml") == Path("x.yaml")


def test_claude_settings_json_hooks_become_guard_hooks(isolated_home: Path) -> None:
    settings = {
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {"type": "command", "command": "guard hook --format claude", "timeout": 30},
                        {"type": "command", "command": "./check.sh", "timeout": 5},
                        {"type": "prompt", "prompt": "Is this safe? $ARGUMENTS"},
                    ],
                },
                {
                    "matcher": "mcp__.*",
                    "hooks": [{"type": "http", "url": "https://hooks.example.com/x"}, {"type": "agent", "prompt": "x"}],
                },
            ]
        },
    }
    path = isolated_home / ".claude/settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(settings))
    cfg = load_config(str(path))
    specs = _own(cfg)
    assert [(s.kind, s.matcher) for s in specs] == [("command", "Bash"), ("smart", "Bash"), ("http", "mcp__.*")]
    assert specs[0].timeout == 5 and specs[1].options["prompt"] == "Is this safe? $ARGUMENTS"


def test_bad_timeout_in_claude_settings_is_named(isolated_home: Path) -> None:
    path = isolated_home / "settings.json"
    path.write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./x.sh", "timeout": "soon"}]}]}})
    )
    with pytest.raises(ConfigError, match=r"hooks\.Stop\[0\]\.hooks\[0\]\.timeout"):
        load_config(str(path))


def test_guard_yaml_includes_claude_settings(write_config, isolated_home: Path) -> None:  # type: ignore[no-untyped-def]
    (isolated_home / ".claude").mkdir()
    (isolated_home / ".claude/settings.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./lint.sh"}]}]}})
    )
    write_config("include: [.claude/settings.json]\nhooks:\n  PreToolUse:\n    - command: ./a.sh\n")
    assert [s.event for s in _own(load_config())] == ["pre_tool_use", "stop"]


def test_snapshot_is_reused_and_invalidated_when_the_file_changes(write_config, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = write_config("hooks:\n  PreToolUse:\n    - id: one\n      command: ./a.sh\n")
    assert [s.id for s in _own(load_config())] == ["one"]
    import guard.config.parse as parse

    def boom(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("re-parsed although nothing changed")

    with monkeypatch.context() as m:
        m.setattr(parse, "parse_config", boom)
        assert [s.id for s in _own(load_config())] == ["one"]  # from the snapshot
    path.write_text("hooks:\n  PreToolUse:\n    - id: two\n      command: ./b.sh\n")
    os.utime(path, ns=(1, 1))
    assert [s.id for s in _own(load_config())] == ["two"]


def test_secrets_stay_out_of_the_snapshot_and_env_changes_apply(write_config, monkeypatch, isolated_home: Path) -> None:  # type: ignore[no-untyped-def]
    write_config("hooks:\n  SessionEnd:\n    - url: https://ops.example.com/h\n      secret: ${HOOK_SECRET}\n")
    monkeypatch.setenv("HOOK_SECRET", "first-secret-value")
    assert _own(load_config())[0].options["secret"] == "first-secret-value"
    snapshots = list((isolated_home.parent / "home/.cache/guard/config").glob("*.json"))
    assert snapshots and "first-secret-value" not in snapshots[0].read_text()
    monkeypatch.setenv("HOOK_SECRET", "rotated")
    assert _own(load_config())[0].options["secret"] == "rotated"


def _written_before(config: Path, isolated_home: Path, older: int, rewrite: Callable[[dict[str, Any]], None]) -> Path:
    """The trusted copy's compiled snapshot, each spec rewritten by ``rewrite`` and sealed, as a guard whose snapshot
    format was ``older`` wrote it."""
    from guard.config.pinning import load_trusted
    from guard.storage.secret import seal

    assert load_trusted().status == "trusted"
    [snapshot] = (isolated_home.parent / "home/.cache/guard/config").glob("*-*.json")  # the trusted copy's
    data = json.loads(snapshot.read_text().partition("\n")[2])
    for spec in data["specs"]:
        rewrite(spec)
    body = json.dumps({**data, "format": older})
    snapshot.write_text(f"{seal('snapshot', str(config.resolve()), body)}\n{body}")
    return snapshot


def test_a_config_trusted_before_http_options_moved_still_loads(write_config, isolated_home: Path) -> None:  # type: ignore[no-untyped-def]
    """A compiled snapshot of the trusted copy from before an http hook's url, secret and headers moved into its options
    (format 4, those keys beside every hook's) is not believed: the trusted copy is parsed again and the snapshot re-made."""
    from guard.config.pinning import load_trusted

    config = write_config(
        "webhooks:\n  allow_networks: [127.0.0.0/8]\nhooks:\n  PreToolUse:\n    - id: remote\n"
        "      url: http://127.0.0.1:9/hook\n      secret: s3cret\n      headers: {X-Team: ops}\n"
    )

    def http_keys_beside_every_hooks(spec: dict[str, Any]) -> None:
        options = spec.pop("options", {})
        spec.update(
            url=options.get("url"),
            secret=options.get("secret"),
            fire_and_forget=options.get("fire_and_forget", False),
            headers=[[name, value] for name, value in (options.get("headers") or {}).items()],
        )

    snapshot = _written_before(config, isolated_home, 4, http_keys_beside_every_hooks)
    [remote] = [spec for spec in load_trusted().loaded.specs if spec.id == "remote"]
    assert dict(remote.options) == {
        "url": "http://127.0.0.1:9/hook",
        "secret": "s3cret",
        "fire_and_forget": False,
        "headers": {"X-Team": "ops"},
    }
    assert json.loads(snapshot.read_text().partition("\n")[2])["format"] == FORMAT


def test_a_config_trusted_before_smart_settings_moved_still_loads(write_config, isolated_home: Path) -> None:  # type: ignore[no-untyped-def]
    """A compiled snapshot from before a smart hook's settings moved into its options (format 5: rule, depth, model …
    beside every hook's keys) is not believed: the trusted copy is parsed again, the hook judges by its rule."""
    from guard.config.pinning import load_trusted

    config = write_config(
        "hooks:\n  PreToolUse:\n    - id: no-delete\n      rule: Deny deletes.\n      depth: quick\n"
        "      model: openai/own\n      cache_keep: [sample]\n"
    )

    def smart_keys_beside_every_hooks(spec: dict[str, Any]) -> None:
        spec.pop("typed")
        spec.update(spec.pop("options"))

    snapshot = _written_before(config, isolated_home, 5, smart_keys_beside_every_hooks)
    [rule] = [spec for spec in load_trusted().loaded.specs if spec.id == "no-delete"]
    settings = SmartSettings.of(rule)
    assert (settings.rule, settings.depth, settings.model, settings.cache_keep) == (
        "Deny deletes.",
        "quick",
        "openai/own",
        ("sample",),
    )
    assert json.loads(snapshot.read_text().partition("\n")[2])["format"] == FORMAT
    [again] = [spec for spec in load_trusted().loaded.specs if spec.id == "no-delete"]  # now from the new snapshot
    assert again == rule and isinstance(again.options, SmartSettings)


def test_env_default_syntax(write_config) -> None:  # type: ignore[no-untyped-def]
    write_config("models:\n  quick: ${QUICK_MODEL:-openai/gpt-4.1-mini}\n")
    assert load_config().settings.models["quick"] == "openai/gpt-4.1-mini"


def test_model_env_overrides_config(write_config, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    write_config("models:\n  quick: openai/a\n  thorough: openai/b\n")
    s = load_config().settings
    monkeypatch.setenv("GUARD_MODEL_QUICK", "openai/env")
    monkeypatch.setenv("GUARD_API_BASE", "http://127.0.0.1:9/v1")
    assert s.model_for("quick") == "openai/env" and s.model_for("thorough") == "openai/b"
    assert s.effective_api_base() == "http://127.0.0.1:9/v1"


def test_a_config_cannot_name_the_self_protection_kind(tmp_path: Path) -> None:
    """guard adds its self-protection rule itself (``Kind.written`` is false): ``kind: protect`` was read as a second
    such rule with no paths to protect; it is refused as an unknown kind is, and the choices leave it out."""
    from guard.core.errors import UnknownName

    config = tmp_path / "guard.yaml"
    config.write_text("hooks:\n  pre_tool_use:\n    - id: mine\n      kind: protect\n")
    with pytest.raises(UnknownName, match="unknown hook kind 'protect'; choose one of smart, command, http, callable,"):
        load_config(str(config))
