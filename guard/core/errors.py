"""One error tree for guard; the CLI turns these into messages, never tracebacks.

    GuardError
    ├── ConfigError        a config file, key or value is wrong (names file and key path)
    │   ├── UntrustedConfig  a config the user never trusted: guard hook and guard serve do not enforce it
    │   ├── UnknownName      a name nothing registers (client, hook kind, transport, cache backend); also a LookupError
    │   └── OrgPolicyError   the org policy is missing, unsigned, altered, rolled back or does not load: every tool call is denied
    ├── EventError         a malformed event on stdin or in a request body
    │   └── EventTooLarge  over the size or nesting limit: refused whatever failure_mode says
    ├── HookError          a hook could not run or gave an unreadable answer
    │   ├── HookTimeout    the hook ran past its timeout
    │   └── HookRefused    the static command analyser or the SSRF check refused it
    ├── JudgeError         a model call failed (after retries)
    │   ├── JudgeTimeout
    │   ├── JudgeUnavailable   rate limits, 5xx and connection errors that outlasted the retries
    │   ├── JudgeBadResponse   unparseable or refused verdicts: never read as allow
    │   └── ModelNotConfigured no model for a tier: names GUARD_MODEL_QUICK / GUARD_MODEL_THOROUGH
    ├── CacheError         the decision cache backend failed
    └── DatasetError       a dataset row is malformed (names file and line)

Foreign exceptions are translated at the boundary with ``raise … from exc``.
"""

from __future__ import annotations

__all__ = [
    "CacheError",
    "ConfigError",
    "DatasetError",
    "EventError",
    "EventTooLarge",
    "GuardError",
    "HookError",
    "HookRefused",
    "HookTimeout",
    "JudgeBadResponse",
    "JudgeError",
    "JudgeTimeout",
    "JudgeUnavailable",
    "MissingConfig",
    "ModelNotConfigured",
    "OrgPolicyError",
    "PROVIDER_NOTE",
    "UnknownName",
    "UntrustedConfig",
]


class GuardError(Exception):
    """Base of every error guard raises on purpose; its message is meant for a person."""


class ConfigError(GuardError):
    """A config source is wrong; the message names the file, the key path and the reason."""

    def __init__(
        self, message: str, *, file: str | None = None, key: str | None = None, line: int | None = None
    ) -> None:
        self.file = file
        self.key = key
        self.line = line
        self.message = message
        where = ": ".join(part for part in (file, key) if part)
        text = f"{where}: {message}" if where else message
        super().__init__(f"{text} (line {line})" if line else text)


class UntrustedConfig(ConfigError):
    """A config on disk that the user never approved with ``guard trust``: not enforced, and never run as is.

    A repository's guard.yaml can name command hooks; running them on the agent's
    first tool call would run code nobody reviewed, so the gate answers as for a
    config that does not load (tool calls denied, the reason saying how to trust it).
    """


class UnknownName(ConfigError, LookupError):
    """A name no built-in or installed plugin registers: a client format, hook kind, transport or cache backend.

    Every lookup by name (:class:`~guard.core.plugins.Seam`, and the config, CLI and service that ask it) raises this
    one type, its message listing the names there are; it is a ConfigError, since a name comes from a config, a
    command line or a variable, and a LookupError for code that catches lookups.
    """


class OrgPolicyError(ConfigError):
    """An org key is configured and its policy cannot be enforced as signed: missing, unsigned, altered, older than one seen, or broken.

    Nothing below the org relaxes it: the gate denies every tool call (``GUARD_FAIL_OPEN``
    and ``--fail-open`` relax a project's config, never the org's), and the reason says why.
    """


class MissingConfig(ConfigError):
    """No config where guard was installed for a project (``guard hook --project``), and none trusted there.

    The agent can move the client's working directory (a ``cd``) or remove files, so
    "no config here" must not read as "nothing to enforce" for a project guard was
    installed in: the gate answers as for a config that does not load.
    """


class SandboxReplaced(ConfigError):
    """The session's client was started with options that put another sandbox in place of the one ``guard install``
    configured around guard's files (``codex -s …``): guard's files and secret are within the agent's reach.

    The gate denies every tool call with the reason, as for the org policy (``GUARD_FAIL_OPEN`` does not relax it):
    the way out is to start the client without the option, or to install guard without the client's sandbox.
    """


class EventError(GuardError):
    """The event JSON is malformed or misses what the chosen client format requires."""


class EventTooLarge(EventError):
    """The event is over guard's size or nesting limit: refused whatever failure_mode says (the agent chose its size)."""


class HookError(GuardError):
    """A hook could not produce a verdict."""


class HookTimeout(HookError):
    """A hook ran past its timeout (its process group, if any, was killed)."""


class HookRefused(HookError):
    """A hook was refused before it ran (static command analysis, SSRF policy)."""


#: What the agent reads in place of the provider's own words (which may echo a key): the end of a JudgeError's summary.
PROVIDER_NOTE = " (the provider's answer is in guard log)"


class JudgeError(GuardError):
    """A model judgement failed; the smart hook's failure_mode decides what that means.

    ``summary`` is the message without the provider's own words (which may echo a
    key or an account name): what a deny shows the agent, while the whole message
    (keys redacted) goes to the user and the audit log.
    """

    def __init__(self, message: str, *, summary: str | None = None) -> None:
        super().__init__(message)
        self.summary = summary


class JudgeTooLarge(JudgeError):
    """The event needs more windows than any tier judges: refused whatever failure_mode says (the agent chose its size)."""


class JudgeTimeout(JudgeError):
    """The model did not answer within the hook's timeout, retries included."""


class JudgeUnavailable(JudgeError):
    """Rate limits, server errors or connection failures outlasted the retries."""


class JudgeBadResponse(JudgeError):
    """The model's answer could not be read as a verdict, or it refused to judge."""


class ModelNotConfigured(JudgeError):
    """A smart hook needs a model for a tier and none is configured."""


class CacheError(GuardError):
    """The decision cache backend failed; callers treat this as a miss."""


class DatasetError(GuardError):
    """A dataset row is malformed; the message names the file and the line."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None) -> None:
        self.file = file
        self.line = line
        where = f"{file}:{line}" if file and line else (file or "")
        super().__init__(f"{where}: {message}" if where else message)
