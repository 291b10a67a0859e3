"""pytest plugin (entry point ``guard``): the ``guard_eval`` fixture.

    def test_rules(guard_eval):
        guard_eval("datasets/x.jsonl", config="guard.yaml").assert_metrics(f1=0.9)

    def test_no_regression(guard_eval):
        guard_eval("datasets/x.jsonl", config="guard.yaml", baseline="evals/baseline.json").assert_passed()

A failure names the misjudged (or regressed) cases with their input and the judge's
reason. Outputs go to ``out=`` when the test gives one, else under
``--guard-eval-out DIR`` (one folder per test), else to the test's tmp folder; the
failure message says where.

A test marked ``@pytest.mark.vcr`` (pytest-recording) hands its cassette to guard's
judge (:mod:`guard.judge.cassette`): ``openai/…`` calls are recorded and replayed at
guard's own HTTP client, so a replay runs production's parsing; LiteLLM's calls go
through vcrpy's patch of httpx into the same cassette. A replay needs no provider key.
Concurrent judge calls all POST to one URL, so cassettes must match on what was asked;
``guard_vcr_config`` holds the settings (the judge call matcher: operation and body,
not host; secrets filtered; 2xx only) for a ``vcr_config`` fixture:

    @pytest.fixture(scope="module")
    def vcr_config(guard_vcr_config):
        return guard_vcr_config

pytest loads this module in every session of every project that installs guard,
so it imports nothing heavy: the eval machinery loads when a test first calls the
fixture, the cassette module when a test has a cassette.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from guard.eval.session import EvalResult

__all__ = ["guard_eval", "guard_judge_cassette", "guard_vcr_config", "pytest_recording_configure"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--guard-eval-out",
        metavar="DIR",
        default=None,
        help="guard_eval: write each test's eval outputs to DIR/<test name> (default: the test's tmp folder)",
    )


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
        # lazy: the pytest11 entry point loads this module into every pytest run
        from guard.eval.session import EXIT_ERROR, EXIT_NOT_JUDGED, EXIT_UNRECORDED, evaluate
        from guard.eval.tables import not_judged_line, rerecord_line

        options.setdefault("progress", False)
        folder = Path(out) if out else _folder(request, tmp_path)
        result = evaluate(list(datasets), out=str(folder), **options)
        if result.exit_code == EXIT_ERROR:  # a run that could not judge must never pass quietly
            pytest.fail(
                "guard eval could not judge: " + "; ".join(result.problems) + f" (report: {folder / 'report.md'})",
                pytrace=False,
            )
        if result.exit_code == EXIT_UNRECORDED:
            pytest.fail(f"guard eval: {rerecord_line(result.report)} (report: {folder / 'report.md'})", pytrace=False)
        if result.exit_code == EXIT_NOT_JUDGED:
            pytest.fail(f"guard eval: {not_judged_line(result.report)} (report: {folder / 'report.md'})", pytrace=False)
        return result

    return run


@pytest.hookimpl(optionalhook=True)
def pytest_recording_configure(config: pytest.Config, vcr: Any) -> None:
    """pytest-recording made a ``vcr.VCR``: teach it guard's judge call matcher (named in ``guard_vcr_config``)."""
    # lazy: the pytest11 entry point loads this module into every pytest run
    from guard.judge.cassette import register

    register(vcr)


@pytest.fixture(autouse=True)
def guard_judge_cassette(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The cassette of a ``@pytest.mark.vcr`` test, handed to guard's judge for the test's duration (None without one)."""
    cassette = request.getfixturevalue("vcr") if "vcr" in request.fixturenames else None
    if cassette is None:
        yield None
        return
    # lazy: the pytest11 entry point loads this module into every pytest run
    from guard.judge.cassette import use

    with use(cassette):
        yield cassette


@pytest.fixture(scope="session")
def guard_vcr_config() -> dict[str, Any]:
    """vcrpy settings for judge calls (match on method, URI and body; secrets filtered; 2xx only)."""
    # lazy: the pytest11 entry point loads this module into every pytest run
    from guard.eval.recording import vcr_config

    return vcr_config()
