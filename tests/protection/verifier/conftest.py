"""The verifier's fixtures: one planted world and one pool of sandboxes per test session.

Without bubblewrap or strace the tests that run lines are skipped with the line that
installs them, unless ``GUARD_VERIFIER_REQUIRE=1`` (``.ci/run``) makes that a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from .budget import REQUIRE
from .sandbox import Pool, missing
from .world import World


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    planted = World(tmp_path_factory.mktemp("verifier"))
    planted.plant()
    return planted


@pytest.fixture(scope="session")
def pool(world: World) -> Iterator[Pool]:
    problem = missing()
    if problem:
        if os.environ.get(REQUIRE) == "1":
            pytest.fail(f"{problem} ({REQUIRE}=1)")
        pytest.skip(problem)
    with Pool(world) as started:
        yield started
