"""One vocabulary (docs/glossary.md): what a decision can be is spelled once, in guard/core/decision.py, and every
``GUARD_*`` environment variable is named and read once, in guard/core/settings.py.

These tests read guard's source, so a copy written out again elsewhere fails here rather than drifting apart from
the one the merge, the adapters, eval and the view share.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import guard

ROOT = Path(guard.__file__).parent
DECISION = ROOT / "core" / "decision.py"
SETTINGS = ROOT / "core" / "settings.py"

#: deny and ask side by side, in either order, in any brackets or quotes (a tuple, a set, an SQL ``IN`` list).
_DENY_ASK = re.compile(r"""[(\[{]\s*(['"])(deny|ask)\1\s*,\s*(['"])(?!\2)(deny|ask)\3\s*[)\]}]""")


def _sources() -> dict[Path, str]:
    return {path: path.read_text(encoding="utf-8") for path in sorted(ROOT.rglob("*.py"))}


def test_the_decisions_that_stop_a_call_are_written_out_once() -> None:
    """``STOPS`` (deny, ask) is declared in guard.core.decision; the adapters, eval, backtests and the view import it."""
    found = [
        f"{path.relative_to(ROOT)}:{text[: match.start()].count(chr(10)) + 1}"
        for path, text in _sources().items()
        if path != DECISION
        for match in _DENY_ASK.finditer(text)
    ]
    assert found == [], "import STOPS from guard.core.decision instead"
    assert len(_DENY_ASK.findall(DECISION.read_text(encoding="utf-8"))) == 1


def test_the_check_sees_each_spelling() -> None:
    """The pattern is not vacuous: every way the pair was written before this check catches."""
    for spelled in ('in ("deny", "ask")', "IN ('deny', 'ask')", 'frozenset({"deny", "ask"})', '["ask", "deny"]'):
        assert _DENY_ASK.search(spelled), spelled
    assert not _DENY_ASK.search('("deny", "deny")') and not _DENY_ASK.search('("allow", "deny")')


def _written_out(text: str, words: frozenset[str]) -> list[int]:
    """The lines of ``text`` that spell ``words`` out as a tuple, list or set (a ``Literal[...]``'s too)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.Tuple, ast.List, ast.Set))
        and all(isinstance(item, ast.Constant) for item in node.elts)
        and {item.value for item in node.elts if isinstance(item, ast.Constant)} == words
    ]


#: Words guard declares once in guard.core.spec: a skill's, a plugin's and a user config's hooks (stricter command
#: analysis, fail_closed by default), and the depths a smart hook may be judged at.
SPELLED_IN_SPEC = {
    "EXTERNAL_SOURCES": frozenset({"skill", "plugin", "user"}),
    "DEPTHS": frozenset({"quick", "thorough", "auto"}),
}


@pytest.mark.parametrize("name", sorted(SPELLED_IN_SPEC))
def test_a_list_of_words_is_written_out_once(name: str) -> None:
    """Each of :data:`SPELLED_IN_SPEC` is spelled out in guard.core.spec alone; a copy elsewhere could drift apart."""
    from guard.core import spec as declared

    words = SPELLED_IN_SPEC[name]
    assert frozenset(getattr(declared, name)) == words
    spec = ROOT / "core" / "spec.py"
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path, text in _sources().items()
        if path != spec
        for line in _written_out(text, words)
    ]
    assert found == [], f"import {name} from guard.core.spec instead"
    assert len(_written_out(spec.read_text(encoding="utf-8"), words)) == 1
    assert _written_out(f"if x in {tuple(sorted(words))!r}:\n    pass\n", words) == [1]


def _code_strings(text: str) -> list[tuple[int, str]]:
    """Each string constant of ``text`` with its line, docstrings left out (they are prose, not values)."""
    tree = ast.parse(text)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_the_distribution_name_is_written_out_once() -> None:
    """``plainguard``, guard's name on PyPI, is guard.core.extras' DISTRIBUTION; messages, reports and the judge's
    User-Agent import it."""
    from guard.core.extras import DISTRIBUTION

    found = [
        f"{path.relative_to(ROOT)}"
        for path, text in _sources().items()
        for _, value in _code_strings(text)
        if DISTRIBUTION in value
    ]
    assert found == ["core/extras.py"]


def _guard_variables_named(path: Path) -> list[str]:
    """Each string in ``path`` that is a whole ``GUARD_*`` variable name (not a sentence that mentions one), with its line."""
    pattern = re.compile(r"GUARD_[A-Z0-9_]+")
    return [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.value}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and pattern.fullmatch(node.value)
    ]


def test_guard_variables_are_named_and_read_in_the_settings_module_only() -> None:
    """Every ``GUARD_*`` variable is declared in guard.core.settings and read through its ``from_env``, the hook path included."""
    from guard.core import settings

    named = [found for path in _sources() if path != SETTINGS for found in _guard_variables_named(path)]
    assert named == [], "declare the variable in guard.core.settings (VARIABLES) and read it with from_env"
    declared = {found.rsplit(" ", 1)[1] for found in _guard_variables_named(SETTINGS)}
    assert declared - {settings.LAUNCHER_ENV} == set(settings.VARIABLES), (
        "a name in settings that from_env does not know, or the reverse"
    )
    assert len(settings.VARIABLES) >= 20


def test_from_env_reads_only_declared_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    from guard.core.settings import CONFIG_ENV, from_env

    monkeypatch.setenv(CONFIG_ENV, "/somewhere/guard.yaml")
    assert from_env(CONFIG_ENV) == "/somewhere/guard.yaml"
    assert from_env(CONFIG_ENV, {}) is None and from_env(CONFIG_ENV, {CONFIG_ENV: ""}) == ""
    with pytest.raises(KeyError, match="GUARD_NOT_A_SETTING"):
        from_env("GUARD_NOT_A_SETTING")


#: Registry names that meant two different things in two modules (client formats and dataset import formats were both
#: ``FORMATS``; guard.adapters' client registry and guard.setup.install's client profiles were both ``CLIENTS``; the
#: judge's tier profiles and the lanes' tier names were both ``TIERS``).
ONE_MEANING = ("FORMATS", "CLIENTS", "TIERS")


def test_a_registry_name_is_defined_in_one_module() -> None:
    defined: dict[str, list[str]] = {name: [] for name in ONE_MEANING}
    for path, text in _sources().items():
        for node in ast.parse(text).body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            for target in targets:
                if isinstance(target, ast.Name) and target.id in defined:
                    defined[target.id].append(str(path.relative_to(ROOT)))
    assert {name: where for name, where in defined.items() if len(where) > 1} == {}


def test_every_name_the_glossary_gives_is_in_the_code() -> None:
    """docs/glossary.md says which class or constant each word is; a rename that leaves it behind fails here."""
    import importlib

    glossary = (ROOT.parent / "docs" / "glossary.md").read_text(encoding="utf-8")
    # dotted names in a package of guard (the self-protection rule's id, `guard.protect`, is a hook id, not code)
    named = sorted(
        name for name in set(re.findall(r"`(guard(?:\.\w+)+)`", glossary)) if (ROOT / name.split(".")[1]).is_dir()
    )
    assert len(named) >= 5
    for dotted in named:
        module, _, attribute = dotted.rpartition(".")
        try:
            found: object = importlib.import_module(dotted)
        except ModuleNotFoundError:
            found = getattr(importlib.import_module(module), attribute, None)
        assert found is not None, f"docs/glossary.md names {dotted}, which guard does not have"
    for name in ("STOPS", "DECISIONS", "BY_STRICTNESS"):
        assert f"`{name}`" in glossary and hasattr(importlib.import_module("guard.core.decision"), name)


def test_the_built_in_kinds_are_the_ones_the_registry_holds() -> None:
    """``HookKind`` (the type of a built-in kind's name) and the kinds registry name the same five kinds."""
    from typing import get_args

    from guard.core.kinds import KINDS
    from guard.core.spec import HookKind

    assert set(get_args(HookKind)) == KINDS.builtins == {"smart", "command", "http", "callable", "protect"}


def test_the_mark_of_a_redacted_secret_is_written_out_once() -> None:
    """``REDACTED`` is declared in guard.core.decision: the audit log, key redaction in model errors, the service's
    access log and the backtest report show the one mark, so a reader (and ``guard log``) can search for it."""
    found = [
        f"{path.relative_to(ROOT)}: {value}"
        for path, text in _sources().items()
        for _, value in _code_strings(text)
        if "[redacted]" in value
    ]
    assert found == ["core/decision.py: [redacted]"]
