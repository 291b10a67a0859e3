"""``junit.xml``: what a CI test view should show red, and only that.

One suite per (model, depth) with a test case per dataset case, plus one test case
per gate and one per baseline comparison (or backtest limit). A case fails only
when it regressed against the baseline (beyond ``--max-regressions``), or, with no
baseline, when it is wrong; a case that was wrong in the baseline too is skipped as
a known failure, and so is a regression the limit allows, so against a baseline the
JUnit view goes red exactly when the gate does. A judgement that failed to run
is an ``<error>``, and so is a case replay had no recording for (re-record).

Classnames read as dataset and model (``shell.openai/gpt-4․1-mini @ config``):
JUnit viewers split a classname at its last dot into package and class, so dots
inside a name become a one-dot leader (U+2024), which looks the same.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from guard.eval.schema import BaselineComparison, CaseOutcome, MetricsReport
from guard.eval.tables import rerecord_line

__all__ = ["render_junit"]

_DOT_LEADER = "\u2024"


def _part(name: str) -> str:
    return name.replace(".", _DOT_LEADER)


_COUNTED = {"failure": "failures", "error": "errors", "skipped": "skipped"}


@dataclass
class _Suite:
    element: ET.Element
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(("tests", "failures", "errors", "skipped"), 0))

    def case(
        self, classname: str, name: str, outcome: str | None = None, message: str = "", text: str = "", kind: str = ""
    ) -> None:
        """A test case that passed (``outcome`` None), or a ``failure``, ``error`` or ``skipped`` one with ``message``."""
        element = ET.SubElement(self.element, "testcase", classname=classname, name=name)
        self.counts["tests"] += 1
        if outcome is not None:
            child = ET.SubElement(element, outcome, {"message": message, **({"type": kind} if kind else {})})
            child.text = text or None
            self.counts[_COUNTED[outcome]] += 1

    def close(self) -> None:
        for name, count in self.counts.items():
            self.element.set(name, str(count))


def _case(
    suite: _Suite, classname: str, case_id: str, key: str, outcome: CaseOutcome, baseline: BaselineComparison | None
) -> None:
    said = f"expected {outcome.label}, got {outcome.predicted}: {outcome.reason or 'no reason given'}"
    known = baseline is not None and key not in baseline.regressed and key not in baseline.unmatched
    allowed = (
        baseline is not None
        and key in baseline.regressed
        and baseline.max_regressions is not None
        and len(baseline.regressed) <= baseline.max_regressions
    )
    if outcome.correct:
        suite.case(classname, case_id)
    elif known:
        suite.case(classname, case_id, "skipped", f"known failure: wrong in the baseline too ({said})")
    elif allowed:
        within = baseline.max_regressions if baseline is not None else None
        suite.case(classname, case_id, "skipped", f"regressed, within --max-regressions {within}: {said}")
    else:
        why = (
            ""
            if baseline is None
            else "regressed: right in the baseline, now "
            if key in baseline.regressed
            else "new case, not in the baseline: "
        )
        outcome_kind = (
            ("error", "judgement-error")
            if outcome.predicted == "error"
            else ("failure", "regression" if why.startswith("regressed") else "wrong-verdict")
        )
        suite.case(classname, case_id, outcome_kind[0], why + said, outcome.reason or "", outcome_kind[1])


def render_junit(report: MetricsReport) -> str:
    suites = ET.Element("testsuites", name="guard eval" if not report.backtest else "guard backtest")
    opened: list[_Suite] = []

    def suite(name: str) -> _Suite:
        opened.append(_Suite(ET.SubElement(suites, "testsuite", name=name)))
        return opened[-1]

    comparisons = {b.current: b for b in report.baseline}
    for variant in report.variants:
        cases = suite(variant.name)
        baseline = comparisons.get(variant.name)
        for key, outcome in variant.case_outcomes.items():
            dataset, _, case_id = key.partition("/")
            _case(cases, f"{_part(dataset)}.{_part(variant.name)}", case_id, key, outcome, baseline)
    if report.unrecorded:
        missing = suite("re-record")
        for group in report.unrecorded:
            for key in group.cases:
                dataset, _, case_id = key.partition("/")
                missing.case(
                    f"{_part(dataset)}.re-record",
                    case_id,
                    "error",
                    f"no recording (rule {group.rule}): {rerecord_line(report)}",
                    kind="unrecorded",
                )
    if report.not_judged:
        unjudged = suite("could not judge")
        for entry in report.not_judged:
            dataset, _, case_id = entry.case.partition("/")
            unjudged.case(
                f"{_part(dataset)}.{_part(entry.variant)}",
                case_id,
                "error",
                f"could not judge: {entry.error}",
                kind="not-judged",
            )
    if (
        report.gates
        or report.baseline
        or (
            report.backtest
            and (report.backtest.max_new_denies is not None or report.backtest.max_new_allows is not None)
        )
    ):
        checks = suite("gates")
        for gate in report.gates:
            value = "undefined" if gate.value is None else f"{gate.value:.3f}"
            failed = None if gate.passed else "failure"
            checks.case(
                f"gates.{_part(gate.variant)}",
                f"{gate.metric} ≥ {gate.threshold:g}",
                failed,
                f"{gate.metric} = {value} < {gate.threshold:g}",
                kind="gate",
            )
        for b in report.baseline:
            reasons = [*b.limits_exceeded, *([b.why] if b.significant_drop else [])]
            text = "\n".join(f"regressed {key}" for key in b.regressed)
            checks.case(
                f"baseline.{_part(b.current)}",
                f"against {b.source}",
                "failure" if reasons else None,
                "; ".join(reasons),
                text,
                "baseline",
            )
        if report.backtest and (
            report.backtest.max_new_denies is not None or report.backtest.max_new_allows is not None
        ):
            bt = report.backtest
            checks.case(
                f"backtest.{_part(bt.config)}",
                f"against {bt.reference}",
                "failure" if bt.gate_failed else None,
                "; ".join(bt.limits_exceeded),
                kind="limit",
            )
    for opened_suite in opened:
        opened_suite.close()
    for name in ("tests", "failures", "errors", "skipped"):
        suites.set(name, str(sum(s.counts[name] for s in opened)))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
