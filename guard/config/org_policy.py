"""The org policy: a guard.yaml an admin signs, enforced in every project on the machine before the project's own.

Where it is, and why the agent cannot point guard elsewhere
-----------------------------------------------------------
==========================  ===================================================
the org key                 ``/etc/guard/org.pub`` when that file exists (an
                            admin's, root-owned); else ``$GUARD_ORG_KEY`` (set
                            to nothing: refused); else there is no org policy
the policy                  ``/etc/guard/policy.yaml``; ``$GUARD_ORG_POLICY``
                            moves it, but with the system key only to a file
                            that root owns and no one else can write (nor its
                            folders)
its signature               ``<policy>.sig`` (:mod:`guard.config.org_signing`)
==========================  ===================================================

The variables are read from the environment ``guard hook`` starts in: the agent
client's, which the agent's own shell cannot change (a variable it exports
reaches only the commands it runs). What the agent could write, it cannot use:
the system key always wins over the variable, so no one without root replaces
the key, and a policy moved by the variable still has to carry the org's
signature and a serial no older than one already seen. A client's settings can
change a hook's environment, though (Claude Code hands a settings file's ``env``
to its hooks): the policy is refused while a project's or user's Claude Code
settings set any ``GUARD_*`` variable. The org files are
write-protected paths of the self-protection rule as well.

Once an org key is configured, the policy is enforced as signed or not at all:
a missing, unsigned, altered, rolled-back or broken policy raises
:class:`~guard.core.errors.OrgPolicyError`, and the gate denies every tool call
saying why, whatever a project or user config or ``GUARD_FAIL_OPEN`` says.

What a hook pays
----------------
Verifying costs the ``cryptography`` import and an Ed25519 check. A hook does
neither when this exact policy was verified before: the policy's compiled
snapshot (:mod:`guard.config.snapshot`, sealed with the user's secret) is written
only after its signature verified, keyed on the sha256 of the key, the policy and
the signature together, so a snapshot hit is the record of that verification.
A hit costs reading three small files, three digests and two sealed reads (the
snapshot and the highest serial seen). No org key configured costs one ``stat``.

Anti-rollback: a policy may carry ``serial: N``. The highest serial seen under a
key is kept per user in guard's sealed state; a policy whose serial is lower is
refused, so an older signed policy replayed (one that allowed more) is not
enforced.

Merging (:func:`merged`): the org's hooks come first, under ids ``org:<id>`` no
project hook may take; ``protect: false`` in a project is ignored (only the org
policy can turn self-protection off); the org's models, audit store and approvals
replace the project's; once the org names a model, the endpoint is the org's (its
``models.api_base``, else the provider's own) and so is the time of each tier it names;
its webhook networks and redactions are added.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from guard.core.errors import ConfigError, OrgPolicyError
from guard.core.logs import LazyLogger
from guard.core.record import FrozenRecord
from guard.core.settings import (
    KEY_ENV,
    LAUNCHER_ENV,
    SYSTEM_DIR,
    LoadedConfig,
    OrgLocation,
    default_audit_path,
    locate,
    user_dir,
)
from guard.storage.secret import TrustError, seal, verify

__all__ = ["OrgState", "configured", "load", "merged", "state"]

log = LazyLogger("guard.config")

#: Ids of the org's hooks: ``org:<id>``; no other hook may take one.
ID_PREFIX = "org:"
_MAX_BYTES = 1 << 20
_SERIAL = "org-serial"
_FIX = "every tool call is denied until an admin fixes it (nothing in a project or user config, nor GUARD_FAIL_OPEN, relaxes this)"


#: The variable a project's shared launcher runs (what ``guard install claude`` writes into the local settings). guard
#: never reads it, so it cannot steer the org's rules: the org's hook is a managed or user-scope entry with an absolute
#: program, which a project's settings cannot change; the project's own launcher entry it could as well delete.

#: Agent clients' settings whose ``env`` the client hands to its hooks: (folder, names) under the project and the user's folder.
_CLIENT_ENV = ((".claude", ("settings.json", "settings.local.json")),)


def _set_by_client_settings(environ: Mapping[str, str]) -> tuple[str, str] | None:
    """(a project's or user's Claude Code settings file, the guard variable its ``env`` sets), or None.

    Claude Code applies a settings file's ``env`` to its hooks' environment, over the one it started in: a project's
    committed ``.claude/settings.json`` would otherwise move the org key and policy or set them to nothing, point the
    org's rules at a judge of its own (``GUARD_API_BASE``, ``GUARD_MODEL_*``), time them out (``GUARD_TIMEOUT_*``) or
    send them to a service of its choosing (``GUARD_SERVER``). Only the managed settings (root's) may set them there.
    """
    home = os.path.expanduser("~")
    folders = [environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()]
    files = [os.path.join(folder, sub, name) for folder in folders for sub, names in _CLIENT_ENV for name in names]
    user = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    files += [os.path.join(user, name) for name in ("settings.json", "settings.local.json")]
    from guard.core.regular_file import read_text

    for file in files:
        if not os.path.lexists(file):
            continue
        text = read_text(file, _MAX_BYTES)
        try:
            env = json.loads(text or "{}").get("env")
        except (ValueError, AttributeError):
            continue  # not settings Claude Code would read either
        named = (
            sorted(name for name in env if isinstance(name, str) and name.startswith("GUARD_") and name != LAUNCHER_ENV)
            if isinstance(env, dict)
            else []
        )
        if named:
            return file, named[0]
    return None


def _read(path: str, what: str, location: OrgLocation) -> bytes:
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_BYTES + 1)
    except FileNotFoundError:
        if what == "signature":
            raise OrgPolicyError(
                f"the org policy {location.policy} is not signed ({path} is missing): {_FIX}"
            ) from None
        if what == "policy":
            raise OrgPolicyError(
                f"the org policy {path} is missing (the org key {location.key} is configured): {_FIX}"
            ) from None
        raise OrgPolicyError(f"the org key {path} is missing: {_FIX}") from None
    except OSError as exc:
        raise OrgPolicyError(f"the org {what} {path} cannot be read ({exc.strerror}): {_FIX}") from exc
    if len(data) > _MAX_BYTES:
        raise OrgPolicyError(f"the org {what} {path} is larger than {_MAX_BYTES >> 20} MiB: {_FIX}")
    return data


def _pin(key: bytes, policy: bytes, signature: bytes) -> str:
    """What a verification vouches for: these exact three files together."""
    digest = hashlib.sha256(b"guard org policy")
    for part in (key, policy, signature):
        digest.update(hashlib.sha256(part).digest())
    return "org-" + digest.hexdigest()


def _as_org(loaded: LoadedConfig) -> LoadedConfig:
    """The parsed policy's hooks as the org's: source ``org``, ids ``org:<id>``."""
    loaded.specs = [spec.replace(source="org", id=ID_PREFIX + spec.id) for spec in loaded.specs]
    return loaded


def _verified(location: OrgLocation, key: bytes, policy: bytes, signature: bytes) -> LoadedConfig:
    """The policy as parsed, its signature verified now or on record (a snapshot of this pin exists only once verified)."""
    from guard.config import snapshot

    path, pin = Path(location.policy), _pin(key, policy, signature)
    cached = snapshot.read(path, pin=pin)
    if cached is not None:
        return cached
    from guard.config.org_signing import SignatureInvalid, fingerprint, verify_signature
    from guard.core.extras import MissingExtra

    try:
        verify_signature(key, policy, signature.decode("ascii", "replace"))
    except SignatureInvalid as exc:
        raise OrgPolicyError(
            f"the org policy {location.policy} fails its signature check against {location.key} "
            f"(key {fingerprint(key)}): {exc}; {_FIX}"
        ) from exc
    except MissingExtra as exc:
        raise OrgPolicyError(
            f"an org key is configured ({location.key}) but guard cannot check signatures here: {exc}; {_FIX}"
        ) from exc
    from guard.config.parse import parse_config

    def reader(asked: Path) -> str:
        if os.path.abspath(asked) != location.policy:
            raise FileNotFoundError(2, "not part of the signed policy", str(asked))
        return policy.decode("utf-8")

    try:
        loaded = _as_org(parse_config(path, reader, org=True))
    except UnicodeDecodeError as exc:
        raise OrgPolicyError(f"the org policy {location.policy} is not UTF-8 text: {_FIX}") from exc
    except ConfigError as exc:
        from guard.config.location import located

        raise OrgPolicyError(f"the org policy does not load: {located(exc)}; {_FIX}") from exc
    loaded.pin = pin
    snapshot.write(path, loaded, pin=pin)
    return snapshot.expand_env(loaded)


def _serial_record(key: bytes) -> Path:
    from guard.config.org_signing import fingerprint

    return user_dir("state") / "org" / f"{fingerprint(key)}.json"


def _highest_seen(record: Path, key_id: str) -> int | None:
    """The highest serial enforced under this key, or None (none yet, or a record that fails its seal: treated as none)."""
    try:
        mac, _, body = record.read_text(encoding="utf-8").partition("\n")
    except OSError:
        return None
    if not verify(mac, _SERIAL, key_id, body):
        log.warning("%s fails its seal; the org policy's serial starts over from the one in force", record)
        return None
    try:
        value = json.loads(body).get("serial")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) else None


def _check_serial(location: OrgLocation, key: bytes, serial: int | None) -> None:
    """Refuse a policy older than the newest one seen under this key; remember a newer one."""
    if serial is None:
        return
    from guard.config.org_signing import fingerprint

    key_id, record = fingerprint(key), _serial_record(key)
    highest = _highest_seen(record, key_id)
    if highest is not None and serial < highest:
        raise OrgPolicyError(
            f"the org policy {location.policy} has serial {serial}, older than serial {highest} already enforced "
            f"here under key {key_id}: a replayed older policy is refused; {_FIX}"
        )
    if highest == serial:
        return
    body = json.dumps({"serial": serial, "policy": location.policy})
    try:
        record.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = record.with_name(f".{record.name}.{os.getpid()}.tmp")
        tmp.write_text(f"{seal(_SERIAL, key_id, body)}\n{body}", encoding="utf-8")
        os.replace(tmp, record)
    except (OSError, TrustError):
        log.warning("cannot record the org policy's serial %d in %s", serial, record)


def load(location: OrgLocation, env: Mapping[str, str] | None = None) -> LoadedConfig:
    """The org policy at ``location``, verified (or verified before) and no older than one seen; OrgPolicyError otherwise.

    It is refused while a project's or user's client settings set any of guard's variables (their ``env`` reaches guard's
    hook), and, given by the environment, when the key's variable is set to nothing: neither is an admin's doing.
    """
    settings = _set_by_client_settings(os.environ if env is None else env)
    if settings is not None:
        raise OrgPolicyError(
            f"{settings[0]} sets ${settings[1]} in its env, which Claude Code hands to guard's hook: under an org "
            f"policy, guard's variables are the admin's to set (the machine's environment, Claude Code's managed settings); {_FIX}"
        )
    if location.source == "environment":
        if not location.key:
            raise OrgPolicyError(
                f"${KEY_ENV} is set to nothing: an org key was configured and something cleared it; {_FIX}"
            )
    key = _read(location.key, "key", location)
    policy = _read(location.policy, "policy", location)
    signature = _read(location.signature, "signature", location)
    loaded = _verified(location, key, policy, signature)
    _check_serial(location, key, loaded.settings.org_serial)
    if location.note:
        log.warning("%s", location.note)
    return loaded


def configured(env: Mapping[str, str] | None = None) -> LoadedConfig | None:
    """The org policy in force here, None when no org key is configured; OrgPolicyError when one is and its policy fails."""
    location = locate(env)
    return None if location is None else load(location, env)


def merged(org: LoadedConfig, project: LoadedConfig | None) -> LoadedConfig:
    """``project`` (None: there is no project config here) under ``org``: what the module's last paragraph says."""
    o = org.settings
    if project is None:
        return LoadedConfig(settings=o.replace(base_dir=os.getcwd()), specs=list(org.specs), sources=list(org.sources))
    s = project.settings
    owned = {spec.id for spec in org.specs}
    for spec in project.specs:
        if spec.id in owned or spec.id.startswith(ID_PREFIX):
            file, _, key = (spec.origin or "").partition(": ")
            raise ConfigError(
                f"hook id {spec.id!r} is reserved for the org policy's hooks (org:<id>); rename it",
                file=file or None,
                key=(key + ".id") if key else None,
            )
    ships = bool(o.audit_url or o.audit_otlp)
    settings = s.replace(
        models={**s.models, **o.models},
        # the org's models are judged where the org says (its api_base, else the provider's own) and given the org's time:
        # a project's endpoint would be a judge of its own, and its shorter timeout would fail the org's rule into its failure mode
        api_base=o.api_base or (None if o.models else s.api_base),
        timeouts={**{tier: seconds for tier, seconds in s.timeouts.items() if tier not in o.models}, **o.timeouts},
        allow_networks=tuple(dict.fromkeys((*o.allow_networks, *s.allow_networks))),
        # the org's store reads the local log as its queue: a project cannot turn it off or move it
        audit_path=default_audit_path(s.config_path) if ships else s.audit_path,
        audit_redact=tuple(dict.fromkeys((*o.audit_redact, *s.audit_redact))),
        audit_url=o.audit_url or s.audit_url,
        audit_otlp=o.audit_otlp or s.audit_otlp,
        protect=s.protect or o.protect,  # only the org policy can turn self-protection off
        prices={**s.prices, **o.prices},
        org_policy=o.org_policy,
        org_serial=o.org_serial,
        **(_approvals(o) if o.approvals_webhook or o.approvals_link else {}),
    )
    return LoadedConfig(
        settings=settings, specs=[*org.specs, *project.specs], sources=[*org.sources, *project.sources], pin=project.pin
    )


