"""The values on the ``guard hook`` fast path (Decision, HookResult, HookSpec, Settings, LoadedConfig) keep the behaviour of the dataclasses they were."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import pytest

from guard.core.decision import Decision, HookResult, merge
from guard.core.settings import LoadedConfig, Settings, default_audit_path, default_cache_url
from guard.core.spec import HookSpec, SmartSettings


def verdict(**changes: object) -> HookResult:
    return HookResult(
        **{"id": "no-delete", "type": "smart", "decision": "deny", "reason": "deletes a home folder", **changes}
    )  # type: ignore[arg-type]


def test_equal_by_value_and_unhashable_like_the_mutable_values_they_are() -> None:
    assert verdict() == verdict() and verdict() != verdict(reason="other") and verdict() != "no-delete"
    assert Decision() == Decision() and Decision(hooks=[verdict()]) != Decision()
    with pytest.raises(TypeError):
        hash(verdict())
    with pytest.raises(AttributeError):
        verdict().colour = "red"  # type: ignore[attr-defined]


def test_defaults_are_fresh_per_instance() -> None:
    first, second = Decision(), Decision()
    first.warnings.append("w")
    first.details["x"] = 1
    assert second.warnings == [] and second.details == {} and HookResult("a", "smart").details == {}


def test_to_dict_is_a_detached_json_copy_that_from_dict_reads_back() -> None:
    result = verdict(details={"calls": [{"tokens": 3}]}, updated_input={"command": "ls"})
    decision = merge([result, HookResult("guard.protect", "protect")])
    data = decision.to_dict()
    result.details["calls"][0]["tokens"] = 99  # the dict is a copy, not a view
    assert json.loads(json.dumps(data)) == data and data["hooks"][0]["details"] == {"calls": [{"tokens": 3}]}
    assert "details" not in data["hooks"][1]  # empty details are left out
    assert Decision.from_dict(
        {**data, "hooks": [*data["hooks"], {"id": "x", "type": "smart", "future_field": 1}]}
    ).hooks[2] == HookResult("x", "smart")
    assert HookResult.from_dict(data["hooks"][0]) == verdict(
        details={"calls": [{"tokens": 3}]}, updated_input={"command": "ls"}
    )


def test_a_reason_names_its_hook_only_when_several_hooks_answered() -> None:
    """The self-protection rule runs on every call and says nothing on nearly all (its kind is ``quiet``): beside it, a
    rule's deny reads as the rule's own words; once another hook (or the protection rule itself) answers, each reason
    is named by its hook."""
    silent = HookResult("guard.protect", "protect")
    assert merge([verdict(), silent]).reason == "deletes a home folder"
    other = HookResult("audit", "command", decision="allow")
    assert merge([verdict(), other]).reason == "[no-delete] deletes a home folder"
    spoke = HookResult("guard.protect", "protect", decision="deny", reason="changes guard's config")
    assert (
        merge([verdict(), spoke]).reason == "[no-delete] deletes a home folder; [guard.protect] changes guard's config"
    )


def test_repr_names_the_fields() -> None:
    assert (
        repr(Decision(reason="r"))
        == "Decision(decision='allow', reason='r', updated_input=None, additional_context=None, hooks=[], details={}, warnings=[], decided_by=[])"
    )


def spec(**changes: object) -> HookSpec:
    return HookSpec(
        **{
            "id": "no-delete",
            "kind": "smart",
            "event": "pre_tool_use",
            "tools": ("Bash",),
            "options": SmartSettings(rule="Deny deletes"),
            **changes,
        }
    )  # type: ignore[arg-type]


def test_hook_spec_is_a_frozen_value_hashed_without_its_callable() -> None:
    assert (
        spec() == spec(func=print) and hash(spec()) == hash(spec(func=print)) and len({spec(), spec(func=print)}) == 1
    )
    assert spec() != spec(options=SmartSettings(rule="Deny deletes", depth="quick")) and spec() != "no-delete"
    assert (
        HookSpec("no-delete", "smart", "pre_tool_use", None, ("Bash",), options=SmartSettings(rule="Deny deletes"))
        == spec()
    )  # positional order kept
    with pytest.raises(AttributeError):
        spec().kind = "http"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del spec().id
    settings = SmartSettings.of(spec())  # the kind's settings are a frozen value too
    with pytest.raises(AttributeError):
        settings.rule = "Allow everything"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del settings.rule
    assert "func" not in repr(spec(func=print)) and repr(spec()).startswith(
        "HookSpec(id='no-delete', kind='smart', event='pre_tool_use'"
    )


def test_hook_spec_replace_round_trip_copy_and_pickle() -> None:
    smart = SmartSettings(rule="Deny deletes", cache_keep=["sample"], paths=[["config", "/p/guard.yaml"]])
    original = spec(func=print, options=smart)
    changed = original.replace(options=smart.replace(depth="quick"))
    assert SmartSettings.of(changed).depth == "quick" and smart.depth == "auto" and changed.func is print
    with pytest.raises(TypeError):
        original.replace(colour="red")
    with pytest.raises(TypeError):
        smart.replace(colour="red")
    data = original.to_dict()
    assert "func" not in data and data["tools"] == ["Bash"] and data["options"]["rule"] == "Deny deletes"
    restored = HookSpec.from_dict(json.loads(json.dumps(data)))  # as the compiled snapshot reads it back
    assert restored == original and SmartSettings.of(restored).paths == (("config", "/p/guard.yaml"),)
    assert SmartSettings.of(restored).cache_keep == ("sample",)
    http = HookSpec("h", "http", "pre_tool_use", options={"url": "https://h", "headers": {"X-Key": "v"}})
    assert HookSpec.from_dict(json.loads(json.dumps(http.to_dict()))) == http and "typed" not in http.to_dict()
    assert copy.deepcopy(original) == original and copy.copy(original).func is print
    assert pickle.loads(pickle.dumps(spec())) == spec() and isinstance(pickle.loads(pickle.dumps(smart)), SmartSettings)


def test_settings_default_to_the_project_folders_of_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings()
    assert (
        settings.cache_url == default_cache_url()
        and settings.audit_path == default_audit_path()
        and settings.models == {}
    )
    assert Settings(audit_path=None).audit_path is None  # None turns the audit log off; it is not "the default"
    assert Settings().models is not settings.models  # a fresh dict per value


def test_settings_are_a_frozen_value_with_replace_and_a_json_round_trip() -> None:
    settings = Settings(models={"quick": "openai/q"}, cache_url="off", audit_path=None, allow_networks=("127.0.0.0/8",))
    with pytest.raises(AttributeError):
        settings.cache_url = "sqlite:///elsewhere.db"  # type: ignore[misc]
    changed = settings.replace(server_url="auto")
    assert changed.server_url == "auto" and settings.server_url is None and changed.models == settings.models
    with pytest.raises(TypeError):
        settings.replace(colour="red")
    data = settings.to_dict()
    data["models"]["quick"] = "changed"  # a copy, not a view
    assert settings.models == {"quick": "openai/q"}
    assert Settings.from_dict(json.loads(json.dumps(settings.to_dict()))) == settings
    assert pickle.loads(pickle.dumps(settings)) == settings and copy.deepcopy(settings) == settings


def test_loaded_config_compares_by_value_with_fresh_defaults() -> None:
    first, second = LoadedConfig(settings=Settings(cache_url="off")), LoadedConfig(settings=Settings(cache_url="off"))
    assert first == second
    first.sources.append("guard.yaml")
    assert first != second and second.sources == [] and second.specs == []
