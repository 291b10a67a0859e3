"""``--record DIR`` / ``--replay DIR``: the model's HTTP exchanges as vcrpy cassettes.

The cassette is handed to the judge (:mod:`guard.judge.cassette`), which records and
replays ``openai/…`` calls at guard's own HTTP client, so a replay runs production's
wire and parser; LiteLLM's calls are recorded by vcrpy's patch of httpx into the
same cassette (the judge's LiteLLM transport sets ``DISABLE_AIOHTTP_TRANSPORT`` so
they go over httpx). Requests match on method, operation and JSON body, never on
the host (so each case finds its own answer wherever it was recorded, and repeats
replay in order); provider secrets never reach the file; only 2xx answers are kept,
so a recorded rate limit never replays as a verdict. Replay needs no key and runs
with the network blocked, and a request with no recording is pinned to the case
that made it, so the run can name that case.
"""

from __future__ import annotations

import contextvars
import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from guard.core.errors import GuardError
from guard.core.extras import require
from guard.judge.cassette import MATCHER, register, use

__all__ = ["FILTERED_HEADERS", "MATCH_ON", "Recorder", "cassette_path", "recording", "vcr_config"]

FILTERED_HEADERS = (
    "authorization",
    "x-api-key",
    "api-key",
    "anthropic-api-key",
    "x-goog-api-key",
    "cookie",
    "set-cookie",
    "openai-organization",
)
FILTERED_QUERY = ("key", "api_key", "api-key")
MATCH_ON = ("method", MATCHER)

#: Which case the current task is judging, so a missing recording can be blamed on it.
current_case: contextvars.ContextVar[str | None] = contextvars.ContextVar("guard_eval_case", default=None)


def _only_success(response: dict[str, Any]) -> dict[str, Any] | None:
    return response if 200 <= int(response["status"]["code"]) < 300 else None


def vcr_config() -> dict[str, Any]:
    """vcrpy settings for judge calls; pytest-recording users return this from their ``vcr_config`` fixture."""
    return {
        "match_on": list(MATCH_ON),
        "filter_headers": list(FILTERED_HEADERS),
        "filter_query_parameters": list(FILTERED_QUERY),
        "decode_compressed_response": True,
        "before_record_response": _only_success,
    }


def cassette_path(directory: str, dataset_names: list[str]) -> Path:
    """One cassette per set of datasets: ``DIR/<a>+<b>.yaml``."""
    return Path(directory) / ("+".join(dataset_names) + ".yaml")


class Recorder:
    """The open cassette of a run, and the requests replay could not answer, per case."""

    def __init__(self, mode: str, path: Path) -> None:
        self.mode = mode
        self.path = path
        self.misses: dict[str, str] = {}

    def missed(self, case: str) -> str | None:
        """The unanswered request of ``case`` during replay, if any."""
        return self.misses.get(case)


def _refuse_connection(*args: Any, **kwargs: Any) -> None:
    raise ConnectionRefusedError("network blocked: guard eval --replay answers only from cassettes")


@contextmanager
def _network_blocked() -> Iterator[None]:
    """Refuse every outgoing socket connection (Unix sockets, used by the event loop, still work)."""
    originals = socket.socket.connect, socket.socket.connect_ex

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family == socket.AF_UNIX:
            return originals[0](self, address)
        _refuse_connection()

    def connect_ex(self: socket.socket, address: Any) -> Any:
        if self.family == socket.AF_UNIX:
            return originals[1](self, address)
        _refuse_connection()

    socket.socket.connect, socket.socket.connect_ex = connect, connect_ex  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        socket.socket.connect, socket.socket.connect_ex = originals  # type: ignore[method-assign]


@contextmanager
def _opened(config: Any, path: Path) -> Iterator[Any]:
    """``path`` as vcrpy's cassette; a file vcrpy cannot load (a hand-edited one, a Python tag: loaded safely since vcrpy 8.2.1,
    which the ``eval`` extra requires) is a GuardError naming it, never a traceback."""
    with ExitStack() as stack:
        try:
            cassette = stack.enter_context(config.use_cassette(str(path)))
        except ValueError as exc:
            raise GuardError(f"the cassette {path} cannot be read: {exc}") from None
        yield cassette


@contextmanager
def recording(mode: str, directory: str, dataset_names: list[str], *, resume: bool = False) -> Iterator[Recorder]:
    """Record (``mode="record"``) or replay (``mode="replay"``) every model call made inside.

    A fresh recording replaces the old cassette; a resumed one (``resume``) keeps it and
    adds the calls still missing.
    """

    require("eval", "--record/--replay", ("vcr",))
    # lazy: vcrpy (the record extra) only when recording
    import vcr

    path = cassette_path(directory, dataset_names)
    if mode == "replay" and not path.is_file():
        raise GuardError(f"--replay {directory}: no cassette {path.name} (record one with --record {directory})")
    if mode == "record":
        path.parent.mkdir(parents=True, exist_ok=True)
        if not resume:
            path.unlink(missing_ok=True)
    recorder = Recorder(mode, path)
    config = vcr.VCR(
        record_mode={"record": "new_episodes" if resume else "all", "replay": "none"}[mode], **vcr_config()
    )
    register(config)
    with _opened(config, path) as cassette, use(cassette):
        if mode == "replay":
            can_play = cassette.can_play_response_for

            def can_play_or_blame(request: Any) -> bool:
                if can_play(request):
                    return True
                case = current_case.get()
                if case is not None:
                    recorder.misses.setdefault(case, f"{request.method} {request.uri}")
                return False

            cassette.can_play_response_for = can_play_or_blame
            with _network_blocked():
                yield recorder
        else:
            yield recorder
