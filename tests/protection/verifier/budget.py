"""How many lines the verifier's test generates, from which seed: one place, and the variables that change it.

CI runs :data:`CI_LINES` from :data:`CI_SEED` (reproducible: the same lines on every run of the same machine image);
``GUARD_VERIFIER_LINES=200000`` runs the larger search, ``GUARD_VERIFIER_SEED`` another sample.
``GUARD_VERIFIER_REQUIRE=1`` (set by ``.ci/run``) makes a missing bubblewrap or strace a failure instead of a skip.
"""

from __future__ import annotations

import os

__all__ = ["CI_LINES", "CI_SEED", "REQUIRE", "lines", "seed"]

CI_LINES = 5_000
CI_SEED = 35
REQUIRE = "GUARD_VERIFIER_REQUIRE"


def lines() -> int:
    return int(os.environ.get("GUARD_VERIFIER_LINES") or CI_LINES)


def seed() -> int:
    return int(os.environ.get("GUARD_VERIFIER_SEED") or CI_SEED)
