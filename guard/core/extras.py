"""The optional extras, and the one message a missing one gets: the exact ``pip install`` line.

guard's distribution on PyPI is :data:`DISTRIBUTION` (``guard`` there is someone
else's package); the import package and the command stay ``guard``. A command or
integration that needs an extra calls :func:`require` before it does any work, so
a bare install fails at once with the line to run, never with a traceback after
the work is done. Standard library only: looking a module up does not import it.
"""

from __future__ import annotations

import importlib.util

from guard.core.errors import GuardError

__all__ = ["DISTRIBUTION", "EXTRAS", "MissingExtra", "install_line", "missing_extra", "require"]

#: The name guard is installed by (``pip install plainguard``).
DISTRIBUTION = "plainguard"

#: Each extra and the top-level modules it brings, as pyproject.toml declares them.
EXTRAS: dict[str, tuple[str, ...]] = {
    "eval": ("numpy", "pandas", "vcr"),
    "serve": ("starlette", "uvicorn", "jinja2"),
    "view": ("starlette", "uvicorn", "jinja2"),
    "redis": ("redis",),
    "claude-agent-sdk": ("claude_agent_sdk",),
    "openai-agents": ("agents",),
    "langchain": ("langchain", "langchain_core", "langgraph"),
    "team": ("cryptography", "psycopg"),  # the signed org policy (Ed25519) and the Postgres audit store
    "otel": ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http"),  # audit rows as OpenTelemetry log records
}


class MissingExtra(GuardError, ImportError):
    """A command or integration needs an extra that is not installed; the message is the install line.

    An ImportError too, so ``from guard.integrations.langchain import …`` fails the usual way, with guard's words.
    """


def install_line(extra: str) -> str:
    """The command that installs ``extra``, quoted for a shell."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that fails to import, or a module whose __spec__ is None
        return False


def _message(extra: str, who: str, missing: list[str]) -> str:
    verb = "is" if len(missing) == 1 else "are"
    return f"{who} needs the {extra} extra ({', '.join(missing)} {verb} not installed): {install_line(extra)}"


def require(extra: str, who: str, modules: tuple[str, ...] | None = None) -> None:
    """Raise :class:`MissingExtra` unless every module of ``extra`` (or just ``modules``) can be imported.

    ``who`` is what needs it, as the user typed it (``guard eval``, ``--record/--replay``).
    """
    missing = [name for name in (modules or EXTRAS[extra]) if not _installed(name)]
    if missing:
        raise MissingExtra(_message(extra, who, missing))


def missing_extra(extra: str, who: str, error: ModuleNotFoundError) -> ImportError:
    """What an integration raises when importing its SDK failed: the install line when the SDK is absent, else ``error``."""
    top = (error.name or "").split(".")[0]
    return MissingExtra(_message(extra, who, [top])) if top in EXTRAS[extra] else error
