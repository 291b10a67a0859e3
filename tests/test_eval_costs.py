"""Costs a newcomer can trust: no price for an endpoint that is not the provider's, unknown stays unknown.

Also the cost/latency plots' tick labels, and ``guard eval`` listing every bad dataset line at once.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from eval_fixtures import case_rows, stub, suite, write_dataset, write_suite_config  # noqa: F401 (fixtures)

from guard.cli.main import main
from guard.eval.schema import MetricsReport, ResultRow
from guard.judge.keys import result_from_cache
from guard.testing.openai_stub import StubServer
from judge_fixtures import smart_spec

PRICED = "openai/gpt-4.1-mini"  # in LiteLLM's price map: a stub answering under this name must still not be priced


def test_a_priced_model_on_a_custom_endpoint_has_no_price_and_the_report_says_so(tmp_path: Path, stub: StubServer, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = write_dataset(tmp_path / "shell.jsonl")
    config = write_suite_config(tmp_path / "guard.yaml", stub.url, model=PRICED)
    out = tmp_path / "out"
    assert main(["eval", str(dataset), "--config", str(config), "--out", str(out), "--no-progress"]) == 0, capsys.readouterr()
    rows = [ResultRow.model_validate_json(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 12 and all(r.cost_usd is None and r.tokens_in for r in rows)
    variant = MetricsReport.model_validate_json((out / "metrics.json").read_text()).variants[0]
    assert (variant.cost_per_1k_usd, variant.cost_total_usd, variant.cost_unknown_rows) == (None, None, 12)
    report = (out / "report.md").read_text()
    usage = next(line for line in report.splitlines() if line.startswith(f"| {PRICED} @ config |") and "12 of 12" in line)
    assert usage.split(" | ")[5:8] == ["–", "–", "12 of 12"]  # cost /1k, cost total, rows without a price
    assert "$0." not in report


@pytest.mark.parametrize(("original", "shown"), [(None, None), (0.00021, 0.0)])
def test_a_cache_hit_shows_an_unknown_cost_as_unknown(original: float | None, shown: float | None) -> None:
    hit = result_from_cache(smart_spec(), {"decision": "deny", "reason": "r", "confidence": 0.9, "tier": "quick", "model": "m", "cost_usd": original})
    assert hit.cost_usd == shown and hit.details["original_cost_usd"] == original


@pytest.mark.parametrize("costs", [[0.000183, 0.000191, 0.00025], [0.1831, 0.1915], [12.5, 3000.0], [200.0, 210.0, 1234.5]])
def test_cost_and_latency_tick_labels_never_overlap(costs: list[float]) -> None:
    import matplotlib

    matplotlib.use("Agg", force=True)
    from guard.eval import plots

    f1 = SimpleNamespace(value=0.8, low=0.75, high=0.85)
    variants = [SimpleNamespace(name=f"model-{i}", cost_per_1k_usd=cost, metrics={"f1": f1}) for i, cost in enumerate(costs)]
    figure = plots._scatter(variants, "cost_per_1k_usd", "cost per 1,000 decisions (USD)")  # type: ignore[arg-type]
    assert figure is not None
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = [label.get_window_extent(renderer) for label in figure.axes[0].get_xticklabels() if label.get_text()]
    assert len(boxes) >= 2
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])


def test_guard_eval_lists_every_bad_dataset_line_before_judging(suite: dict[str, str], stub: StubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = case_rows(["ls"], "allow", "ok")
    lines = [
        json.dumps(good[0]),
        '{"id": "a", "tool_name": "Bash", "tool_input": {}, "label": "maybe"}',
        "not json",
        json.dumps(good[0]),  # a repeated id
        '{"id": "b", "tool_name": "Write", "tool_input": {}, "label": "deny", "rule": "no-risky-shell"}',  # a Bash-only hook
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    assert main(["eval", str(bad), "--config", suite["config"], "--out", suite["out"], "--no-progress"]) == 1
    err = capsys.readouterr().err
    for line in (2, 3, 4, 5):
        assert f"{bad}:{line}:" in err, err
    assert "4 problem(s)" in err and "does not apply to PreToolUse Write" in err and stub.calls == 0
