"""The scheduler without a model: resume planning, per-model concurrency, 429 back-off, stopping on infrastructure errors."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from guard.core.settings import Settings
from guard.datasets import Case
from guard.eval.cases import JudgedCase, build_event
from guard.eval.limiter import AdaptiveLimiter
from guard.eval.runner import ResultsFile, Variant, WorkItem, plan, read_rows, run_schedule
from guard.eval.schema import ResultRow


def _items(n: int, models: tuple[str, ...] = ("m",), repeats: int = 1) -> list[WorkItem]:
    cases = [Case(id=f"c{i}", tool_name="Bash", tool_input={"command": f"echo {i}"}, label="allow") for i in range(n)]
    judged = [JudgedCase("d", c, build_event(c), ()) for c in cases]
    variants = [Variant(m, "quick", Settings()) for m in models]
    return [WorkItem(v, c, r, f"fp-{c.case.id}") for r in range(repeats) for c in judged for v in variants]


def _row(item: WorkItem, **kw: object) -> ResultRow:
    return ResultRow(
        dataset="d",
        case_id=item.case.case.id,
        model=item.variant.model,
        depth="quick",
        repeat=item.repeat,
        label="allow",
        verdict="allow",
        fingerprint=item.fingerprint,
        **kw,  # type: ignore[arg-type]
    )


def test_plan_keeps_done_rows_and_schedules_missing_stale_and_infrastructure_ones() -> None:
    items = _items(4)
    done = _row(items[0])
    stale = _row(items[1]).model_copy(update={"fingerprint": "old"})
    broke = _row(items[2], error="unavailable", error_kind="infrastructure")
    other = _row(items[3]).model_copy(update={"model": "gone"})
    relabeled = done.model_copy(update={"label": "deny", "tags": ["old"]})
    kept, todo = plan(items, [relabeled, stale, broke, other])
    assert [r.case_id for r in kept] == ["c0"]
    assert kept[0].label == "allow" and kept[0].tags == []  # the dataset's current label wins, no rejudging
    assert [i.case.case.id for i in todo] == ["c1", "c2", "c3"]


def test_results_file_rewrites_kept_rows_and_appends_new_ones(tmp_path: Path) -> None:
    items = _items(3)
    path = tmp_path / "results.jsonl"
    path.write_text(_row(items[0]).model_dump_json() + "\n" + '{"dataset": "d", "case_')  # torn last line
    assert [r.case_id for r in read_rows(path)] == ["c0"]
    sink = ResultsFile(path, read_rows(path))
    sink(_row(items[1]))
    sink.close()
    assert [r.case_id for r in read_rows(path)] == ["c0", "c1"]


async def test_limiter_halves_on_rate_limits_and_climbs_back() -> None:
    limiter = AdaptiveLimiter(8)
    await limiter.rate_limited()
    await limiter.rate_limited()
    assert limiter.limit == 2
    for _ in range(2):
        await limiter.succeeded()
    assert limiter.limit == 3
    for _ in range(100):
        await limiter.succeeded()
    assert limiter.limit == 8  # never above the ceiling
    for _ in range(10):
        await limiter.rate_limited()
    assert limiter.limit == 1


async def test_concurrency_is_per_model_and_never_exceeded() -> None:
    in_flight: dict[str, int] = {"a": 0, "b": 0}
    peak: dict[str, int] = {"a": 0, "b": 0}

    async def judge(item: WorkItem) -> ResultRow:
        model = item.variant.model
        in_flight[model] += 1
        peak[model] = max(peak[model], in_flight[model])
        await asyncio.sleep(0.01)
        in_flight[model] -= 1
        return _row(item)

    rows: list[ResultRow] = []
    outcome = await run_schedule(_items(20, ("a", "b")), judge, rows.append, concurrency=3, progress=False)
    assert len(rows) == len(outcome.rows) == 40 and outcome.aborted is None
    assert peak == {"a": 3, "b": 3}


async def test_rate_limited_calls_back_off_and_are_retried() -> None:
    calls = 0

    async def judge(item: WorkItem) -> ResultRow:
        nonlocal calls
        calls += 1
        if calls <= 3:
            return _row(
                item,
                error="[h] model m unavailable after 4 attempt(s): RateLimitError 429: slow down",
                error_kind="infrastructure",
            )
        return _row(item)

    outcome = await run_schedule(_items(4), judge, lambda row: None, concurrency=4, progress=False, backoff=0.001)
    assert outcome.aborted is None
    assert [r.error for r in outcome.rows] == [None] * 4
    assert outcome.rate_limit_backoffs == 3 and calls == 7


async def test_an_infrastructure_failure_stops_the_run_and_names_the_case() -> None:
    async def judge(item: WorkItem) -> ResultRow:
        if item.case.case.id == "c2":
            return _row(
                item,
                error="[h] model m unavailable after 4 attempt(s): connection refused",
                error_kind="infrastructure",
            )
        return _row(item)

    outcome = await run_schedule(_items(10), judge, lambda row: None, concurrency=1, progress=False)
    assert outcome.aborted is not None and outcome.aborted.startswith("d/c2 (m @ quick)")
    assert len(outcome.rows) == 3  # c0, c1, c2: nothing after the failure was started


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("the model refused to judge: no", "unparsed"),
        ("no verdict in the model's answer: 'hm'", "unparsed"),
        ("model x unavailable after 4 attempt(s): APIConnectionError", "infrastructure"),
        ("smart hook 'h' (depth quick) has no model for the quick tier: set GUARD_MODEL_QUICK", "infrastructure"),
        ("timed out after 10s", "error"),
        ("crashed: ValueError: boom", "error"),
    ],
)
def test_error_kinds(message: str, kind: str) -> None:
    from guard.eval.verdicts import classify_error

    assert classify_error(message) == kind
    assert classify_error("anything", "JudgeBadResponse") == "unparsed"


def test_progress_shows_count_cost_and_errors_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    from guard.eval.progress import Progress

    with Progress(2, enabled=True) as bar:
        bar.advance(0.25, error=False)
        bar.advance(None, error=True)
    err = capsys.readouterr().err
    assert "2/2" in err and "$0.2500" in err and "errors 1" in err
    with Progress(2) as quiet:  # not a terminal: silent
        quiet.advance(1.0, error=True)
    assert capsys.readouterr().err == ""
