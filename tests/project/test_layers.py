"""The layer map in pyproject.toml ([tool.importlinter]) holds, and import-linter catches what the old check missed.

    core      errors, events, hook specs, the Hook seam, decisions, settings
    parts     hooks, judge, cache, config, audit, storage, adapters, session, command analysis, webhooks, protection
    runtime   registry, matching, engine, the gate (the one decision path); skills and subagents mount on its registry
    surfaces  cli, server, view, eval, backtest, datasets, setup (install, doctor), sandbox, testing, integrations

docs/architecture.md's map of the folders is made from the same layers and each
package's docstring: ``python3 tests/project/test_layers.py`` writes it, and a test fails
when the map and the tree differ.

import-linter sees every import statement: relative ones, imports inside functions and
``try`` blocks, and TYPE_CHECKING ones. The few deliberate upward imports are listed
with their reasons under ``ignore_imports``. The planted tests copy the package, add one
upward import, and run the same command ``.ci/run`` runs.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import guard

ROOT = Path(guard.__file__).parent
PYPROJECT = ROOT.parent / "pyproject.toml"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def contracts() -> list[dict[str, object]]:
    found = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    assert isinstance(found, list)
    return found


def layer_contract() -> dict[str, object]:
    return next(contract for contract in contracts() if contract["id"] == "layers")


#: The layers whose packages import each other most: each has a contract of its own ordering them (the "acyclic"
#: contract keeps every layer free of cycles).
SIBLING_CONTRACTS = {"parts": "parts", "surfaces": "surfaces"}


def layer_names() -> list[set[str]]:
    """Each layer's top-level names under guard/, top layer first."""
    layers = layer_contract()["layers"]
    assert isinstance(layers, list)
    return [{name.strip() for name in layer.split(":")} for layer in layers]


LAYER_NAMES = ("surfaces", "runtime", "parts", "core")
ARCHITECTURE = ROOT.parent / "docs" / "architecture.md"
README = ROOT.parent / "README.md"
MAP_START, MAP_END = "<!-- layer map: made by python3 tests/project/test_layers.py -->", "<!-- end of layer map -->"


def layer_map() -> str:
    """The map docs/architecture.md shows: each layer, top first, and each package in it with its docstring's first line."""
    lines = ["| layer | package | what it is |", "|---|---|---|"]
    for layer, names in zip(LAYER_NAMES, layer_names()):
        for name in sorted(names):
            doc = ast.get_docstring(ast.parse((ROOT / name / "__init__.py").read_text(encoding="utf-8"))) or ""
            summary = " ".join(doc.split("\n\n")[0].split()).replace(":mod:`", "`").replace("``", "`")
            lines.append(f"| {layer} | `guard/{name}/` | {summary} |")
            layer = ""
    return "\n".join(lines)


def readme_map() -> str:
    """The README's short form of the same map: one line per layer, its packages."""
    rows = [
        f"{layer:<9} {' '.join(f'{name}/' for name in sorted(names))}"
        for layer, names in zip(LAYER_NAMES, layer_names())
    ]
    return "\n".join(["```text", *rows, "```"])


def _write_between(path: Path, body: str) -> None:
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition(MAP_START)
    _, _, tail = rest.partition(MAP_END)
    path.write_text(f"{head}{MAP_START}\n{body}\n{MAP_END}{tail}", encoding="utf-8")