def _approvals(settings: object) -> dict[str, object]:
    names = ("approvals_webhook", "approvals_timeout", "approvals_secret", "approvals_format", "approvals_link")
    return {name: getattr(settings, name) for name in names}


class OrgState(FrozenRecord):
    """What ``guard doctor`` reports: ``status`` none | ok | fail, where the files are, the serial and key id, and the message."""

    __slots__ = ("status", "location", "serial", "key_id", "hooks", "message")
    status: str
    location: OrgLocation | None
    serial: int | None
    key_id: str | None
    hooks: int
    message: str

    def __init__(
        self,
        status: str,
        location: OrgLocation | None,
        serial: int | None,
        key_id: str | None,
        hooks: int,
        message: str,
    ) -> None:
        self._assign(locals())


def state(env: Mapping[str, str] | None = None) -> OrgState:
    """The org policy's state here, for a person (never raises)."""
    from guard.config.org_signing import fingerprint

    location = locate(env)
    if location is None:
        return OrgState("none", None, None, None, 0, f"no org policy (no {SYSTEM_DIR / 'org.pub'}, no ${KEY_ENV})")
    key_id = None
    try:
        key_id = fingerprint(_read(location.key, "key", location)) if location.key else None
        loaded = load(location, env)
    except ConfigError as exc:
        return OrgState("fail", location, None, key_id, 0, str(exc))
    serial = loaded.settings.org_serial
    hooks = len(loaded.specs)
    rollback = (
        "" if serial is not None else "; it has no serial, so an older signed policy could be replayed (add serial: N)"
    )
    note = f"; {location.note}" if location.note else ""
    return OrgState(
        "ok",
        location,
        serial,
        key_id,
        hooks,
        f"{location.policy} signed by key {key_id} ({location.source}), serial {serial}, {hooks} hook(s){rollback}{note}",
    )
