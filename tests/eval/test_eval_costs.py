"""Costs and provenance a team can trust: a gateway or local server is priced and flagged, however its endpoint is set.

Also: unknown stays unknown (never $0), and ``guard eval`` lists every bad dataset line at once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.eval import by_model, case_rows, write_dataset, write_suite_config
from fixtures.judge import smart_spec

from guard.cli.main import main
from guard.eval.schema import MetricsReport, ResultRow
from guard.judge.keys import result_from_cache
from guard.testing.openai_stub import Reply, StubServer, keyword_policy

pytestmark = pytest.mark.stub(responder=by_model)


PRICED = "openai/gpt-4.1-mini"  # in LiteLLM's price map: $0.40 in / $1.60 out per million tokens
UNKNOWN = "openai/llama-3.1-8b-local"  # in no price map: a local server's model


def _run(tmp_path: Path, config: Path, *extra: str) -> tuple[list[ResultRow], MetricsReport, str]:
    out = tmp_path / "out"
    assert (
        main(
            [
                "eval",
                str(write_dataset(tmp_path / "shell.jsonl")),
                "--config",
                str(config),
                "--out",
                str(out),
                "--no-progress",
                *extra,
            ]
        )
        == 0
    )
    rows = [ResultRow.model_validate_json(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return rows, MetricsReport.model_validate_json((out / "metrics.json").read_text()), (out / "report.md").read_text()


def test_a_gateway_run_is_priced_from_the_price_map_and_flagged_as_local(tmp_path: Path, stub: StubServer) -> None:
    rows, report, markdown = _run(tmp_path, write_suite_config(tmp_path / "guard.yaml", stub.url, model=PRICED))
    assert len(rows) == 12 and all(r.tokens_in and r.calls and r.calls[0].endpoint == stub.url for r in rows)
    variant = report.variants[0]
    tokens_in, tokens_out = sum(r.tokens_in or 0 for r in rows), sum(r.tokens_out or 0 for r in rows)
    assert variant.cost_total_usd == pytest.approx((tokens_in * 0.4 + tokens_out * 1.6) / 1e6)
    assert variant.cost_unknown_rows == 0
    assert [(p.model, p.input_per_mtok, p.output_per_mtok, p.source) for p in variant.prices] == [
        (PRICED, 0.4, 1.6, "LiteLLM price map")
    ]
    assert [(e.url, e.local) for e in variant.endpoints] == [(stub.url, True)]
    assert report.stub and "came from guard's stub" in (report.stub_reason or "")
    assert f"{stub.url} (local)" in markdown and "$0.4 in / $1.6 out (LiteLLM price map)" in markdown


def test_a_provider_variable_pointing_at_loopback_is_flagged_too(
    tmp_path: Path, stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", stub.url)  # no api_base: the endpoint comes from OpenAI's own variable
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = tmp_path / "guard.yaml"
    config.write_text(
        write_suite_config(tmp_path / "x.yaml", "http://unused").read_text().replace("  api_base: http://unused\n", "")
    )
    rows, report, _ = _run(tmp_path, config)
    assert stub.calls == 12 and all(r.calls[0].endpoint == stub.url for r in rows)
    assert report.stub and "came from guard's stub" in (report.stub_reason or "")
    assert report.variants[0].endpoints[0].local


def test_unknown_models_are_priced_by_price_or_the_config_and_otherwise_say_no_price(
    tmp_path: Path, stub: StubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_suite_config(tmp_path / "guard.yaml", stub.url, model=UNKNOWN)
    rows, report, markdown = _run(tmp_path, config)
    variant = report.variants[0]
    assert (variant.cost_per_1k_usd, variant.cost_total_usd, variant.cost_unknown_rows) == (None, None, 12)
    assert "| no price |" in markdown and "$0" not in markdown

    config.write_text(config.read_text() + f"prices:\n  {UNKNOWN}: {{input: 0.05, output: 0.08}}\n")
    _, configured, _ = _run(tmp_path, config)
    assert configured.variants[0].prices[0].source == "config prices" and configured.variants[0].cost_unknown_rows == 0
    _, given, _ = _run(tmp_path, config, "--price", f"{UNKNOWN}=1/2")
    price = given.variants[0].prices[0]
    assert (price.input_per_mtok, price.output_per_mtok, price.source) == (1.0, 2.0, "--price")
    tokens_in, tokens_out = sum(r.tokens_in or 0 for r in rows), sum(r.tokens_out or 0 for r in rows)
    assert given.variants[0].cost_total_usd == pytest.approx((tokens_in * 1 + tokens_out * 2) / 1e6)

    capsys.readouterr()
    assert (
        main(
            [
                "eval",
                str(tmp_path / "shell.jsonl"),
                "--config",
                str(config),
                "--out",
                str(tmp_path / "bad"),
                "--price",
                "gpt=cheap",
            ]
        )
        == 1
    )
    assert "USD per million tokens" in capsys.readouterr().err


@pytest.mark.parametrize(("original", "shown"), [(None, None), (0.00021, 0.0)])
def test_a_cache_hit_shows_an_unknown_cost_as_unknown(original: float | None, shown: float | None) -> None:
    hit = result_from_cache(
        smart_spec(),
        {"decision": "deny", "reason": "r", "confidence": 0.9, "tier": "quick", "model": "m", "cost_usd": original},
    )
    assert hit.cost_usd == shown and hit.details["original_cost_usd"] == original


def test_guard_eval_lists_every_bad_dataset_line_before_judging(
    suite: dict[str, str], stub: StubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
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


def test_a_local_model_on_loopback_is_not_called_a_stub(tmp_path: Path, stub: StubServer) -> None:
    """Only guard's own stub says it is one (system_fingerprint): a local server on 127.0.0.1 answering as a real model is reported as a model, marked local."""

    def local_server(body: dict[str, object]) -> Reply:
        answer = keyword_policy(body)
        return Reply(
            body={
                "model": "SmolLM2-135M-Instruct.Q4_1.gguf",
                "system_fingerprint": "b4600-llama.cpp",
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": answer.content}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 300, "completion_tokens": 20},
            }
        )

    stub.responder = local_server
    rows, report, markdown = _run(tmp_path, write_suite_config(tmp_path / "guard.yaml", stub.url))
    assert len(rows) == 12 and not report.stub and report.stub_reason is None and "STUB" not in markdown
    variant = report.variants[0]
    assert (
        variant.endpoints[0].local
        and variant.served_models == ["SmolLM2-135M-Instruct.Q4_1.gguf"]
        and variant.response_modes == {"json_schema": 12}
    )
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in markdown and "json_schema ×12" in markdown
    assert report.guard_version != "unknown" and report.prompt_versions == ["quick.v1"]