def _shown(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    assert MAP_START in text and MAP_END in text, f"{path.name} has no layer map"
    return text.split(MAP_START, 1)[1].split(MAP_END, 1)[0].strip()


def write_layer_map() -> None:
    _write_between(ARCHITECTURE, layer_map())
    _write_between(README, readme_map())


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """import-linter on the package under ``tree`` (its guard/ and pyproject.toml), as .ci/run runs it."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(tree / "pyproject.toml")],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def copy_of_guard(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT, tree / "guard", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PYPROJECT, tree / "pyproject.toml")
    return tree


def test_every_guard_module_belongs_to_a_layer() -> None:
    """import-linter checks only the modules a layer names: a new top-level module must be placed in one."""
    placed = set().union(*layer_names())
    found = {path.relative_to(ROOT).parts[0].removesuffix(".py") for path in ROOT.rglob("*.py")} - {"__init__"}
    assert found - placed == set(), "add these to a layer in pyproject.toml [tool.importlinter]"
    assert placed - found == set(), "these layers name nothing under guard/"


def test_every_module_lives_in_a_concept_package() -> None:
    """Nothing but ``__init__.py`` sits at the top of guard/: each module is in the package of the concept it serves."""
    assert sorted(path.name for path in ROOT.glob("*.py")) == ["__init__.py"]


def test_the_maps_are_the_tree() -> None:
    """docs/architecture.md's map names every package in its layer, in the words of its docstring; the README's, in short."""
    assert _shown(ARCHITECTURE) == layer_map(), "run python3 tests/project/test_layers.py to write the maps"
    assert _shown(README) == readme_map(), "run python3 tests/project/test_layers.py to write the maps"


def test_the_real_tree_keeps_the_layer_contract() -> None:
    result = lint_imports(ROOT.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(contracts())} kept, 0 broken" in result.stdout


def test_the_sibling_contracts_order_packages_of_one_layer() -> None:
    """The parts and surfaces contracts name packages of their own layer only: each orders siblings, never across layers."""
    by_name = dict(zip(LAYER_NAMES, layer_names()))
    for layer, contract_id in SIBLING_CONTRACTS.items():
        contract = next(c for c in contracts() if c["id"] == contract_id)
        ordered = contract["layers"]
        assert isinstance(ordered, list) and len(ordered) >= 4
        assert {name.removeprefix("guard.") for name in ordered} <= by_name[layer], contract_id


@pytest.mark.slow
@pytest.mark.parametrize(
    ("module", "planted", "reported"),
    [
        # a relative import inside a function: the old AST check skipped both
        (
            "core/decision.py",
            "\n\ndef _planted():\n    from ..cli import arguments\n",
            "guard.core.decision -> guard.cli.arguments",
        ),
        # a guarded import in a try block at module level
        (
            "core/spec.py",
            "\ntry:\n    import guard.server.app\nexcept ImportError:\n    pass\n",
            "guard.core.spec -> guard.server.app",
        ),
        # a part reaching up into the runtime at module level
        ("hooks/reply.py", "\nfrom guard.runtime.gate import Gate\n", "guard.hooks.reply -> guard.runtime.gate"),
        # the runtime reaching into a surface, imported only for type checking
        (
            "runtime/kinds.py",
            "\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from guard.cli.main import main\n",
            "guard.runtime.kinds -> guard.cli.main",
        ),
    ],
)
def test_an_upward_import_planted_in_a_copy_breaks_the_contract(
    copy_of_guard: Path, module: str, planted: str, reported: str
) -> None:
    target = copy_of_guard / "guard" / module
    target.write_text(target.read_text(encoding="utf-8") + planted, encoding="utf-8")
    result = lint_imports(copy_of_guard)
    assert result.returncode != 0
    assert f"{layer_contract()['name']} BROKEN" in result.stdout
    assert reported in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("module", "planted", "contract", "reported"),
    [
        # the cycles this contract removed: self-protection reading the org policy's module, the session the rule view
        (
            "protection/targets.py",
            "\n\ndef _planted():\n    from guard.config.org_policy import configured\n",
            "parts",
            "guard.protection.targets -> guard.config.org_policy",
        ),
        (
            "session/call_effects.py",
            "\n\ndef _planted():\n    from guard.judge.view import effect_of\n",
            "parts",
            "guard.session.call_effects -> guard.judge.view",
        ),
        # the service's /ui taking a constant from the CLI that starts it
        ("server/ui.py", "\nfrom guard.cli.view import register\n", "surfaces", "guard.server.ui -> guard.cli.view"),
        # datasets reading backtest's module, which imports eval, which imports datasets: a layer without its own order
        (
            "datasets/audit_cases.py",
            "\n\ndef _planted():\n    from guard.backtest.session import audit_path\n",
            "acyclic",
            ".datasets -> .backtest",
        ),
    ],
)
def test_a_cycle_planted_inside_a_layer_breaks_a_contract(
    copy_of_guard: Path, module: str, planted: str, contract: str, reported: str
) -> None:
    """The layer map lets siblings import each other; their own contracts let them do it one way only, and no cycle anywhere."""
    target = copy_of_guard / "guard" / module
    target.write_text(target.read_text(encoding="utf-8") + planted, encoding="utf-8")
    result = lint_imports(copy_of_guard)
    assert result.returncode != 0
    named = next(c["name"] for c in contracts() if c["id"] == contract)
    assert f"{named} BROKEN" in result.stdout
    assert reported in result.stdout


def test_the_contracts_allow_no_upward_import() -> None:
    """No contract lists an exception: what two layers share goes down (the matcher compiler the config validates with
    and the registry matches with is guard.core.matching), never a lazy import up."""
    assert [contract["id"] for contract in contracts() if contract.get("ignore_imports")] == []


def test_the_config_reaching_up_into_the_runtime_breaks_the_contract(copy_of_guard: Path) -> None:
    """The import the contract once allowed, config's entries to the runtime's matcher compiler, inside a function."""
    target = copy_of_guard / "guard" / "config" / "kind_options.py"
    target.write_text(
        target.read_text(encoding="utf-8") + "\n\ndef _planted():\n    from guard.runtime.registry import Registry\n",
        encoding="utf-8",
    )
    result = lint_imports(copy_of_guard)
    assert result.returncode != 0
    assert "guard.config.kind_options -> guard.runtime.registry" in result.stdout


#: Modules that spell a module of a higher layer as a string, and why that is not an import import-linter misses.
NAMED_UPWARD = {
    # the built-in hook kinds, registered as "module:attribute" like a plugin's so a hook loads only its own kind's
    # module: a string-named import of hooks/, config/ and judge/ that import-linter cannot see
    "core/kinds.py": "the built-in kinds' registry",
    # "python -m guard.cli.main" as it appears in a client's hook settings: parsed, never imported
    "config/own_hook.py": "a command line's module",
}


def test_a_string_names_no_module_of_a_higher_layer() -> None:
    """``"guard.hooks.smart:SmartHook"`` is an import import-linter cannot see: outside :data:`NAMED_UPWARD`, none points up."""
    rank = {name: index for index, names in enumerate(layer_names()) for name in names}  # 0 is the top layer
    named = re.compile(r"guard\.(\w+)(?:\.[\w.]+)?(?::[\w.]+)?")
    found: dict[str, list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        where = path.relative_to(ROOT)
        if where.parts[0] not in rank:  # guard/__init__.py, the library's front door, is in no layer
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            match = (
                named.fullmatch(node.value) if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
            )
            if match and match.group(1) in rank and rank[match.group(1)] < rank[where.parts[0]]:
                found.setdefault(str(where), []).append(match.group(0))
    assert set(found) == set(NAMED_UPWARD), found


if __name__ == "__main__":
    write_layer_map()
