"""The gate is given its parts: whoever builds a :class:`~guard.runtime.gate.Gate` makes its deciders (issue 38, item 2).

``guard hook``, ``guard check``, ``guard.Gate`` (the SDKs), ``guard serve``, ``guard eval`` and ``guard backtest`` each
build their gate's deciders (the fast path, the warm service where they want it, the local engine) and pass them in;
what configures a decider is that decider's constructor (the service's URL and whether it may start one, the engine to
run hooks on). So ``guard/runtime/gate.py`` constructs no decider and no ``Engine``, and ``Gate.__init__`` keeps the
options of what the gate does itself: prepare (which config), the failure policy, the audit row. A decider is any class
of guard's with the methods of the ``Decider`` protocol, found by reading the source, so a new one is covered too.
"""

from __future__ import annotations

import ast
import functools
import inspect
from pathlib import Path

import guard
from guard.runtime.gate import Gate

PACKAGE = Path(guard.__file__).parent
GATE = PACKAGE / "runtime" / "gate.py"
DECIDERS = PACKAGE / "runtime" / "deciders.py"

#: ``Gate.__init__``'s options (config, deciders, engine, specs, env, policy, audit, given_context): 15 before the
#: builders passed the deciders in. Fewer is welcome; more needs a reason a builder or a decider cannot hold it.
GATE_OPTIONS = 8

#: Functions that make deciders or an engine for a builder (:func:`guard.runtime.deciders.in_process`).
_MAKERS = {"Engine", "in_process"}


def _protocol_methods() -> set[str]:
    """The methods of the ``Decider`` protocol, as guard.runtime.deciders declares them."""
    tree = ast.parse(DECIDERS.read_text(encoding="utf-8"))
    protocol = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Decider")
    return {node.name for node in protocol.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


@functools.cache
def decider_classes() -> frozenset[str]:
    """Every class in guard/ that has each method of the ``Decider`` protocol (the protocol itself left out)."""
    wanted = _protocol_methods()
    found = set()
    for path in PACKAGE.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        if not all(f"def {name}(" in source for name in wanted):
            continue  # parsed only where a class could have them all (few ast.parse calls: CPython 3.11's gh-106905)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ClassDef) and node.name != "Decider":
                methods = {item.name for item in node.body if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)}
                if wanted <= methods:
                    found.add(node.name)
    return frozenset(found)


def parts_built(source: str, parts: frozenset[str]) -> list[str]:
    """Where ``source`` calls one of ``parts`` (by name or as an attribute: ``deciders.FastPath(...)``), as ``line: name``."""
    made = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = (
                node.func.id
                if isinstance(node.func, ast.Name)
                else node.func.attr
                if isinstance(node.func, ast.Attribute)
                else None
            )
            if name in parts:
                made.append(f"{node.lineno}: {name}")
    return made


def test_the_decider_protocol_finds_the_deciders() -> None:
    """The check below looks for the real deciders, the warm service's among them (a layer above the runtime)."""
    assert {"FastPath", "LocalEngine", "OnFirstUse", "ServiceDecider"} <= decider_classes()


def test_the_gate_builds_no_decider_and_no_engine() -> None:
    made = parts_built(GATE.read_text(encoding="utf-8"), decider_classes() | _MAKERS)
    assert made == [], f"guard/runtime/gate.py builds its own parts (its builder gives them): {made}"


def test_the_check_catches_a_gate_that_builds_its_deciders_again() -> None:
    """The gate as it was (``self.local = LocalEngine(self, engine)``, the engine built on first use) is caught."""
    planted = GATE.read_text(encoding="utf-8") + (
        "\n\ndef _planted(gate, engine):\n"
        "    local = LocalEngine(gate, engine)\n"
        "    return deciders.FastPath(gate, local), Engine(gate.settings, gate.registry)\n"
    )
    assert [line.split(": ")[1] for line in parts_built(planted, decider_classes() | _MAKERS)] == [
        "LocalEngine",
        "FastPath",
        "Engine",
    ]


def test_the_gate_keeps_only_its_own_options() -> None:
    options = [name for name in inspect.signature(Gate.__init__).parameters if name != "self"]
    assert len(options) <= GATE_OPTIONS, (
        f"Gate.__init__ has {len(options)} options ({', '.join(options)}), the budget is {GATE_OPTIONS}: an option that"
        " only configures a decider belongs to that decider's constructor, and its builder passes the decider"
    )
    assert "deciders" in options
