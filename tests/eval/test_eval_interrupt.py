"""Ctrl-C during ``guard eval``: it exited 130 without a word, though the rows it kept would be reused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fixtures.eval import by_model, write_dataset, write_suite_config
from fixtures.processes import SOURCE_ROOT, run_guard

from guard.testing.openai_stub import StubServer

pytestmark = pytest.mark.stub(responder=by_model)


def rows(out: Path) -> int:
    results = out / "results.jsonl"
    return len(results.read_text().splitlines()) if results.exists() else 0


@pytest.mark.slow
def test_ctrl_c_says_how_many_rows_are_kept_and_that_a_rerun_resumes(tmp_path: Path, stub: StubServer) -> None:  # noqa: F811
    stub.latency = 0.4  # slow enough to interrupt mid-run
    dataset, config, out = (
        write_dataset(tmp_path / "shell.jsonl"),
        write_suite_config(tmp_path / "guard.yaml", stub.url),
        tmp_path / "out",
    )
    args = ["eval", str(dataset), "--config", str(config), "--out", str(out), "--no-progress", "--concurrency", "1"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "guard.cli.main", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
    )  # this checkout, as run_guard runs it (a signal needs the process)
    deadline = time.monotonic() + 120
    while rows(out) < 2:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    kept = rows(out)
    assert (
        f"interrupted; {kept} judged row(s) are kept in {out}/results.jsonl" in err
        and "run the same command again" in err
    ), err
    assert "Traceback" not in err
    again = run_guard(args, tmp_path, timeout=300)
    assert again.returncode == 0 and f"reused {kept} from" in again.stdout, again.stdout + again.stderr
