"""pytest plugin (entry point ``guard``): the ``guard_eval`` fixture.

    def test_rules(guard_eval):
        guard_eval("datasets/x.jsonl", config="guard.yaml").assert_metrics(f1=0.9)

    def test_no_regression(guard_eval):
        guard_eval("datasets/x.jsonl", config="guard.yaml", baseline="evals/baseline.json").assert_passed()

A failure names the misjudged (or regressed) cases with their input and the judge's
reason. Outputs go to ``out=`` when the test gives one, else under
``--guard-eval-out DIR`` (one folder per test), else to the test's tmp folder; the
failure message says where.

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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--guard-eval-out", metavar="DIR", default=None, help="guard_eval: write each test's eval outputs to DIR/<test name> (default: the test's tmp folder)")


def _folder(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    base = request.config.getoption("--guard-eval-out")
    if not base:
        return tmp_path / "guard-eval"
    name = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in request.node.nodeid.replace("::", "__"))
    return Path(base) / name


@pytest.fixture
def guard_eval(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., EvalResult]:
    """Run an eval in-process and return its metrics; outputs go to ``out=``, else ``--guard-eval-out``, else a tmp dir."""

    def run(*datasets: str, out: str | None = None, **options: Any) -> EvalResult:
        from guard.eval.session import EXIT_ERROR, EXIT_UNRECORDED, evaluate
        from guard.eval.tables import rerecord_line

        options.setdefault("progress", False)
        folder = Path(out) if out else _folder(request, tmp_path)
        result = evaluate(list(datasets), out=str(folder), **options)
        if result.exit_code == EXIT_ERROR:  # a run that could not judge must never pass quietly
            pytest.fail("guard eval could not judge: " + "; ".join(result.problems) + f" (report: {folder / 'report.md'})", pytrace=False)
        if result.exit_code == EXIT_UNRECORDED:
            pytest.fail(f"guard eval: {rerecord_line(result.report)} (report: {folder / 'report.md'})", pytrace=False)
        return result

    return run


@pytest.fixture(scope="session")
def guard_vcr_config() -> dict[str, Any]:
    """vcrpy settings for judge calls (match on method, URI and body; secrets filtered; 2xx only)."""
    from guard.eval.recording import vcr_config

    return vcr_config()
