"""``guard policy keygen|sign|verify``: the org policy's Ed25519 key pair, its signature, and a check of both (docs/org-policy.md).

An admin runs ``keygen`` once, keeps ``org.key`` off the developers' machines and
installs ``org.pub`` as ``/etc/guard/org.pub``; each policy change is ``sign``\\ ed
(it must load as an org policy first) and shipped with its ``.sig``. ``verify``
says whether a machine would enforce what it has.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from guard.config.org_policy import load
from guard.config.org_signing import fingerprint, generate, sign
from guard.config.parse import parse_config
from guard.core.errors import ConfigError, GuardError
from guard.core.settings import SIGNATURE_SUFFIX, OrgLocation, locate

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "policy",
        help="sign the org policy: keygen, sign, verify",
        description="The org policy (docs/org-policy.md): a guard.yaml signed with an Ed25519 key, enforced in every project "
        "on a machine whose /etc/guard/org.pub (or $GUARD_ORG_KEY) holds the public key.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    keygen = actions.add_parser(
        "keygen",
        help="write a new key pair (org.key, org.pub) into a folder",
        description="Write a new Ed25519 key pair: DIR/org.key (private, 0600: keep it off the developers' machines) and DIR/org.pub.",
    )
    keygen.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="the folder to write org.key and org.pub into (an existing key is never overwritten)",
    )
    sign = actions.add_parser(
        "sign",
        help="sign a policy file: writes FILE.sig",
        description="Check that FILE loads as an org policy, then write its signature to FILE.sig.",
    )
    sign.add_argument("file", metavar="FILE", help="the policy (guard.yaml keys, plus serial: N against replays)")
    sign.add_argument("--key", required=True, metavar="KEY", help="the private key (org.key from guard policy keygen)")
    verify = actions.add_parser(
        "verify",
        help="check a policy and its signature: exit 0 enforced as signed, 1 not",
        description="Check FILE (default: the org policy this machine enforces) against its FILE.sig and the org key.",
    )
    verify.add_argument(
        "file", nargs="?", metavar="FILE", help="the policy (default: /etc/guard/policy.yaml or $GUARD_ORG_POLICY)"
    )
    verify.add_argument("--key", metavar="PUB", help="the public key (default: /etc/guard/org.pub or $GUARD_ORG_KEY)")
    p.set_defaults(func=run)


def _keygen(args: argparse.Namespace) -> int:
    private, public = generate(Path(args.out))
    print(
        f"wrote {private} (private: keep it off the developers' machines) and {public} (key {fingerprint(public.read_bytes())})"
    )
    print(
        f"install the public key on every machine as /etc/guard/org.pub (root-owned), then: guard policy sign POLICY --key {private}"
    )
    return 0


def _sign(args: argparse.Namespace) -> int:
    policy = Path(args.file)
    try:
        data, private = policy.read_bytes(), Path(args.key).read_bytes()
    except OSError as exc:
        raise GuardError(f"{exc.filename}: {exc.strerror}") from exc
    loaded = parse_config(
        policy,
        lambda path: data.decode("utf-8") if path == policy else Path(path).read_text(encoding="utf-8"),
        org=True,
    )
    target = Path(str(policy) + SIGNATURE_SUFFIX)
    target.write_text(sign(data, private) + "\n", encoding="ascii")
    serial = loaded.settings.org_serial
    print(f"signed {policy} ({len(loaded.specs)} hook(s), serial {serial}): wrote {target}")
    if serial is None:
        print(
            "warning: the policy has no serial: a machine would also enforce an older signed policy replayed in its place (add serial: N, raising it each time)"
        )
    return 0


def _verify(args: argparse.Namespace) -> int:
    configured = locate()
    if args.file is None and args.key is None and configured is None:
        raise GuardError(
            "no org key is configured here (/etc/guard/org.pub, $GUARD_ORG_KEY): pass FILE --key PUB to check one"
        )
    key = args.key or (configured.key if configured else None)
    if key is None:
        raise GuardError("no org key is configured here: pass --key PUB")
    policy = args.file or (configured.policy if configured else None)
    assert policy is not None
    location = OrgLocation(str(Path(key).resolve()), str(Path(policy).resolve()), "command line")
    try:
        loaded = load(location)
    except ConfigError as exc:
        print(f"NOT ENFORCEABLE: {exc}")
        return 1
    print(
        f"ok: {location.policy} is signed by {location.key} (serial {loaded.settings.org_serial}, {len(loaded.specs)} hook(s))"
    )
    return 0


def run(args: argparse.Namespace) -> int:
    actions = {"keygen": _keygen, "sign": _sign, "verify": _verify}
    return actions[args.action](args)
