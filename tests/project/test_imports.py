"""Imports sit at the top of a module, except on the paths a ``guard hook`` process may load.

``guard hook`` runs on every tool call, so the modules it may load defer what a cache hit does not need. Everywhere
else an import inside a function only hides a module's dependencies from its reader. Third-party packages (the
optional extras, and heavy libraries a command uses on one branch) may be imported inside a function anywhere: a
command whose extra is missing says which one to install before doing any work. So may a module of guard's that
cannot be imported without an extra (the web service and view are starlette applications): it stands for the extra.

"May load" is computed, not listed: the modules reachable from ``guard.cli.main`` through every import statement
(at the top and in functions, ``TYPE_CHECKING`` blocks left out), ``importlib.import_module("constant")`` and the
``"guard.module:attribute"`` strings by which guard's registries (kinds, clients, cache backends) name what they
load. ``guard.cli.main`` loads a command group through an f-string, so only ``guard hook``'s group is on the path.
The modules guard's entry points load into other programs (the pytest plugin every pytest run of a project with guard
installed loads) may defer their own imports too: what they hold off runs only when a test uses it.
``python3 tests/project/test_imports.py`` prints the modules and the count of deferred imports on the hook's paths.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import Any

import guard
from guard.cli.main import COMMANDS

PACKAGE = Path(guard.__file__).parent
ENTRY = "guard.cli.main"
RULE = (
    "outside the modules a guard hook process may load (and the plugin modules other programs load), guard's own "
    "modules and the standard library are imported at the top of the module: only third-party packages, and guard's "
    "modules that need an extra, may be imported inside a function"
)
_REGISTRY_ENTRY = re.compile(r"(guard(?:\.\w+)+):\w+")


@dataclass(frozen=True)
class Import:
    """One import statement (or constant import_module call / registry string) of one module."""

    module: str
    line: int
    names: tuple[str, ...]
    deferred: bool
    statement: bool = True

    @property
    def own_or_stdlib(self) -> bool:
        tops = {name.split(".")[0] for name in self.names}
        return all(top == "guard" or top in sys.stdlib_module_names for top in tops)


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    """The modules ``from … import …`` names: its base, and each name that may be a submodule of it."""
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, base] if base else package)
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def _spelled_out(node: ast.DictComp | ast.ListComp | ast.SetComp | ast.GeneratorExp) -> Iterator[str]:
    """The f-strings of a comprehension over a tuple of constants, each written out (adapters' CLIENTS is
    ``{name: f"guard.adapters.{name}:CLIENT" for name in ("claude", …)}``)."""
    if len(node.generators) != 1 or not isinstance(node.generators[0].target, ast.Name):
        return
    variable, over = node.generators[0].target.id, node.generators[0].iter
    if not isinstance(over, ast.Tuple | ast.List) or not all(
        isinstance(item, ast.Constant) and isinstance(item.value, str) for item in over.elts
    ):
        return
    for template in ast.walk(node):
        if not isinstance(template, ast.JoinedStr):
            continue
        for item in over.elts:
            assert isinstance(item, ast.Constant)
            pieces = []
            for part in template.values:
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    pieces.append(part.value)
                elif (
                    isinstance(part, ast.FormattedValue)
                    and isinstance(part.value, ast.Name)
                    and part.value.id == variable
                ):
                    pieces.append(item.value)
                else:
                    break
            else:
                yield "".join(pieces)


def imports(module: str, path: Path) -> Iterator[Import]:
    """Every import of ``module``, marked deferred when it runs inside a function; TYPE_CHECKING blocks left out."""
    is_package = path.name == "__init__.py"

    def walk(node: ast.AST, deferred: bool) -> Iterator[Import]:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from walk(child, deferred)
            return
        if isinstance(node, ast.Import):
            yield Import(module, node.lineno, tuple(alias.name for alias in node.names), deferred)
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            yield Import(module, node.lineno, tuple(_absolute(module, is_package, node)), deferred)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield Import(module, node.lineno, (node.args[0].value,), deferred, statement=False)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if entry := _REGISTRY_ENTRY.fullmatch(node.value):
                yield Import(module, node.lineno, (entry.group(1),), deferred, statement=False)
        elif isinstance(node, ast.DictComp | ast.ListComp | ast.SetComp | ast.GeneratorExp):
            for text in _spelled_out(node):
                if entry := _REGISTRY_ENTRY.fullmatch(text):
                    yield Import(module, node.lineno, (entry.group(1),), deferred, statement=False)
        inside = deferred or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            yield from walk(child, inside)

    yield from walk(ast.parse(path.read_text(encoding="utf-8"), str(path)), False)


def _at_import(item: Import) -> bool:
    """The import runs as its module is imported (a statement at the top, not in a function)."""
    return item.statement and not item.deferred


def reachable(tree: dict[str, list[Import]], entry: str, *, at_import: bool = False) -> set[str]:
    """The modules an import of ``entry`` may load (a submodule loads its packages too); ``at_import``: those it
    loads as it is imported."""
    seen: set[str] = set()
    todo = [entry]
    while todo:
        module = todo.pop()
        if module in seen or module not in tree:
            continue
        seen.add(module)
        for found in tree[module]:
            if at_import and not _at_import(found):
                continue
            for name in found.names:
                parts = name.split(".")
                todo += [".".join(parts[:end]) for end in range(1, len(parts) + 1)]
    return seen


@functools.cache
def _pyproject() -> dict[str, Any]:
    return tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))


def plugin_entries() -> set[str]:
    """The modules pyproject's entry points have other programs load (pytest11's plugin)."""
    groups = _pyproject()["project"].get("entry-points", {})
    return {target.split(":")[0] for entries in groups.values() for target in entries.values()}


@functools.cache
def scan() -> tuple[dict[str, list[Import]], set[str]]:
    tree = {module: list(imports(module, path)) for module, path in modules().items()}
    return tree, reachable(tree, ENTRY)


def _distribution(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.match(r"[\w.-]+", requirement).group()).lower()  # type: ignore[union-attr]


@functools.cache
def bare_install() -> frozenset[str]:
    """The top-level packages ``pip install plainguard`` brings, extras left out (pyproject's dependencies)."""
    required = {_distribution(spec) for spec in _pyproject()["project"]["dependencies"]}
    return frozenset(
        name for name, found in packages_distributions().items() if required & {_distribution(d) for d in found}
    )


@functools.cache
def needs_extra(module: str) -> bool:
    """Importing ``module`` imports (at the top of it or of a guard module it imports so) a package of an extra."""
    tree, _ = scan()
    tops = {
        name.split(".")[0]
        for loaded in reachable(tree, module, at_import=True)
        for item in tree[loaded]
        if _at_import(item)
        for name in item.names
    }
    return bool(tops - {"guard"} - sys.stdlib_module_names - bare_install())


def _statements(found: list[Import]) -> list[Import]:
    """Deferred import statements of guard's modules or the standard library (a registry string or an import_module
    call is how guard loads a plugin or a backend, not a habit)."""
    return [item for item in found if item.statement and item.deferred and item.own_or_stdlib]


def misplaced(found: list[Import]) -> list[Import]:
    """The deferred imports the rule forbids off the hook's paths."""
    return [item for item in _statements(found) if not any(needs_extra(name) for name in item.names)]


def test_the_reachability_follows_what_a_hook_process_loads() -> None:
    """The scan must see the hook group, the kinds a registry names by string and relative imports, and stop at
    the f-string by which main loads the other command groups (else the rule below tests nothing)."""
    _, hot = scan()
    assert {"guard.cli.hook", "guard.hooks.smart", "guard.judge.keys", "guard.adapters.installers"} <= hot
    assert {"guard.adapters.claude", "guard.adapters.codex", "guard.adapters.cursor"} <= hot, "adapters' CLIENTS missed"
    assert not {"guard.cli.check", "guard.cli.eval", "guard.cli.install", "guard.server.app"} & hot
    assert "guard.eval" not in hot, "a module named only as data (self_invocation's spellings) counted as an import"
    assert plugin_entries() == {"guard.eval.pytest_plugin"}


def test_a_module_built_on_an_extra_is_told_from_one_that_defers_it() -> None:
    """guard serve without the serve extra must still say what to install: its starlette app may be imported late."""
    assert needs_extra("guard.server.app")
    assert not needs_extra("guard.audit.postgres"), "psycopg is imported where it is used, not at the top"
    assert not needs_extra("guard.cli.check")


def test_every_command_group_imports_without_an_extra() -> None:
    """So ``guard serve`` on the bare wheel reaches the line that says which extra to install, not a traceback."""
    built_on_extras = sorted(
        {command.group for command in COMMANDS.values() if needs_extra(f"guard.cli.{command.group}")}
    )
    assert not built_on_extras, f"these command groups import an extra's package at their top: {built_on_extras}"


def test_imports_sit_at_the_top_outside_the_hooks_paths() -> None:
    tree, hot = scan()
    wrong = [
        f"{item.module.replace('.', '/')}.py:{item.line} imports {item.names[0]} inside a function"
        for module in sorted(set(tree) - hot - plugin_entries())
        for item in misplaced(tree[module])
    ]
    print(f"{deferred_on_the_hooks_paths()} imports deferred on the {len(hot)} modules guard hook may load")
    assert not wrong, RULE + ":\n" + "\n".join(wrong)


def deferred_on_the_hooks_paths() -> int:
    tree, hot = scan()
    return sum(len(_statements(tree[module])) for module in hot)


if __name__ == "__main__":
    tree, hot = scan()
    print(f"{len(hot)} of {len(tree)} modules may be loaded by guard hook")
    print(f"{deferred_on_the_hooks_paths()} imports of guard's modules or the standard library deferred on those paths")
