"""Names that hold credentials: never read in a lane, never sent to a model provider as a file's content.

An allowlist cannot say which files are secret, so this is the one deny list by name: each use keeps
a call out of a shortcut (the read-only lane) or keeps content out of the judge's view, never lets
anything through. Standard library only: it runs on the ``guard hook`` fast path.
"""

from __future__ import annotations

import fnmatch

__all__ = ["looks_like_credential"]

#: Names of files and folders that hold credentials.
_SENSITIVE_NAMES = frozenset(
    {
        ".ssh",
        ".aws",
        ".gnupg",
        ".kube",
        ".docker",
        ".netrc",
        ".pgpass",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".azure",
        ".gcloud",
        "gcloud",
        ".config",
        ".password-store",
        ".vault-token",
        "credentials",
        "credentials.json",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "shadow",
        "gshadow",
        "sudoers",
        ".bash_history",
        ".zsh_history",
        ".envrc",
        ".my.cnf",
        ".s3cfg",
        ".boto",
        "_netrc",
        ".dev.vars",
        "kubeconfig",
    }
)
_SENSITIVE_PATTERNS = (
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    ".env",
    ".env.*",
    "*.env",
    "*secret*",
    "*token*",
    "*passw*",
    "*credential*",
    "*private?key*",
    "*service?account*",
    "*api?key*",
    "*.kdbx",
    "*.ppk",
    "*.jks",
    "*.tfstate",
    "*.tfvars",
)


def looks_like_credential(word: str) -> bool:
    """Whether a part of the path ``word`` is named like a file or folder that holds credentials."""
    parts = [p for p in word.lower().split("/") if p]
    return any(p in _SENSITIVE_NAMES or any(fnmatch.fnmatchcase(p, pat) for pat in _SENSITIVE_PATTERNS) for p in parts)
