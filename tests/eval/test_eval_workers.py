"""``guard eval --workers N``: judging split over processes gives the same rows, and refuses what one process must do."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.eval import by_model

from guard.cli.main import main
from guard.eval.schema import ResultRow
from guard.testing.openai_stub import StubServer

pytestmark = [pytest.mark.slow, pytest.mark.stub(responder=by_model)]


def verdicts(out: str) -> dict[str, str | None]:
    rows = [ResultRow.model_validate_json(line) for line in Path(out, "results.jsonl").read_text().splitlines()]
    return {f"{r.case_id}#{r.repeat}": r.verdict for r in rows if r.error is None}


def test_workers_judge_every_case_once_with_the_same_verdicts(
    suite: dict[str, str], stub: StubServer, tmp_path: Path
) -> None:
    single, split = str(tmp_path / "single"), str(tmp_path / "split")
    args = [
        "eval",
        suite["dataset"],
        "--config",
        suite["config"],
        "--repeats",
        "2",
        "--concurrency",
        "4",
        "--no-progress",
    ]
    assert main([*args, "--out", single]) == 0
    assert main([*args, "--out", split, "--workers", "2"]) == 0
    assert stub.calls == 2 * 24  # 12 cases x 2 repeats per run, none lost or judged twice
    assert verdicts(split) == verdicts(single) and len(verdicts(split)) == 24


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--workers", "3", "--concurrency", "2"], "--workers must be between 1 and --concurrency"),
        (["--workers", "2", "--replay", "cassettes"], "without --workers"),
    ],
)
def test_workers_refuse_what_needs_one_process(
    suite: dict[str, str], stub: StubServer, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main(["eval", suite["dataset"], "--config", suite["config"], "--out", suite["out"], *extra]) == 1
    assert message in capsys.readouterr().err and stub.calls == 0
