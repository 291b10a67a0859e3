"""``guard doctor``'s checks for a team's set-up: the org policy's state, and what waits for the team's audit store."""

from __future__ import annotations

import time
from collections.abc import Iterator

from guard.audit.shipping import states
from guard.config.org_policy import state
from guard.core.extras import MissingExtra, require
from guard.core.settings import LoadedConfig, admin_owned
from guard.setup.finding import Finding

__all__ = ["audit_store_findings", "org_findings"]


def org_findings() -> Iterator[Finding]:
    """The org policy: none, enforced as signed (and whether its files could be replaced by the user), or failing every call."""

    found = state()
    if found.status == "none":
        yield Finding("ok", "org policy", found.message)
        return
    if found.status == "fail":
        yield Finding(
            "fail",
            "org policy",
            found.message,
            "an admin restores the policy as signed, or signs the change: guard policy sign POLICY --key org.key (docs/org-policy.md)",
        )
        return
    yield Finding("ok", "org policy", found.message)
    assert found.location is not None
    if found.serial is None:
        yield Finding(
            "warn",
            "org policy",
            "the policy has no serial: an older signed policy copied over it would be enforced",
            "add serial: N to the policy, raise it with each change, and sign it again",
        )
    if found.location.source == "system":
        loose = [path for path in found.location.paths() if not admin_owned(path)]
        if loose:
            yield Finding(
                "warn",
                "org policy",
                f"not root-owned, or writable by others: {', '.join(loose)}",
                "chown root and chmod go-w those files and their folders, so only an admin can replace them",
            )


def audit_store_findings(loaded: LoadedConfig) -> Iterator[Finding]:
    """Each audit target: its library installed, and how many rows wait in the local log (and why)."""

    settings = loaded.settings
    if not (settings.audit_url or settings.audit_otlp) or settings.audit_path is None:
        return
    for extra, wanted, what in (("team", settings.audit_url, "audit.url"), ("otel", settings.audit_otlp, "audit.otlp")):
        if not wanted:
            continue
        try:
            require(extra, what)
        except MissingExtra as exc:
            yield Finding(
                "fail",
                "audit store",
                f"{exc}: its rows wait in the local log and are never sent",
                str(exc).rsplit(": ", 1)[-1],
            )
    for target in states(settings.path(settings.audit_path), settings):
        if target.last_error:
            since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(target.failing_since or 0))
            yield Finding(
                "warn",
                "audit store",
                f"{target.target}: {target.waiting} row(s) wait in the local log, failing since {since}: {target.last_error}",
                "make the store reachable; the rows go on their own then, or now with guard log ship",
            )
        else:
            yield Finding("ok", "audit store", target.describe())
