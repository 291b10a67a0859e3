"""Every test runs in its own home, cache, state and working directory, with no GUARD_* settings (GUARD_E2E_* are the harness's own) or agent markers leaking in.

guard hook and guard serve enforce only a config the user trusted: a test trusts
its config as the user would, through the library function behind ``guard trust``
(:func:`trust_config`; ``write_config`` does it unless told not to). There is no
switch that skips trust, for tests or anyone else.
"""

from __future__ import annotations

import ast
import functools
import logging
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
# The user the tests model runs bash, as Claude Code finds its shell: with SHELL unset (a CI runner's environment) on a
# machine with zsh, it runs zsh, where guard proves no shell line. Tests of other shells set these themselves.
os.environ["SHELL"] = "/bin/bash"
os.environ.pop("CLAUDE_CODE_SHELL", None)

#: The shared fixtures (tests/fixtures/): one stub model, one guard process runner (processes.run_guard), one in-process
#: guard CLI (guard_cli), one project folder (project), the services tests start.
pytest.register_assert_rewrite("fixtures")  # they import each other: rewrite them all, whichever is loaded first
pytest_plugins = [
    f"fixtures.{name}"
    for name in (
        "browser",
        "cache",
        "cli",
        "eval",
        "importers",
        "integration",
        "judge",
        "org",
        "postgres",
        "session",
        "system",
        "terminal",
        "webhook",
    )
]

from fixtures.sandbox_strays import remove_empty  # noqa: E402 (after the plugins are registered)


def _serialized(parse: Callable[..., ast.AST]) -> Callable[..., ast.AST]:
    lock = threading.RLock()

    @functools.wraps(parse)
    def serialized_parse(*args: Any, **kwargs: Any) -> ast.AST:
        with lock:
            return parse(*args, **kwargs)

    return serialized_parse


def pytest_configure(config: pytest.Config) -> None:
    """Parse Python one thread at a time, and import guard's own modules as Python does.

    CPython before 3.11.8 keeps the AST constructor's recursion depth per interpreter, not per thread
    (python/cpython#106905), so two threads in ``ast.parse`` at once fail one of them with "SystemError: AST
    constructor recursion depth mismatch". In a test process both happen: pytest's assertion rewriter parses a module
    a test imports lazily (CI failed so on ``import vcr``) while a stub server's thread formats a traceback, which
    3.11 does with ``ast.parse``. One lock around ``ast.parse`` rules that out; guard's processes are not affected.
    The lock does not cover every route to the constructor (a run of the fast subset failed the same way inside it), so no
    module is rewritten mid-test either: pytest rewrites the tests, the conftests and our fixtures as they are
    collected, in the main thread before any server thread starts, and the plugins' own modules (``vcr.matchers``,
    marked by pytest-recording and first imported by a test's ``import vcr``) are imported as Python imports them.

    guard ships a pytest plugin (``guard.eval.pytest_plugin``), so pytest marks the whole ``guard`` package for
    rewriting; guard's modules hold no test asserts, so they are imported unrewritten, as users import them.
    """
    ast.parse = _serialized(ast.parse)  # type: ignore[assignment]
    hook = config.pluginmanager.rewrite_hook
    must_rewrite = getattr(hook, "_must_rewrite", None)
    if isinstance(must_rewrite, set):
        for name in list(must_rewrite):
            if name.partition(".")[0] != "fixtures":
                must_rewrite.discard(name)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    remove_empty()  # what a client's sandbox left in /tmp, above every test's folder (fixtures.sandbox_strays)
    home = tmp_path / "home"
    work = tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    from guard.cli.user_consent import AGENT_MARKERS

    for name in list(os.environ):
        # GUARD_E2E_* configure the test harness (where the agent CLIs are, whether they must be there), not guard;
        # a suite run from inside an agent client must not look like the agent to guard trust / guard install
        guard_setting = name.startswith("GUARD_") and not name.startswith("GUARD_E2E_")
        if guard_setting or name in AGENT_MARKERS or name == "CURSOR_EXTENSION_HOST_ROLE":
            monkeypatch.delenv(name)
    monkeypatch.chdir(work)
    yield work
    # the CLI gives the "guard" logger its own handler; later tests expect plain propagation
    logger = logging.getLogger("guard")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    logger.propagate = True
    logger.setLevel(logging.NOTSET)


