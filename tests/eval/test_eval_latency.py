"""``guard eval`` reports the model's latency, timed at the transport, not the time a row spent elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.eval import BENIGN, GOOD, by_model, case_rows, write_dataset

from guard.cli.main import main
from guard.eval.schema import MetricsReport, ResultRow
from guard.testing.openai_stub import StubServer

pytestmark = pytest.mark.stub(responder=by_model)


def test_reported_latency_is_the_models_not_the_rows_wall_time(stub: StubServer, tmp_path: Path) -> None:
    stub.latency = 0.1
    dataset = write_dataset(tmp_path / "cases.jsonl", case_rows(BENIGN, "allow", "benign"))
    config = tmp_path / "guard.yaml"
    # a slow command hook beside the smart one: the row takes 0.6 s, the model 0.1 s
    config.write_text(
        f"models:\n  quick: {GOOD}\n  thorough: {GOOD}\n  api_base: {stub.url}\nhooks:\n  PreToolUse:\n"
        "    - id: judge\n      matcher: Bash\n      rule: Deny shell commands that destroy data.\n      depth: quick\n"
        "    - id: slow-check\n      matcher: Bash\n      command: sleep 0.6\n"
    )
    out = tmp_path / "out"
    assert main(["eval", str(dataset), "--config", str(config), "--out", str(out), "--no-progress"]) == 0
    rows = [ResultRow.model_validate_json(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == len(BENIGN) and all(r.error is None for r in rows)
    assert all(100 <= (r.latency_ms or 0) < 450 for r in rows), [r.latency_ms for r in rows]
    p50 = MetricsReport.model_validate_json((out / "metrics.json").read_text()).variants[0].latency_p50_ms
    assert p50 is not None and 100 <= p50 < 450


@pytest.mark.slow
def test_two_equally_fast_judges_time_alike_on_the_openai_route_and_through_litellm(tmp_path: Path) -> None:
    """Two stubs answering in 200 ms, one reached on guard's openai/ route and one through LiteLLM (hosted_vllm/), in one
    ``guard eval`` process: with both clients loaded and warm before the clock starts, their p50 latencies are within 10%.

    Two calls in flight per model: the variants share one event loop, and on a 2-core machine under a load of 10,
    eight LiteLLM calls' own CPU work queue every call's resumption behind them, the machine's time, not a route's.
    """
    from fixtures.processes import run_guard

    dataset = write_dataset(tmp_path / "cases.jsonl", case_rows(BENIGN * 3, "allow", "benign"))
    config = tmp_path / "guard.yaml"
    config.write_text(
        "hooks:\n  PreToolUse:\n    - id: judge\n      matcher: Bash\n      rule: Deny shell commands that destroy data.\n      depth: quick\n"
    )
    with StubServer(latency=0.2) as direct, StubServer(latency=0.2) as proxied:
        direct.responder = proxied.responder = by_model
        env = {
            "OPENAI_BASE_URL": direct.url,
            "OPENAI_API_KEY": "sk-test",
            "HOSTED_VLLM_API_BASE": proxied.url,
            "GUARD_API_BASE": "",
        }
        out = run_guard(
            [
                "eval",
                str(dataset),
                "--config",
                str(config),
                "--model",
                "openai/stub-good",
                "--model",
                "hosted_vllm/stub-good",
                "--concurrency",
                "2",
                "--out",
                "out",
                "--no-progress",
            ],
            tmp_path,
            env=env,
            timeout=300,
        )
        assert out.returncode == 0, out.stdout + out.stderr
        assert direct.calls == proxied.calls == len(BENIGN) * 3, "the warm-up sends nothing"
    report = MetricsReport.model_validate_json((tmp_path / "out" / "metrics.json").read_text())
    p50 = {v.model: v.latency_p50_ms for v in report.variants}
    fast, litellm = p50["openai/stub-good"], p50["hosted_vllm/stub-good"]
    assert fast and litellm and abs(litellm - fast) / fast <= 0.10, p50
    assert (
        "Latency is the provider's: each model call's HTTP exchange, request sent → answer read"
        in (tmp_path / "out" / "report.md").read_text()
    )
    assert "could not judge" not in out.stdout + out.stderr, "no start-up charged to a provider as a timeout"
