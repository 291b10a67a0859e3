"""The folder layout is the layering, and nothing imports upward at module level.

    core      errors, events, hook specs, the Hook seam, decisions, settings
    runtime   registry, matching, engine, the gate (the one decision path)
    parts     hooks, judge, cache, config, audit (its view index, sealed chain, recovery), settings files, trust, session store,
              command analysis, webhooks, skills
    surfaces  cli, server, view, eval, backtest, datasets, install, the client's sandbox, doctor, testing

A module may import its own layer and the layers below it. Imports inside
functions (loaded on first use, e.g. the gate reaching the cache on a miss) are
the runtime's seams to the parts and are not counted here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import guard

ROOT = Path(guard.__file__).parent
LAYERS = {
    "core": 0,
    "runtime": 1,
    **dict.fromkeys(["hooks", "judge", "cache", "config", "audit", "audit_index", "audit_chain", "audit_recovery", "settings_file", "trust", "command_analysis", "webhooks", "skills", "subagents", "adapters", "prompts", "session"], 2),
    **dict.fromkeys(["cli", "server", "view", "eval", "backtest", "datasets", "install", "sandbox", "doctor", "testing", "integrations"], 3),
}


def layer_of(module: str) -> int:
    parts = module.split(".")
    if parts == ["guard"]:
        return 3  # the package's public face re-exports from every layer
    return LAYERS[parts[1]]


def module_level_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.split(".")[0] == "guard":
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.split(".")[0] == "guard"]
    return found


def test_every_guard_module_belongs_to_a_layer() -> None:
    for path in ROOT.rglob("*.py"):
        name = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts).removesuffix(".__init__")
        layer_of(name)  # a KeyError names a module outside every layer


def test_nothing_imports_upward() -> None:
    upward = []
    for path in sorted(ROOT.rglob("*.py")):
        name = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts).removesuffix(".__init__")
        for target in module_level_imports(path):
            if target != "guard" and layer_of(target) > layer_of(name):
                upward.append(f"{name} (layer {layer_of(name)}) imports {target} (layer {layer_of(target)})")
    assert upward == []


def test_core_is_self_contained() -> None:
    for path in (ROOT / "core").rglob("*.py"):
        for target in module_level_imports(path):
            assert target.startswith("guard.core"), f"{path.name} imports {target}"
