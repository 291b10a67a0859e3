"""Trusted, pinned configs: ``guard hook`` and ``guard serve`` enforce the config the user approved, not whatever is on disk.

The trust model of ``direnv allow`` and of Codex's hook review. The agent guard
watches can write any file in the project, so a guard.yaml on disk is only a
proposal: ``guard trust`` (or ``guard install``) shows it to the user and records
its digest, its includes' and its command hooks' scripts', with a sealed copy of
each (:mod:`guard.config.trust_store`). From then on:

==========================================  =============================================
on disk                                     what guard hook / guard serve enforce
==========================================  =============================================
the trusted files, unchanged                the trusted config (no warning)
a file changed or removed, or a new file    the trusted copy; every decision warns which
that would shadow the trusted one           file changed and how to accept it
a config, never trusted                     nothing: tool calls are denied (run ``guard
                                            trust``), other events allowed visibly
no config, nothing trusted                  nothing, visibly (as before)
==========================================  =============================================

The compiled snapshot of a trusted copy is keyed on the record's pin, so a cache
hit costs a record read, one sha256 per trusted file and no parsing.
``guard check`` and ``guard eval`` are the user's own tools: they read the disk
and only say (:func:`trust_note`) when it differs from the trusted copy.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from guard.config import snapshot, trust_store
from guard.config.assembly import with_org
from guard.config.search import find_config
from guard.config.trust_store import CONFIG, INCLUDE, SCRIPT, TrustedFile, TrustRecord, digest
from guard.core.errors import ConfigError, UntrustedConfig
from guard.core.record import Record
from guard.core.settings import CONFIG_ENV, LoadedConfig, from_env, locate

__all__ = [
    "Candidate",
    "Pinned",
    "accept_command",
    "differences",
    "load_trusted",
    "read_candidate",
    "record",
    "trust",
    "trust_note",
    "unchanged",
]

#: Largest file guard keeps a sealed copy of: configs and hook scripts are small; a larger one is not a script to pin.
MAX_FILE_BYTES = 4 << 20


class Candidate(Record):
    """A config as it is on disk now, read once: the parsed config, the files it is built from and their bytes."""

    __slots__ = ("config", "loaded", "files", "contents", "scripts")

    def __init__(
        self,
        config: str,
        loaded: LoadedConfig,
        files: tuple[TrustedFile, ...],
        contents: dict[str, bytes],
        scripts: tuple[tuple[str, tuple[tuple[str, str], ...]], ...],
    ) -> None:
        self.config, self.loaded, self.files, self.contents, self.scripts = config, loaded, files, contents, scripts


class Pinned(Record):
    """What ``guard hook`` enforces here: the trusted config (None when there is none) and what differs on disk.

    ``status``: ``trusted`` (disk and trust agree), ``changed`` (the trusted copy is
    enforced; ``notes`` say what changed and how to accept it), ``untrusted`` (a
    config was found that was never trusted: ``error`` says so), ``org`` (no config
    here: the org policy alone) or ``none``.
    """

    __slots__ = ("loaded", "status", "notes", "error")

    def __init__(
        self,
        loaded: LoadedConfig | None,
        status: str,
        notes: list[str] | None = None,
        error: UntrustedConfig | None = None,
    ) -> None:
        self.loaded, self.status, self.notes, self.error = loaded, status, notes or [], error


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as fh:
        data = fh.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(
            f"larger than {MAX_FILE_BYTES >> 20} MiB: not a config or hook script guard can pin", file=path
        )
    return data


def read_candidate(found: Path) -> Candidate:
    """Parse ``found`` from the bytes read now, and read the scripts its command hooks run; ConfigError when it does not load."""
    from guard.config.hook_scripts import hook_scripts
    from guard.config.parse import parse_config

    contents: dict[str, bytes] = {}
    read: dict[str, str] = {}  # path -> sha256 of the bytes the parser was given

    def reader(path: Path) -> str:
        name = os.path.abspath(path)
        data = _read_bytes(name)
        contents[digest(data)] = data
        read[name] = digest(data)
        return data.decode("utf-8")

    config = os.path.abspath(found)
    try:
        loaded = parse_config(Path(config), reader)
    except ConfigError as exc:
        from guard.config.location import located  # only a config that fails to load pays for finding the line

        raise located(exc) from exc
    files = {path: TrustedFile(path, CONFIG if path == config else INCLUDE, sha) for path, sha in read.items()}
    scripts: list[tuple[str, tuple[tuple[str, str], ...]]] = []
    for spec in loaded.specs:
        pairs = []
        for path in hook_scripts(spec, spec.workdir or loaded.settings.base_dir):
            data = _read_bytes(path)
            contents[digest(data)] = data
            pairs.append((path, digest(data)))
            files.setdefault(path, TrustedFile(path, SCRIPT, digest(data)))
        if pairs:
            scripts.append((spec.id, tuple(pairs)))
    return Candidate(config, loaded, tuple(files.values()), contents, tuple(scripts))


def trust(config: str | None = None, *, cwd: str | None = None) -> TrustRecord:
    """Record the config ``guard hook`` would find (``--config``/``$GUARD_CONFIG``, else the search of ``cwd``) as it is now.

    The library function behind ``guard trust`` and ``guard install``, once the
    user agreed (and what the test suite uses to trust a config as the user would).
    """
    explicit = config or from_env(CONFIG_ENV) or None
    found = find_config(explicit, cwd=cwd)
    if found is None:
        raise ConfigError("no guard config found to trust (--config, $GUARD_CONFIG, ./guard.yaml, ./.guard/guard.yaml)")
    if cwd and not found.is_absolute():
        found = Path(cwd, found)
    return record(read_candidate(found), explicit, cwd=cwd)


def record(candidate: Candidate, config: str | None, *, cwd: str | None = None) -> TrustRecord:
    """Store ``candidate`` (exactly the bytes the user was shown) as trusted for what ``guard hook`` searches.

    A searched config is also trusted under its own path, which is how the
    service started for it (``guard serve --config``) finds it.
    """
    keys = [trust_store.trust_key(config, cwd)]
    keys += [key for key in (trust_store.trust_key(candidate.config),) if key not in keys]
    trusted = TrustRecord(keys[0], candidate.config, candidate.files, candidate.scripts, time.time())
    for key in keys:
        trust_store.write(trusted.replace(key=key), candidate.contents)
    return trusted


def unchanged(record: TrustRecord | None, candidate: Candidate) -> bool:
    """Whether ``candidate`` is exactly what ``record`` trusted (the same config, files, digests and scripts)."""
    return record is not None and (record.config, set(record.files), record.scripts) == (
        candidate.config,
        set(candidate.files),
        candidate.scripts,
    )


def accept_command(config: str | None) -> str:
    """The command that reviews and accepts a change here."""
    return "guard trust" + (f" --config {config}" if config else "")


def differences(record: TrustRecord, found: Path | None) -> list[str]:
    """What on disk differs from ``record`` (the config ``guard hook`` finds is ``found``): one line per file."""
    notes = []
    if found is None:
        notes.append(f"{record.config} (trusted) is gone")
    elif os.path.abspath(found) != record.config:
        notes.append(f"{found} would now be loaded instead of the trusted {record.config}")
    for file in record.files:
        if found is None and file.role == CONFIG:
            continue
        try:
            on_disk = _read_bytes(file.path)
        except (OSError, ConfigError):
            notes.append(f"{file.path} ({file.role}) was removed")
            continue
        if digest(on_disk) != file.sha256:
            notes.append(f"{file.path} ({file.role}) changed")
    return notes


def _trusted_copy(record: TrustRecord) -> LoadedConfig:
    """The config as the user trusted it: the pinned snapshot, else parsed from the sealed copies (never from the disk)."""
    config, pin = Path(record.config), record.pin
    cached = snapshot.read(config, pin=pin)
    if cached is not None:
        return cached
    from guard.config.parse import (
        parse_config,
    )  # pydantic and YAML: only a trusted copy without its snapshot pays for them

    by_path = {file.path: file.sha256 for file in record.files if file.role != SCRIPT}

    def reader(path: Path) -> str:
        sha = by_path.get(os.path.abspath(path))
        if sha is None:
            raise FileNotFoundError(2, "not part of the trusted config", str(path))
        data = trust_store.blob(sha)
        if data is None:
            raise ConfigError(
                f"the trusted copy of {path} is missing from guard's trusted store ({trust_store.store_dir()}); "
                f"review the config and run `{accept_command(None)}` again"
            )
        return data.decode("utf-8")

    loaded = parse_config(config, reader)
    loaded.pin = pin
    # every hook of the trusted copy says what it may run, none for most: the hook path never parses a command to know
    loaded.specs = [spec.replace(scripts=record.scripts_of(spec.id)) for spec in loaded.specs]
    snapshot.write(config, loaded, pin=pin)
    return snapshot.expand_env(loaded)


def _org_in_force() -> LoadedConfig | None:
    """The org policy in force here (:func:`guard.config.org_policy.configured`), None when no org key is configured.

    Where one is, its module verifies and loads it; where none is (``locate`` costs one ``lstat``), the hook
    never imports it.
    """
    location = locate()
    if location is None:
        return None
    from guard.config.org_policy import load  # only where an org key is configured: its loading, signature and serial

    return load(location)


def load_trusted(config: str | None = None) -> Pinned:
    """The config ``guard hook`` enforces here (``--config``/``$GUARD_CONFIG``, else the search of the working directory).

    ConfigError when the trusted copy itself does not load (or is missing from the
    store): the gate then answers as for any config that does not load.
    """
    org = _org_in_force()  # a broken org policy raises first: nothing below it is enforced without it
    explicit = config or from_env(CONFIG_ENV) or None
    found = find_config(explicit)
    record = trust_store.read(trust_store.trust_key(explicit))
    if record is None:
        if found is None:
            return Pinned(None, "none") if org is None else Pinned(with_org(org, None), "org")
        # parsing runs nothing: a config that does not load says so first (file, key, line), as it always did;
        # the disk's loading pass is imported here, on the branch that parses a config nobody trusted
        from guard.config.loading import load_config

        load_config(explicit)
        error = UntrustedConfig(
            f"guard enforces only a config you trusted, and this one was never trusted. Review it and run `{accept_command(explicit)}`"
            " in a terminal (a cloned repository's guard.yaml must not run its hooks unreviewed)",
            file=str(found),
        )
        return Pinned(None, "untrusted", error=error)
    notes = differences(record, found)
    loaded = with_org(org, _trusted_copy(record))
    if notes:
        notes = [
            f"{'; '.join(notes)}: guard keeps enforcing the config you trusted; review and accept the change with `{accept_command(explicit)}` in a terminal"
        ]
    return Pinned(loaded, "changed" if notes else "trusted", notes)


def trust_note(config: str | None = None) -> str | None:
    """For ``guard check``/``guard eval``, which read the disk: how that differs from what ``guard hook`` enforces, or None.

    ``guard check: note: …`` on stderr, never a warning on the decision: the check
    itself judged what is on disk, as asked.
    """
    explicit = config or from_env(CONFIG_ENV) or None
    try:
        pinned = load_trusted(config)
    except ConfigError as exc:
        try:
            _org_in_force()
        except ConfigError as org:
            return str(org)  # it names the org policy and says every tool call is denied
        if trust_store.read(trust_store.trust_key(explicit)) is None:
            return None  # nothing trusted here: the config on disk does not load, which the command reading it reports
        return f"the trusted copy that guard hook enforces does not load: {exc}"
    if pinned.status == "untrusted":
        return f"this config is not trusted: guard hook and guard serve do not enforce it until you run `{accept_command(explicit)}`"
    return pinned.notes[0] if pinned.notes else None
