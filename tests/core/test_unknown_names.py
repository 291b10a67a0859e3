"""A name nothing registers raises one exception, UnknownName, wherever it is looked up (guard.core.errors).

A client format, a hook kind, a transport and a cache backend are each a :class:`~guard.core.plugins.Seam` a plugin
can add to; whichever is asked, by the config, the CLI, the service or a library caller, the answer to a name none
registers is the same type, listing the names there are.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guard.adapters import adapter
from guard.cache import open_cache
from guard.config.loading import load_config
from guard.core.errors import ConfigError, UnknownName
from guard.core.kinds import KINDS
from guard.core.settings import TRANSPORT_ENV, Settings
from guard.judge.transport import transport_name


def test_each_lookup_by_name_raises_unknown_name(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(UnknownName, match="'nosuch'.*claude"):
        adapter("nosuch")
    with pytest.raises(UnknownName, match="'nosuch'.*smart"):
        KINDS.load("nosuch")
    monkeypatch.setenv(TRANSPORT_ENV, "nosuch")
    with pytest.raises(UnknownName, match="'nosuch'"):
        transport_name("openai/gpt-4o-mini")
    with pytest.raises(UnknownName, match="nosuch://"):
        open_cache(Settings(cache_url="nosuch://x"))
    config = tmp_path / "guard.yaml"
    config.write_text("hooks:\n  pre_tool_use:\n    - id: one\n      kind: nosuch\n")
    with pytest.raises(UnknownName, match="unknown hook kind 'nosuch'") as found:
        load_config(str(config))
    assert found.value.key is not None and found.value.key.endswith(".kind"), "the config's key path is named"


def test_unknown_name_is_a_config_error_and_a_lookup_error() -> None:
    """Callers that catch config errors (the CLI's message) or lookups (library code) both catch it."""
    assert issubclass(UnknownName, ConfigError) and issubclass(UnknownName, LookupError)
