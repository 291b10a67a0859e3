"""pytest plugin (entry point ``guard``): the ``guard_eval`` fixture.

    def test_rules(guard_eval):
        guard_eval("datasets/x.jsonl", config="guard.yaml").assert_metrics(f1=0.9)

Model calls go over httpx, so pytest-recording's ``@pytest.mark.vcr`` cassettes and
``--block-network`` apply to them unchanged. Concurrent judge calls all POST to one
URL, so cassettes must match on the body too; ``guard_vcr_config`` holds the
settings (body matching, secrets filtered, 2xx only) for a ``vcr_config`` fixture:

    @pytest.fixture(scope="module")
    def vcr_config(guard_vcr_config):
        return guard_vcr_config
 pytest loads this module in every
session of every project that installs guard, so it imports nothing heavy: the
eval machinery loads when a test first calls the fixture.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from guard.eval.session import EvalResult

__all__ = ["guard_eval", "guard_vcr_config"]


@pytest.fixture
def guard_eval(tmp_path: Path) -> Callable[..., EvalResult]:
    """Run an eval in-process and return its metrics; outputs go to a tmp dir unless ``out=`` is given."""

    def run(*datasets: str, out: str | None = None, **options: Any) -> EvalResult:
        from guard.eval.session import EXIT_ERROR, evaluate

        options.setdefault("progress", False)
        result = evaluate(list(datasets), out=out or str(tmp_path / "guard-eval"), **options)
        if result.exit_code == EXIT_ERROR:  # a run that could not judge must never pass quietly
            pytest.fail("guard eval could not judge: " + "; ".join(result.problems), pytrace=False)
        return result

    return run


@pytest.fixture(scope="session")
def guard_vcr_config() -> dict[str, Any]:
    """vcrpy settings for judge calls (match on method, URI and body; secrets filtered; 2xx only)."""
    from guard.eval.recording import vcr_config

    return vcr_config()
