"""``guard trust``: review the config here and let ``guard hook`` and ``guard serve`` enforce it.

guard enforces only a config you approved (see :mod:`guard.config.pinning`).
This shows what changed since you last trusted it — a diff of the config, its
includes and the scripts its command hooks run — and asks on the terminal.
It refuses (exit 1) without a terminal and under an agent client
(:mod:`guard.cli.user_consent`): the agent guard watches must not be able to
approve its own edits. ``--yes`` skips the question, only at a terminal.
Exit 0 when trusted (or nothing changed), 1 when refused, declined or broken.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from guard.cli.user_consent import NoTerminal, ask, has_terminal, refusal
from guard.config import trust_store
from guard.config.pinning import read_candidate, record, unchanged
from guard.config.search import find_config
from guard.core.errors import GuardError
from guard.core.settings import CONFIG_ENV, from_env

if TYPE_CHECKING:
    from guard.config.pinning import Candidate
    from guard.config.trust_store import TrustRecord

__all__ = ["adopt_config", "register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "trust",
        help="review the config here and let guard hook enforce it",
        description="Show what changed in the config guard hook finds here (its includes and the scripts its command hooks "
        "run too) since you last trusted it, and ask on the terminal before guard hook and guard serve enforce it.",
    )
    p.add_argument(
        "--config", help="the config guard hook is given (default: $GUARD_CONFIG, ./guard.yaml, ./.guard/guard.yaml)"
    )
    p.add_argument(
        "--yes", action="store_true", help="do not ask (only at a terminal: never from an agent's tool call)"
    )
    p.set_defaults(func=run)


def _text(data: bytes | None) -> list[str]:
    return [] if data is None else data.decode("utf-8", "replace").splitlines(keepends=True)


def _review(record: TrustRecord | None, candidate: Candidate) -> str:
    """A unified diff, per file, of what the user is asked to trust against what they trusted before."""
    old = {f.path: f for f in record.files} if record else {}
    lines: list[str] = []
    if record is not None and record.config != candidate.config:
        lines.append(f"the config guard hook finds is now {candidate.config} (you trusted {record.config})\n")
    for file in candidate.files:
        before = old.get(file.path)
        if before is not None and before.sha256 == file.sha256:
            continue
        lines.append(f"── {file.path} ({file.role}{', new' if before is None else ''})\n")
        lines += difflib.unified_diff(
            _text(trust_store.blob(before.sha256) if before else None),
            _text(candidate.contents[file.sha256]),
            fromfile="trusted",
            tofile="now",
        )
        if not lines[-1].endswith("\n"):
            lines[-1] += "\n"
    kept = {f.path for f in candidate.files}
    lines += [
        f"── {path} ({file.role}) is no longer part of the config\n" for path, file in old.items() if path not in kept
    ]
    return "".join(lines)


def _forget(explicit: str | None, record: TrustRecord) -> int:
    """Nothing to trust here any more: drop the record (after asking), so guard stops enforcing a config that is gone."""
    try:
        if not ask(f"{record.config}, which you trusted, is gone. Stop enforcing it here?"):
            print("guard trust: nothing changed", file=sys.stderr)
            return 1
    except NoTerminal:
        print("guard trust: error: no terminal to ask on; run guard trust in a terminal of your own", file=sys.stderr)
        return 1
    for key in {record.key, trust_store.trust_key(explicit), trust_store.trust_key(record.config)}:
        trust_store.forget(key)
    print(f"guard hook no longer enforces {record.config} here")
    return 0


def run(args: argparse.Namespace) -> int:
    refused = refusal("guard trust")
    if refused:
        print(f"guard trust: error: {refused}", file=sys.stderr)
        return 1
    explicit = args.config or from_env(CONFIG_ENV) or None
    previous = trust_store.read(trust_store.trust_key(explicit))
    found = find_config(explicit)
    if found is None or not found.is_file():
        if previous is not None:
            return _forget(explicit, previous)
        print(
            f"guard trust: error: no guard config {'at ' + str(found) if found else 'found here (./guard.yaml, ./.guard/guard.yaml, $GUARD_CONFIG)'}",
            file=sys.stderr,
        )
        return 1
    try:
        candidate = read_candidate(Path(found))
    except GuardError as exc:
        print(
            f"guard trust: error: {exc}\nguard trusts only a config that loads: fix it, then run guard trust again",
            file=sys.stderr,
        )
        return 1
    if unchanged(previous, candidate):
        print(f"{candidate.config} is trusted already: nothing changed since")
        return 0
    if not has_terminal():
        print(
            "guard trust: error: no terminal to ask on (/dev/tty): run guard trust in a terminal of your own",
            file=sys.stderr,
        )
        return 1
    header = "never trusted here: review all of it" if previous is None else "changed since you trusted it"
    names = ", ".join(f"{f.path} ({f.role})" for f in candidate.files)
    text = f"guard trust: {candidate.config}, {header}.\nfiles: {names}\n{_review(previous, candidate)}"
    try:
        if args.yes:
            sys.stdout.write(text)
        elif not ask("Let guard hook and guard serve enforce this?", text=text):
            print("guard trust: not trusted; guard keeps enforcing what it did before", file=sys.stderr)
            return 1
    except NoTerminal:
        print(
            "guard trust: error: no terminal to ask on (/dev/tty): run guard trust in a terminal of your own",
            file=sys.stderr,
        )
        return 1
    record(candidate, explicit)
    print(
        f"trusted {candidate.config} ({len(candidate.files)} file{'s' if len(candidate.files) != 1 else ''}): guard hook and guard serve enforce it now"
    )
    return 0


def adopt_config() -> None:
    """Installing is the user adopting guard here: trust the config found, unless another version was trusted before.

    A config changed since it was trusted is left to ``guard trust``, which shows
    the change and asks on the terminal. So is a config ``guard install`` finds with
    no terminal to be run from (a script, a tool call's pipes): nobody saw it, so it
    is installed untrusted, and the hook blocks tool calls until ``guard trust``.
    """
    found = find_config()
    if found is None or not found.is_file():
        return
    explicit = from_env(CONFIG_ENV) or None
    previous = trust_store.read(trust_store.trust_key(explicit))
    try:
        candidate = read_candidate(found)
    except GuardError as exc:
        print(
            f"warning: {found} is not trusted (it does not load: {exc}); run guard trust once it does", file=sys.stderr
        )
        return
    if previous is None and not has_terminal():
        print(
            f"warning: {candidate.config} is not trusted: guard install ran without a terminal, so nobody was shown it. Until "
            "you review it and run `guard trust` in a terminal, guard hook blocks every tool call",
            file=sys.stderr,
        )
    elif previous is None:
        record(candidate, explicit)
        names = ", ".join(f"{f.path} ({f.role})" for f in candidate.files)
        print(
            f"trusted {names}: guard hook enforces them; after a change, guard trust shows it and asks before it is enforced"
        )
    elif not unchanged(previous, candidate):
        print(
            f"warning: {candidate.config} differs from the version you trusted, which guard hook keeps enforcing:"
            " review and accept the change with `guard trust`",
            file=sys.stderr,
        )
