"""``junit.xml``: one test case per dataset row per (model, depth), so CI test views list misjudged cases.

A wrong majority verdict is a ``<failure>`` whose message carries the judge's reason;
a judgement that failed to run is an ``<error>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from guard.eval.schema import MetricsReport

__all__ = ["render_junit"]


def render_junit(report: MetricsReport) -> str:
    suites = ET.Element("testsuites", name="guard eval")
    total = failures = errors = 0
    for variant in report.variants:
        suite = ET.SubElement(suites, "testsuite", name=variant.name)
        wrong = err = 0
        for key, outcome in variant.case_outcomes.items():
            dataset, _, case_id = key.partition("/")
            case = ET.SubElement(suite, "testcase", classname=f"{dataset}.{variant.name}", name=case_id)
            message = f"expected {outcome.label}, got {outcome.predicted}: {outcome.reason or 'no reason given'}"
            if outcome.predicted == "error":
                err += 1
                ET.SubElement(case, "error", message=message, type="judgement-error").text = outcome.reason or ""
            elif not outcome.correct:
                wrong += 1
                ET.SubElement(case, "failure", message=message, type="wrong-verdict").text = outcome.reason or ""
        suite.set("tests", str(len(variant.case_outcomes)))
        suite.set("failures", str(wrong))
        suite.set("errors", str(err))
        total, failures, errors = total + len(variant.case_outcomes), failures + wrong, errors + err
    suites.set("tests", str(total))
    suites.set("failures", str(failures))
    suites.set("errors", str(errors))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
