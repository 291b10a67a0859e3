"""Record and replay: cassettes keep no secrets and no errors, replay never touches the network,
and a case with no recording is its own outcome (exit 3, "re-record"), never a quality drop."""

from __future__ import annotations

import shlex
import socket
from pathlib import Path

import pytest
from fixtures.eval import BENIGN, by_model

from guard.cli.main import main
from guard.eval.recording import recording
from guard.eval.schema import MetricsReport, ResultRow
from guard.testing.openai_stub import Reply, StubServer

pytestmark = pytest.mark.stub(responder=by_model)


SECRET = "sk-test-DO-NOT-RECORD-4242"


def _verdicts(out: Path) -> dict[tuple[str, int], str | None]:
    rows = [ResultRow.model_validate_json(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return {(r.case_id, r.repeat): r.verdict for r in rows}


@pytest.mark.slow
def test_record_then_replay_gives_the_same_verdicts_without_any_call(
    suite: dict[str, str], stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    stub.enqueue(Reply.error(500, "transient"))  # retried by the judge; must not be recorded
    cassettes = tmp_path / "cassettes"
    recorded = tmp_path / "recorded"
    assert main(["eval", suite["dataset"], "--config", suite["config"], "--out", str(recorded), "--record", str(cassettes), "--repeats", "2"]) == 0
    cassette = (cassettes / "shell.yaml").read_text()
    assert SECRET not in cassette
    assert "code: 500" not in cassette and cassette.count("code: 200") == 24
    calls = stub.calls

    replayed = tmp_path / "replayed"
    assert main(["eval", suite["dataset"], "--config", suite["config"], "--out", str(replayed), "--replay", str(cassettes), "--repeats", "2"]) == 0
    assert stub.calls == calls  # the stub is still up at the recorded URL, yet nothing reached it
    assert _verdicts(replayed) == _verdicts(recorded)
    report = MetricsReport.model_validate_json((replayed / "metrics.json").read_text())
    assert report.replayed and report.variants[0].latency_live_rows == 0 and report.variants[0].latency_p50_ms is None
    assert "latency is not measured" in (replayed / "report.md").read_text()


def test_an_edited_rule_not_re_recorded_says_re_record_and_judges_nothing(
    suite: dict[str, str], stub: StubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassettes, base = tmp_path / "cassettes", tmp_path / "base"
    assert main(["eval", suite["dataset"], "--config", suite["config"], "--out", str(base), "--record", str(cassettes)]) == 0
    config = Path(suite["config"])
    config.write_text(config.read_text().replace("destroy data", "destroy or overwrite data"))  # the team edits its rule
    capsys.readouterr()
    out = tmp_path / "replayed"
    args = ["eval", suite["dataset"], "--config", suite["config"], "--out", str(out), "--replay", str(cassettes), "--baseline", str(base / "metrics.json"), "--fail-under", "f1=0.9"]
    code = main(args)
    printed = capsys.readouterr()
    assert code == 3, printed
    assert "re-record (12 cases of rule no-risky-shell have no recording)" in printed.out + printed.err
    assert "regressed" not in printed.out + printed.err and "gate failed" not in printed.out + printed.err  # nothing sends the reader after a quality drop
    report = MetricsReport.model_validate_json((out / "metrics.json").read_text())
    assert report.gates == [] and report.baseline == [] and report.variants == []  # no figure from cases that were not judged
    assert [(g.rule, len(g.cases)) for g in report.unrecorded] == [("no-risky-shell", 12)]
    markdown = (out / "report.md").read_text()
    result = next(line for line in markdown.splitlines() if line.startswith("**Result"))
    assert result.startswith("**Result: NOT JUDGED** — re-record (12 cases of rule no-risky-shell have no recording): guard eval ")
    assert markdown.index(result) < markdown.index("|") and "regressed" not in markdown.lower() and "FAILED" not in markdown
    junit = (out / "junit.xml").read_text()
    assert junit.count('type="unrecorded"') == 12 and "<failure" not in junit

    rerecord = report.rerecord  # the command the report names, run as printed: only the missing calls are made
    assert rerecord is not None and f"--record {cassettes}" in rerecord
    calls = stub.calls
    assert main(shlex.split(rerecord)[1:]) == 0
    assert stub.calls == calls + 12
    assert main(["eval", suite["dataset"], "--config", suite["config"], "--out", str(tmp_path / "again"), "--replay", str(cassettes), "--baseline", str(base / "metrics.json")]) == 0


def test_one_changed_case_is_the_only_one_not_judged(suite: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cassettes = tmp_path / "cassettes"
    assert main(["eval", suite["dataset"], "--config", suite["config"], "--out", str(tmp_path / "a"), "--record", str(cassettes)]) == 0
    dataset = Path(suite["dataset"])
    dataset.write_text(dataset.read_text().replace("npm test", "npm run lint"))
    capsys.readouterr()
    code = main(["eval", str(dataset), "--config", suite["config"], "--out", str(tmp_path / "b"), "--replay", str(cassettes), "--fail-under", "accuracy=0"])
    assert code == 3
    err = capsys.readouterr().err
    assert "re-record (1 case of rule no-risky-shell has no recording)" in err
    report = MetricsReport.model_validate_json((tmp_path / "b" / "metrics.json").read_text())
    assert report.unrecorded[0].cases == [f"shell/benign-{BENIGN.index('npm test')}"] and report.variants[0].cases == 11


def test_replay_without_a_cassette_exits_1(suite: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", suite["dataset"], "--config", suite["config"], "--out", str(tmp_path / "o"), "--replay", str(tmp_path / "none")]) == 1
    assert "no cassette shell.yaml" in capsys.readouterr().err


def test_replay_blocks_every_outgoing_connection(tmp_path: Path, stub: StubServer) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "d.yaml").write_text("interactions: []\nversion: 1\n")
    with recording("replay", str(tmp_path / "c"), ["d"]), socket.socket() as sock, pytest.raises(ConnectionRefusedError):
        sock.connect(("127.0.0.1", stub.port))
    with socket.create_connection(("127.0.0.1", stub.port)):  # restored afterwards
        pass
