"""Metrics per (model, depth), model comparisons, baselines, gates and the report files, from hand-made rows."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import pytest

from guard.core.errors import GuardError
from guard.eval.compare import Limits, compare_outcomes, compare_to_baseline, load_baseline
from guard.eval.gates import evaluate_gates, parse_gate
from guard.eval.junit import render_junit
from guard.eval.metrics import compute_variants
from guard.eval.report_html import render_html
from guard.eval.report_md import render_markdown
from guard.eval.schema import CaseOutcome, DatasetInfo, MetricsReport, ResultRow
from guard.eval.scoring import is_correct


def row(case: str, label: str, verdict: str | None, **kw: Any) -> ResultRow:
    defaults: dict[str, Any] = {
        "dataset": "d",
        "case_id": case,
        "model": "a",
        "depth": "quick",
        "label": label,
        "verdict": verdict,
        "tool_name": "Bash",
    }
    return ResultRow(**(defaults | kw))


ROWS_A = [
    row(
        "d1",
        "deny",
        "deny",
        confidence=0.9,
        latency_ms=100.0,
        tokens_in=10,
        tokens_out=2,
        cost_usd=0.001,
        tags=["x"],
        reason="deletes",
    ),
    row("d2", "deny", "allow", confidence=0.8, latency_ms=300.0, cost_usd=0.003, tags=["x", "y"], reason="looked fine"),
    row("a1", "allow", "allow", confidence=0.7, latency_ms=900.0, replayed=True, tags=["y"], tool_name="Write"),
    row(
        "a2",
        "allow",
        "allow",
        latency_ms=50.0,
        cost_usd=0.002,
        error="[h] no verdict in the model's answer",
        error_kind="unparsed",
        tool_name="Write",
    ),
]


def test_variant_metrics_from_rows() -> None:
    (v,) = compute_variants(ROWS_A)
    assert v.name == "a @ quick" and v.cases == 4 and v.rows == 4
    assert v.confusion["deny"] == {"allow": 1, "ask": 0, "deny": 1, "error": 0}
    assert v.confusion["allow"] == {"allow": 1, "ask": 0, "deny": 0, "error": 1}
    assert (v.errors, v.unparsed, v.infrastructure_errors) == (1, 1, 0)
    assert (v.binary.tp, v.binary.fn, v.binary.tn, v.binary.error_negative) == (1, 1, 1, 1)
    assert v.metrics["accuracy"].value == pytest.approx(0.5)
    # latency from live rows only: the replayed 900 ms row is left out
    assert (v.latency_live_rows, v.latency_excluded_rows) == (3, 1)
    assert v.latency_p50_ms == pytest.approx(100.0)
    assert v.latency_p95_ms == pytest.approx(100 + 0.9 * 200)
    assert (
        v.cost_per_1k_usd == pytest.approx(2.0)
        and v.cost_total_usd == pytest.approx(0.006)
        and v.cost_unknown_rows == 1
    )
    assert v.tokens_in_per_1k == pytest.approx(10_000)
    # calibration over judged rows with a confidence: (0.9 right, 0.8 wrong, 0.7 right)
    assert v.calibration_rows == 3
    assert v.brier == pytest.approx((0.01 + 0.64 + 0.09) / 3)
    slices = {(s.kind, s.name): s for s in v.slices}
    assert slices[("tag", "x")].cases == 2 and slices[("tag", "x")].accuracy.value == pytest.approx(0.5)
    assert slices[("tool", "Write")].cases == 2 and slices[("tool", "Write")].binary.error_negative == 1
    assert v.case_outcomes["d/d2"].reason == "looked fine" and not v.case_outcomes["d/d2"].correct
    assert v.flip_rate is None  # no repeats


def test_repeats_collapse_to_the_majority_and_count_flips() -> None:
    rows = [
        row("c1", "deny", "deny", repeat=0),
        row("c1", "deny", "allow", repeat=1),
        row("c1", "deny", "deny", repeat=2),
        row("c2", "allow", "allow", repeat=0),
        row("c2", "allow", "allow", repeat=1),
        row("c2", "allow", "allow", repeat=2),
    ]
    (v,) = compute_variants(rows)
    assert v.cases == 2 and v.rows == 6
    assert v.case_outcomes["d/c1"].predicted == "deny" and v.case_outcomes["d/c1"].flipped
    assert v.flip_rate == pytest.approx(0.5) and v.cases_with_repeats == 2
    assert v.metrics["accuracy"].value == 1.0 and v.metrics["accuracy"].n == 2  # n is cases, not rows


def _outcomes(pairs: list[tuple[str, str]]) -> dict[str, CaseOutcome]:
    return {
        f"d/c{i}": CaseOutcome(label=label, predicted=pred, correct=is_correct(label, pred))
        for i, (label, pred) in enumerate(pairs)
    }


def test_model_against_model_uses_discordant_cases_only() -> None:
    a = _outcomes([("deny", "deny")] * 6 + [("allow", "allow")] * 4)
    b = _outcomes([("deny", "allow")] * 5 + [("deny", "deny")] + [("allow", "allow")] * 3 + [("allow", "deny")])
    pair = compare_outcomes("a", a, "b", b, seed=3)
    assert (pair.cases, pair.a_only_correct, pair.b_only_correct) == (10, 6, 0)
    assert pair.mcnemar_p == pytest.approx(2 / 64)
    assert pair.f1_a == pytest.approx(1.0) and pair.f1_b == pytest.approx(2 / 8)
    assert pair.f1_diff_low is not None and pair.f1_diff_high is not None
    assert 0 < pair.f1_diff_low <= pair.f1_diff <= pair.f1_diff_high  # type: ignore[operator]
    same = compare_outcomes("a", a, "a2", a)
    assert (same.mcnemar_p, same.f1_diff, same.f1_diff_low, same.f1_diff_high) == (1.0, 0.0, 0.0, 0.0)


def _variant(model: str, pairs: list[tuple[str, str]]) -> Any:
    rows = [row(f"c{i}", label, pred, model=model) for i, (label, pred) in enumerate(pairs)]
    return compute_variants(rows)[0]


def test_baseline_flags_a_significant_drop_and_lists_cases() -> None:
    base = _variant("m", [("deny", "deny")] * 10 + [("allow", "allow")] * 10)
    worse = _variant("m", [("deny", "allow")] * 10 + [("allow", "allow")] * 10)
    (diff,) = compare_to_baseline([worse], [base], "base.json")
    assert diff.significant_drop and len(diff.regressed) == 10 and diff.improved == []
    assert "McNemar p=0.0020" in diff.why


def test_baseline_small_change_or_improvement_is_not_a_drop() -> None:
    base = _variant("m", [("deny", "deny")] * 10 + [("allow", "allow")] * 10)
    slightly = _variant("m", [("deny", "allow")] + [("deny", "deny")] * 9 + [("allow", "allow")] * 10)
    (diff,) = compare_to_baseline([slightly], [base], "base.json")
    assert not diff.significant_drop and diff.regressed == ["d/c0"]
    (back,) = compare_to_baseline([base], [slightly], "base.json")
    assert not back.significant_drop and back.improved == ["d/c0"]


def test_baseline_matches_variants_by_name_or_a_single_one() -> None:
    base = _variant("old-model", [("deny", "deny")])
    now = _variant("new-model", [("deny", "deny")])
    (diff,) = compare_to_baseline([now], [base], "b")
    assert (diff.current, diff.baseline) == ("new-model @ quick", "old-model @ quick")
    with pytest.raises(GuardError, match="no variant to compare"):
        compare_to_baseline([now], [base, _variant("third", [("deny", "deny")])], "b")


def test_load_baseline_rejects_a_foreign_file(tmp_path: Any) -> None:
    bad = tmp_path / "metrics.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(GuardError, match="not a guard metrics.json"):
        load_baseline(str(bad))
    with pytest.raises(GuardError, match="cannot read"):
        load_baseline(str(tmp_path / "missing.json"))


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("fpr=0.1", "gate on specificity"),
        ("bogus=1", "unknown metric"),
        ("f1", "METRIC=VALUE"),
        ("f1=abc", "not a number"),
        ("f1=2", "between 0 and 1"),
    ],
)
def test_gate_parsing_errors_say_what_is_allowed(text: str, error: str) -> None:
    with pytest.raises(GuardError, match=error):
        parse_gate(text)


def test_gates_hold_for_every_variant_and_fail_when_undefined() -> None:
    assert parse_gate("recall=90%") == ("recall", pytest.approx(0.9))
    good = _variant("good", [("deny", "deny"), ("allow", "allow")])
    none_positive = _variant("empty", [("allow", "allow")])
    results = evaluate_gates([parse_gate("f1=0.9")], [good, none_positive])
    assert [(g.variant, g.passed) for g in results] == [("good @ quick", True), ("empty @ quick", False)]


def _report(**kw: Any) -> MetricsReport:
    a = compute_variants(ROWS_A)[0]
    b = compute_variants(
        [r.model_copy(update={"model": "b", "verdict": "deny", "error": None, "error_kind": None}) for r in ROWS_A]
    )[0]
    defaults: dict[str, Any] = {
        "guard_version": "0.1.0",
        "created_at": "2026-01-01T00:00:00+00:00",
        "datasets": [DatasetInfo(name="d", path="d.jsonl", cases=4, sha256="0" * 64)],
        "variants": [a, b],
        "comparisons": [compare_outcomes(a.name, a.case_outcomes, b.name, b.case_outcomes)],
        "gates": evaluate_gates([parse_gate("f1=0.9")], [a, b]),
    }
    return MetricsReport(**(defaults | kw))


def test_metrics_json_round_trips_and_is_versioned() -> None:
    report = _report()
    again = MetricsReport.model_validate_json(report.model_dump_json())
    assert again == report and again.schema_version == 1


def test_markdown_report_says_stub_and_result_first() -> None:
    text = render_markdown(_report(stub=True, stub_reason="model openai/stub-judge is a stub"))
    head = text[:600]
    assert "STUB model (model openai/stub-judge is a stub)" in head
    assert "**Result: FAILED** (2 gates failed)" in head
    assert "| a @ quick | 4 |" in text and "#### Confusion matrix: b @ quick" in text
    assert "<details><summary>Misjudged cases</summary>" in text
    assert "STUB" not in render_markdown(_report())


def test_html_report_is_one_self_contained_file_with_an_svg_chart() -> None:
    html = render_html(_report())
    assert "http://" not in html and "https://" not in html and "<script" not in html and "<img" not in html
    assert html.count('<svg class="chart"') == 1  # cost against F1, drawn inline
    assert html.count("Confusion matrix: a @ quick") == 1  # one set of confusion matrices, not a figure and a table
    assert "Model against model" in html


def test_a_row_without_a_price_is_never_shown_as_zero() -> None:
    unpriced = compute_variants([r.model_copy(update={"cost_usd": None}) for r in ROWS_A])[0]
    text = render_markdown(_report(variants=[unpriced], comparisons=[], gates=[]))
    assert "| no price |" in text and "$0" not in text


def _baseline_report(
    now_pairs: list[tuple[str, str]], base_pairs: list[tuple[str, str]], limit: int | None = 0
) -> MetricsReport:
    now, base = _variant("m", now_pairs), _variant("m", base_pairs)
    (diff,) = compare_to_baseline([now], [base], "base.json", limits=Limits(regressions=limit))
    return _report(
        variants=[now], comparisons=[], gates=evaluate_gates([parse_gate("accuracy=0.5")], [now]), baseline=[diff]
    )


def test_junit_fails_only_regressions_and_skips_known_failures() -> None:
    base = [("deny", "deny"), ("allow", "allow"), ("deny", "allow"), ("allow", "allow")]  # c2 already wrong
    now = [("deny", "allow"), ("allow", "allow"), ("deny", "allow"), ("allow", "allow")]  # c0 regressed, c2 still wrong
    root = ET.fromstring(render_junit(_baseline_report(now, base)))
    cases = {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}
    regressed = cases[("d.m @ quick", "c0")].find("failure")
    assert regressed is not None and regressed.get("message", "").startswith(
        "regressed: right in the baseline, now expected deny, got allow"
    )
    known = cases[("d.m @ quick", "c2")].find("skipped")
    assert known is not None and known.get("message", "").startswith("known failure: wrong in the baseline too")
    assert cases[("gates.m @ quick", "accuracy ≥ 0.5")].find("failure") is None  # one test case per gate
    baseline = cases[("baseline.m @ quick", "against base.json")].find("failure")  # and one for the baseline comparison
    assert baseline is not None and baseline.get("message") == "1 regression > --max-regressions 0"
    assert (root.get("failures"), root.get("skipped")) == ("2", "1")

    same = ET.fromstring(
        render_junit(_baseline_report(base, base))
    )  # nothing regressed: green, even with a case that is wrong
    assert same.get("failures") == "0" and same.get("errors") == "0" and same.get("skipped") == "1"
    allowed = ET.fromstring(
        render_junit(_baseline_report(now, base, limit=1))
    )  # a regression the limit allows is listed, not red
    assert allowed.get("failures") == "0" and allowed.get("skipped") == "2"


def test_junit_without_a_baseline_fails_wrong_cases_and_classnames_read_as_dataset_and_model() -> None:
    rows = [row("c1", "deny", "allow", model="openai/gpt-4.1-mini", dataset="shell.v2", reason="looked fine")]
    report = _report(variants=compute_variants(rows), comparisons=[], gates=[])
    (case,) = ET.fromstring(render_junit(report)).iter("testcase")
    assert (
        case.get("classname") == "shell\u2024v2.openai/gpt-4\u20241-mini @ quick"
    )  # one dot: package = dataset, class = model
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == "expected deny, got allow: looked fine"
