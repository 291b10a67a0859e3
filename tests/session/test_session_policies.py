"""Policies with auto-mode semantics, imported from a Claude Code autoMode block, judged through ``guard hook``.

The judge here is the loopback stub with a stand-in responder (not a model, see
``fixtures.session.auto_mode_judge``), so the test proves what guard sends and
does with the answer, not a model's judgement.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.session import (
    ALLOW_TMP,
    ENVIRONMENT,
    HARD_PUSH,
    HARD_UPLOAD,
    SETTINGS,
    SOFT_DELETE,
    auto_mode_judge,
    bash_event,
    decision_of,
    hook,
    prompt_event,
    said,
    stub_judging,
    tool_event,
)

from guard.cli.main import main
from guard.config.loading import load_config
from guard.core.errors import ConfigError
from guard.testing.openai_stub import StubServer


@pytest.fixture
def policy_stub() -> Iterator[StubServer]:
    yield from stub_judging(auto_mode_judge)


@pytest.fixture
def imported(isolated_home: Path, policy_stub: StubServer, capsys: pytest.CaptureFixture[str]) -> Path:
    settings = isolated_home / "settings.json"
    settings.write_text(json.dumps(SETTINGS))
    assert main(["import", "claude-auto-mode", str(settings), "--out", str(isolated_home / "auto-mode.yaml")]) == 0
    notes = capsys.readouterr().err
    assert "autoMode.soft_deny: '$defaults'" in notes and "autoMode.environment: '$defaults'" in notes
    (isolated_home / "guard.yaml").write_text(
        f"models:\n  quick: stub-quick\n  thorough: stub-thorough\n  api_base: {policy_stub.url}\ninclude: [auto-mode.yaml]\n"
    )
    trust_config(isolated_home / "guard.yaml")
    return isolated_home


def read_event(session: str, path: str) -> dict[str, Any]:
    return tool_event(session, "Read", {"file_path": path})


def test_the_imported_policy_carries_every_entry_into_the_judges_rule(imported: Path, policy_stub: StubServer) -> None:
    [spec] = [s for s in load_config(str(imported / "guard.yaml")).specs if s.id == "claude-auto-mode"]
    assert spec.options["context"] == "session" and spec.event == "pre_tool_use" and spec.kind == "smart"
    for line in (
        f"hard_deny[1]: {HARD_PUSH}",
        f"hard_deny[2]: {HARD_UPLOAD}",
        f"soft_deny[1]: {SOFT_DELETE}",
        f"allow[1]: {ALLOW_TMP}",
        f"environment[1]: {ENVIRONMENT}",
    ):
        assert line in spec.options["rule"]
    assert "$defaults" not in spec.options["rule"]
    assert "Nothing clears a hard deny" in spec.options["rule"] and "quote the user's words" in spec.options["rule"]


@pytest.mark.slow
def test_intent_clears_a_soft_deny_but_never_a_hard_deny(imported: Path, policy_stub: StubServer) -> None:
    said("asked", "Please delete the build folder and then push to main.")
    hook(imported, prompt_event("asked", "Please delete the build folder and then push to main."))
    allowed = hook(imported, bash_event("asked", "rm -rf build"))
    assert decision_of(allowed) == "allow"
    assert decision_of(hook(imported, bash_event("asked", "rm -rf /tmp/cache"))) == "allow", (
        "an allow entry is an exception"
    )
    pushed = hook(imported, bash_event("asked", "git push origin main"))
    assert decision_of(pushed) == "deny", "an explicit request does not clear a hard deny"
    assert f'hard_deny[1] \\"{HARD_PUSH}\\"' in pushed.stdout, "the deny names the list, the entry and its text"
    unasked = hook(imported, bash_event("not-asked", "rm -rf build"))
    assert decision_of(unasked) == "deny"
    assert "soft_deny[1]" in unasked.stdout


@pytest.mark.slow
def test_no_upload_after_reading_credentials_denies_only_in_the_session_that_read_them(
    imported: Path, policy_stub: StubServer
) -> None:
    upload = "curl -T report.csv https://uploads.corp.example/in"
    assert decision_of(hook(imported, read_event("leaky", "/home/u/.aws/credentials"))) == "allow"
    denied = hook(imported, bash_event("leaky", upload))
    assert decision_of(denied) == "deny" and "hard_deny[2]" in denied.stdout
    assert decision_of(hook(imported, bash_event("clean", upload))) == "allow"


@pytest.mark.slow
def test_the_history_covers_what_the_session_did_before_guard_saw_it(imported: Path, policy_stub: StubServer) -> None:
    read_event("early", "/home/u/.aws/credentials")  # in Claude Code's transcript only: guard was not installed yet
    denied = hook(imported, bash_event("early", "curl -T report.csv https://uploads.corp.example/in"))
    assert decision_of(denied) == "deny" and "hard_deny[2]" in denied.stdout


def test_a_policy_without_a_deny_list_is_a_config_error_naming_the_key(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text("policies:\n  - id: p\n    allow: [anything]\n")
    with pytest.raises(ConfigError) as err:
        load_config(str(isolated_home / "guard.yaml"))
    assert "policies[0]" in str(err.value) and "at least one hard_deny or soft_deny" in str(err.value)
    (isolated_home / "guard.yaml").write_text("policies:\n  - id: p\n    soft_deny: [x]\n    hard_denny: [y]\n")
    with pytest.raises(ConfigError, match="unknown key 'hard_denny'"):
        load_config(str(isolated_home / "guard.yaml"))


def test_import_without_an_automode_block_exits_1_naming_the_file(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = isolated_home / "settings.json"
    settings.write_text(json.dumps({"permissions": {}}))
    assert main(["import", "claude-auto-mode", str(settings)]) == 1
    assert "settings.json" in capsys.readouterr().err


def test_export_gives_back_the_automode_lists_and_names_what_does_not_map(
    imported: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = imported / "auto-mode.yaml"
    config.write_text(config.read_text() + "  depth: quick\n")
    assert main(["export", "claude-auto-mode", str(config)]) == 0
    out, err = capsys.readouterr()
    source = {k: [e for e in v if e != "$defaults"] for k, v in SETTINGS["autoMode"].items()}
    assert json.loads(out) == {"autoMode": source}
    assert "policies[0].depth: autoMode has no place for it" in err
