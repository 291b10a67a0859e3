"""Client adapters: each client's hook payload in, that client's hook output out.

A :class:`Client` names a client and holds what guard knows of it: ``normalize``
(its event as guard's canonical payload, Claude Code field names), ``render`` (the
bytes and exit code it expects), its default hook timeout (the deadline ``guard
hook`` answers before), the variable it names the project in, and where its hook
settings are written (its installer, :mod:`guard.adapters.installers`, which
``guard install`` and ``guard doctor`` read). Pure functions on plain data,
standard library only: they run on every ``guard hook`` call.

guard's clients are registered in :data:`CLIENTS` exactly as a package registers
its own, under the ``guard.clients`` entry-point group (``name = "module:CLIENT"``),
read only for a name guard does not know.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from guard.core.errors import UnknownName
from guard.core.plugins import Seam
from guard.core.record import FrozenRecord

if TYPE_CHECKING:
    from guard.core.decision import Decision

__all__ = ["CLIENTS", "Client", "Rendered", "adapter", "event_of"]

#: client name → its :class:`Client`: guard's own (``CLIENT`` in each module here), then the installed plugins'
CLIENTS = Seam(
    "guard.clients",
    "client format",
    {name: f"guard.adapters.{name}:CLIENT" for name in ("claude", "devin", "codex", "gemini", "copilot", "cursor")},
)


class Rendered(FrozenRecord):
    """What ``guard hook`` writes: stdout, the exit code, and stderr."""

    __slots__ = ("stdout", "exit_code", "stderr")
    stdout: str
    exit_code: int
    stderr: str

    def __init__(self, stdout: str = "", exit_code: int = 0, stderr: str = "") -> None:
        self._assign(locals())


class Client:
    """One agent client: how its events read and its answers are written, and what ``guard hook``, ``guard install`` and ``guard doctor`` need of it."""

    __slots__ = (
        "defers",
        "deadline",
        "installer",
        "missing_setup",
        "name",
        "normalize",
        "project_var",
        "render",
        "sandbox_replaced",
        "session_folder",
        "starts_elsewhere",
    )

    def __init__(
        self,
        name: str,
        normalize: Callable[[dict[str, Any], Mapping[str, str]], dict[str, Any]],
        render: Callable[[dict[str, Any], Decision], Rendered],
        *,
        deadline: float,
        installer: str | None = None,
        project_var: str | None = None,
        starts_elsewhere: bool = False,
        defers: bool = False,
        missing_setup: Callable[[str | None, Mapping[str, str]], str | None] | None = None,
        session_folder: str | None = None,
        sandbox_replaced: Callable[[str, Mapping[str, str]], str | None] | None = None,
    ) -> None:
        #: the ``--format`` name, and the name the audit row gives the client
        self.name = name
        #: the client's event as guard's canonical payload (Claude Code field names)
        self.normalize = normalize
        #: the stdout, stderr and exit code the client expects for a decision
        self.render = render
        #: the client's own default hook timeout in seconds: without ``--deadline``, guard answers before it
        self.deadline = deadline
        #: ``"module:attribute"`` of its :class:`~guard.adapters.installers.ClientProfile` (where ``guard install`` writes
        #: its hook), loaded only by ``guard install`` and ``guard doctor``; None: guard cannot install it
        self.installer = installer
        #: the variable the client sets to the project folder for its hooks
        self.project_var = project_var
        #: whether it may start a hook outside the project and name no project (Copilot CLI: the event's ``cwd`` then)
        self.starts_elsewhere = starts_elsewhere
        #: whether it can leave a call pending for a resumed session (``guard hook --defer``: Claude Code's ``defer``)
        self.defers = defers
        #: ``(project, env) -> text | None``: what this user has not set up for the project guard was anchored to
        #: (``--project``; None for an unanchored hook), told to the user as a session starts (a warning)
        self.missing_setup = missing_setup
        #: where the client names the session's folder, which the agent's commands cannot move: ``"cwd"`` (the event's:
        #: Codex) or a variable it sets (Gemini CLI's project folder). A hook anchored to another checkout enforces that
        #: checkout's config or blocks there (:mod:`guard.adapters.checkout`); None: not known to be fixed
        self.session_folder = session_folder
        #: ``(project, env) -> text | None``: why the session runs without the sandbox ``guard install`` configured for
        #: the project (its client was started with options that replace it), asked on every event: every tool call of
        #: such a session is denied with the text (:class:`~guard.core.errors.SandboxReplaced`)
        self.sandbox_replaced = sandbox_replaced

    def __repr__(self) -> str:
        return f"Client({self.name!r})"


def adapter(fmt: str) -> Client:
    """The :class:`Client` registered as ``fmt`` (one of guard's, or a plugin's); UnknownName naming the choices otherwise."""
    client = CLIENTS.load(fmt)
    if not isinstance(client, Client):
        raise UnknownName(
            f"client format {fmt!r}: the entry point {CLIENTS.group!r} names {client!r}, not a guard.adapters.Client"
        )
    return client


def event_of(payload: dict[str, Any]) -> str:
    """The canonical event name of ``payload``; "" when guard could not read one."""
    from guard.core.events.names import canonical_event

    try:
        return canonical_event(str(payload.get("hook_event_name", "")))
    except ValueError:
        return ""
