"""Smart-hook cache keys: same judgement → same key, anything that changes the verdict → a new key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.judge import bash_event, smart_spec
from fixtures.processes import SOURCE_ROOT

from guard.core.decision import HookResult
from guard.core.settings import Settings
from guard.core.spec import SmartSettings
from guard.judge.keys import cache_value, result_from_cache, smart_cache_key

SETTINGS = Settings(models={"quick": "openai/a", "thorough": "openai/b"})


def key(spec_changes: dict | None = None, settings: Settings = SETTINGS, **event: object) -> str:
    return smart_cache_key(smart_spec(**(spec_changes or {})), settings, bash_event(**event))  # type: ignore[arg-type]


def test_volatile_ids_do_not_change_the_key() -> None:
    payload = bash_event("ls")
    other_session = {
        **payload,
        "session_id": "s2",
        "tool_use_id": "toolu_9",
        "transcript_path": "/x",
        "prompt_id": "p2",
    }
    spec = smart_spec()
    assert smart_cache_key(spec, SETTINGS, payload) == smart_cache_key(
        spec, SETTINGS, dict(reversed(other_session.items()))
    )


@pytest.mark.parametrize(
    "changed",
    [
        lambda: key(command="rm -rf /"),
        lambda: key({"rule": "Deny force pushes."}),
        lambda: key({"depth": "thorough"}),
        lambda: key({"depth": "auto"}),
        lambda: key({"model": "openai/c"}),
        lambda: key({"prompt": "Is it safe? $ARGUMENTS", "rule": None}),
        lambda: key(settings=Settings(models={"quick": "openai/other", "thorough": "openai/b"})),
        lambda: key(settings=Settings(models=SETTINGS.models, api_base="http://127.0.0.1:1/v1")),
        lambda: key(cwd="/elsewhere"),
    ],
)
def test_what_changes_the_verdict_changes_the_key(changed) -> None:  # type: ignore[no-untyped-def]
    assert changed() != key()


#: A smart hook's settings a model's verdict does not depend on: which calls are decided without the model (the lanes)
#: and what such a call may not name.
NOT_IN_THE_KEY = {"skip_read_only", "skip_project_writes", "paths"}
#: Every other setting, changed from the default of an auto-depth rule (whose threshold counts).
CHANGED = {
    "rule": "Deny force pushes.",
    "prompt": "Is it safe? $ARGUMENTS",
    "depth": "thorough",
    "model": "openai/c",
    "confidence_threshold": 0.9,
    "cache_ignore": ("cwd",),
    "cache_keep": ("session_id",),
    "context": "request",
    "judge_together": False,
}


def test_every_smart_setting_a_verdict_depends_on_changes_the_key() -> None:
    """The settings moved from HookSpec's fields into SmartSettings: none of them may drop out of the key unseen,
    and a setting added later must be put in one list or the other."""
    assert set(SmartSettings.__slots__) == CHANGED.keys() | NOT_IN_THE_KEY
    base = key({"depth": "auto"}, session_id="s1")
    for name, value in CHANGED.items():
        assert key({"depth": "auto", name: value}, session_id="s1") != base, name
    for name, value in {"skip_read_only": True, "skip_project_writes": True, "paths": (("config", "/p"),)}.items():
        assert key({"depth": "auto", name: value}, session_id="s1") == base, name


def test_threshold_counts_only_for_auto_and_thorough_model_only_when_it_may_run() -> None:
    assert key({"confidence_threshold": 0.9}) == key()
    assert key({"depth": "auto", "confidence_threshold": 0.9}) != key({"depth": "auto"})
    assert key(settings=Settings(models={"quick": "openai/a", "thorough": "openai/zzz"})) == key()


def test_cache_ignore_and_keep_adjust_the_payload() -> None:
    assert key({"cache_ignore": ("cwd",)}, cwd="/elsewhere") == key({"cache_ignore": ("cwd",)})
    assert key({"cache_keep": ("session_id",)}, session_id="s2") != key({"cache_keep": ("session_id",)})


def test_environment_model_override_changes_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    before = key()
    monkeypatch.setenv("GUARD_MODEL_QUICK", "openai/env-model")
    assert key() != before


def test_cached_value_round_trips_without_errors_or_costs() -> None:
    judged = HookResult(
        id="no-delete",
        type="smart",
        decision="deny",
        reason="rm -rf",
        tier="quick",
        model="openai/a",
        confidence=0.9,
        latency_ms=400.0,
        cost_usd=0.0002,
        details={"prompt_version": "quick.v1", "prompt_hash": "ab", "calls": [{"x": 1}]},
    )
    value = cache_value(judged)
    assert json.loads(json.dumps(value)) == value and "calls" not in value
    hit = result_from_cache(smart_spec(), value)
    assert (hit.decision, hit.reason, hit.tier, hit.model, hit.confidence, hit.cached) == (
        "deny",
        "rm -rf",
        "quick",
        "openai/a",
        0.9,
        True,
    )
    assert (
        hit.cost_usd == 0.0
        and hit.details["original_cost_usd"] == 0.0002
        and hit.details["prompt_version"] == "quick.v1"
    )
    with pytest.raises(ValueError):
        cache_value(HookResult(id="x", type="smart", decision=None, error="timed out"))


def test_key_computation_loads_no_heavy_module() -> None:
    code = (
        "import sys, json\n"
        "from guard.core.spec import HookSpec, SmartSettings\nfrom guard.core.settings import Settings\n"
        "from guard.judge.keys import smart_cache_key, result_from_cache\n"
        "spec = HookSpec(id='r', kind='smart', event='pre_tool_use', options=SmartSettings(rule='no deletes'))\n"
        "k = smart_cache_key(spec, Settings(models={'quick': 'openai/a', 'thorough': 'openai/b'}), {'hook_event_name': 'PreToolUse', 'tool_name': 'Bash', 'tool_input': {'command': 'ls'}})\n"
        "result_from_cache(spec, {'decision': 'allow', 'reason': 'ok'})\n"
        "print(json.dumps([m for m in ('pydantic', 'asyncio', 'litellm', 'httpx', 'tenacity') if m in sys.modules]))\n"
    )
    env = {**os.environ, "PYTHONPATH": SOURCE_ROOT}  # the tree this run imports, not the installed one
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True, env=env)
    assert json.loads(out.stdout) == []


def test_only_a_call_with_a_record_of_written_files_is_keyed_on_the_deferred_code(tmp_path: Path) -> None:
    """The gate puts the record of what the agent wrote only on a call that may run project code unnamed: every other
    call (most cache hits) is keyed without loading the deferred view; a call with a record is keyed on the changed
    files its rule's judges have not seen run, so the same command after such a file changed is judged again."""
    code = (
        "import sys, json\n"
        "from fixtures.judge import bash_event, smart_spec\n"
        "from guard.core.session import WRITTEN_FIELD\n"
        "from guard.core.settings import Settings\n"
        "from guard.judge.keys import smart_cache_key\n"
        "settings, spec = Settings(models={'quick': 'openai/a'}), smart_spec()\n"
        "call = bash_event('python3 x.py', cwd=sys.argv[1])\n"
        "plain = smart_cache_key(spec, settings, call)\n"
        "loaded = 'guard.judge.deferred' in sys.modules\n"
        "record = {'project': sys.argv[1], 'scan': 'complete', 'seen': {}, 'files': []}\n"
        "changed = {**record, 'files': [{'path': sys.argv[1] + '/helper.py', 'digest': 'd1', 'route': 'Write'}]}\n"
        "keys = [smart_cache_key(spec, settings, {**call, WRITTEN_FIELD: r}) for r in (record, changed)]\n"
        "print(json.dumps([loaded, plain, *keys]))\n"
    )
    tests = str(Path(__file__).resolve().parents[1])
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([SOURCE_ROOT, tests])},
    )
    loaded, plain, nothing_unseen, unseen = json.loads(out.stdout)
    assert not loaded
    assert len({plain, nothing_unseen, unseen}) == 3
