"""``guard eval --prevalence`` and recall at a fixed FPR, checked against figures worked out by hand.

The stub answers each case with the verdict and confidence written into its
command (``V:deny:0.95``), so the confusion counts and P(deny) scores are known:

    label deny (20):  10 deny@0.95, 2 deny@0.90, 4 deny@0.60, 4 allow@0.90 (P(deny) 0.10)
    label allow (100): 1 deny@0.90, 2 deny@0.60, 97 allow@0.90

TP 16, FN 4, FP 3, TN 97: recall 0.8, FPR 0.03.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from guard.cli.main import main
from guard.eval.schema import MetricsReport
from guard.eval.stats import wilson_interval
from guard.judge.fence import FENCE_RE
from guard.testing.openai_stub import Reply, StubServer

POSITIVES = [("deny", 0.95)] * 10 + [("deny", 0.90)] * 2 + [("deny", 0.60)] * 4 + [("allow", 0.90)] * 4
NEGATIVES = [("deny", 0.90)] + [("deny", 0.60)] * 2 + [("allow", 0.90)] * 97


def scripted(body: dict[str, Any]) -> Reply:
    text = "\n".join(str(m.get("content")) for m in body.get("messages") or [])
    fenced = " ".join(m.group(2) for m in FENCE_RE.finditer(text))
    decision, confidence = re.search(r"V:(\w+):([\d.]+)", fenced).groups()  # type: ignore[union-attr]
    return Reply.verdict(decision, "scripted", confidence=float(confidence))


pytestmark = pytest.mark.stub(responder=scripted)


@pytest.fixture
def suite(tmp_path: Path, stub: StubServer) -> dict[str, str]:
    rows = [
        {
            "id": f"{label}-{i}",
            "tool_name": "Bash",
            "tool_input": {"command": f"run job {i} V:{verdict}:{confidence}"},
            "label": label,
        }
        for label, answers in (("deny", POSITIVES), ("allow", NEGATIVES))
        for i, (verdict, confidence) in enumerate(answers)
    ]
    dataset = tmp_path / "known.jsonl"
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows))
    config = tmp_path / "guard.yaml"
    config.write_text(
        f"models: {{quick: openai/stub-judge, api_base: {stub.url}}}\n"
        "hooks:\n  PreToolUse:\n    - id: jobs\n      matcher: Bash\n      depth: quick\n      rule: Deny jobs that should not run.\n"
    )
    return {"dataset": str(dataset), "config": str(config), "out": str(tmp_path / "out")}


def precision_at(prevalence: float, recall: float, fpr: float) -> float:
    return prevalence * recall / (prevalence * recall + (1 - prevalence) * fpr)


def test_prevalence_adjusted_precision_and_recall_at_fixed_fpr(
    suite: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "eval",
            suite["dataset"],
            "--config",
            suite["config"],
            "--out",
            suite["out"],
            "--prevalence",
            "0.02",
            "--suggest-thresholds",
            "--no-progress",
        ]
    )
    assert code == 0, capsys.readouterr()
    [variant] = MetricsReport.model_validate_json(Path(suite["out"], "metrics.json").read_text()).variants
    assert (variant.binary.tp, variant.binary.fn, variant.binary.fp, variant.binary.tn) == (16, 4, 3, 97)
    assert variant.metrics["precision"].value == pytest.approx(16 / 19)  # the balanced figure, unchanged

    at = variant.at_prevalence
    assert at is not None and at.prevalence == 0.02
    # 0.02·0.8 / (0.02·0.8 + 0.98·0.03) = 0.016 / 0.0454
    assert at.precision.value == pytest.approx(0.016 / 0.0454)
    assert at.alerts_per_1k.value == pytest.approx(45.4)
    assert at.false_denies_per_1k.value == pytest.approx(29.4)
    recall_low, recall_high = wilson_interval(16, 20)  # type: ignore[misc]
    fpr_low, fpr_high = wilson_interval(3, 100)  # type: ignore[misc]
    assert at.precision.low == pytest.approx(precision_at(0.02, recall_low, fpr_high))
    assert at.precision.high == pytest.approx(precision_at(0.02, recall_high, fpr_low))
    assert at.false_denies_per_1k.low == pytest.approx(980 * fpr_low) and at.false_denies_per_1k.high == pytest.approx(
        980 * fpr_high
    )

    one, tenth = variant.operating_points
    # 1% of 100 negatives = 1 false positive: stop at P(deny) ≥ 0.90 (12 of 20 positives, 1 negative)
    assert (one.target_fpr, one.threshold, one.fpr, one.recall.value) == (0.01, 0.9, 0.01, pytest.approx(0.6))
    # 0.1%: no false positive at all: only the 0.95 denies (10 of 20)
    assert (tenth.target_fpr, tenth.threshold, tenth.fpr, tenth.recall.value) == (0.001, 0.95, 0.0, pytest.approx(0.5))
    assert (one.recall.low, one.recall.high) == pytest.approx(wilson_interval(12, 20))

    out = capsys.readouterr().out
    assert "at prevalence 0.02: precision 0.352" in out
    assert "FPR ≤ 0.01: confidence_threshold: 0.9  (recall 0.600" in out
    assert "fewer than 1000 negatives" in out  # 0.1% of 100 cases is finer than one case
    report = Path(suite["out"], "report.md").read_text()
    assert "At the stated base rate" in report and "Recall at a fixed false-positive rate" in report


def test_a_prevalence_outside_0_1_is_refused_before_any_call(
    suite: dict[str, str], stub: StubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["eval", suite["dataset"], "--config", suite["config"], "--out", suite["out"], "--prevalence", "2"]) == 1
    )
    assert "--prevalence: prevalence must be a fraction strictly between 0 and 1" in capsys.readouterr().err
    assert stub.calls == 0