def trust_config(config: str | Path) -> None:
    """Trust ``config`` as the user does with ``guard trust`` (the same library function, after their yes).

    A ``guard.yaml`` or ``.guard/guard.yaml`` is trusted for its folder (what ``guard
    hook`` searches from there) and under its own path; any other file under its path
    (``guard hook --config FILE``).
    """
    from guard.config.pinning import trust
    from guard.config.search import SEARCHED

    path = Path(config).absolute()
    for name in sorted(SEARCHED, key=len, reverse=True):  # .guard/guard.yaml before guard.yaml
        if path.as_posix().endswith("/" + name):
            trust(cwd=str(path.parents[name.count("/")]))
            return
    trust(str(path))


@pytest.fixture
def write_config(isolated_home: Path):  # type: ignore[no-untyped-def]
    """Write a guard.yaml into the test's working directory, trust it (unless ``trusted=False``) and return its path.

    A config that does not load is left untrusted, as ``guard trust`` leaves it.
    """
    from guard.core.errors import ConfigError

    def write(text: str, name: str = "guard.yaml", *, trusted: bool = True) -> Path:
        path = isolated_home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if trusted:
            try:
                trust_config(path)
            except ConfigError:
                pass
        return path

    return write


@pytest.fixture
def project(
    request: pytest.FixtureRequest,
    isolated_home: Path,
    write_config: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    """The test's project: its working folder, holding what ``@pytest.mark.project(...)`` on the test or module names.

    ``files`` ({relative path: text}) are written first; ``config`` is the guard.yaml, trusted unless
    ``trusted=False`` (a callable gets the ``stub`` fixture and returns the text, for a config naming the stub's
    URL); ``importable=True`` puts the folder on this process's ``sys.path`` for a callable hook an in-process gate
    imports (a guard process finds it through PYTHONPATH). A module that needs more (an install, a first hook call)
    extends it with a fixture of the same name that takes ``project``.
    """
    marker = request.node.get_closest_marker("project")
    options = marker.kwargs if marker else {}
    for name, text in options.get("files", {}).items():
        path = isolated_home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    config = options.get("config")
    if callable(config):
        config = config(request.getfixturevalue("stub"))
    if config is not None:
        write_config(config, trusted=options.get("trusted", True))
    if options.get("importable"):
        monkeypatch.syspath_prepend(str(isolated_home))
    return isolated_home


@pytest.fixture(autouse=True, scope="session")
def no_services_left_behind(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Stop the warm ``guard serve`` processes tests started (SessionStart, ``server.url: auto``) when the run ends.

    They detach on purpose and would otherwise idle for 30 minutes after the suite.
    """
    yield
    import signal

    base = str(tmp_path_factory.getbasetemp().resolve())
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        # this run's folder only: another pytest run on the machine (a second worktree) has its own services
        if b"serve" in argv and any(b"guard" in arg for arg in argv) and (cwd == base or cwd.startswith(base + "/")):
            try:
                os.kill(int(proc.name), signal.SIGTERM)
            except OSError:
                pass


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks this adds
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that drives the browser (the ``chromium`` fixture, through ``page`` too) is slow: ``pytest -m "not slow"`` skips it.

    Under ``pytest -n 2 --dist loadgroup`` (pytest-xdist, as ``.ci/run`` runs the suite) each worker is a session of its
    own (its stub servers, redis-server and Postgres cluster on free ports, its temporary folders), so tests run on
    either, except what :func:`worker_group` keeps together.
    """
    for item in items:
        if "chromium" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
        group = worker_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))


def worker_group(item: pytest.Item) -> str | None:
    """The tests that must share one xdist worker, one after another.

    The real agent CLIs (tests/e2e/) share what the machine has once: Codex's sandbox leaves empty folders in /tmp
    (/tmp/.git among them, which Copilot then takes for a repository) that each run removes again, so two at a time
    see each other's. A module with a module-scoped fixture (a local model server, a recorded backtest, an eval run)
    runs on one worker so the fixture is built once.
    """
    if item.path.relative_to(TESTS).parts[0] == "e2e":
        return "agent-clis"
    info = getattr(item, "_fixtureinfo", None)
    definitions = (
        [definition for chain in info.name2fixturedefs.values() for definition in chain] if info is not None else []
    )
    if any(definition.scope == "module" and _ours(definition.func) for definition in definitions):
        return str(item.path.relative_to(TESTS))
    return None


def _ours(function: object) -> bool:
    """A fixture defined under tests/ (not one of a plugin's, such as pytest-recording's module-scoped cassette folder)."""
    code = getattr(function, "__code__", None)
    return code is not None and Path(code.co_filename).is_relative_to(TESTS)
