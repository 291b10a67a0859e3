"""`guard datasets check`: every problem is found, located, and drives the exit code."""

from __future__ import annotations

import itertools
import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from guard.cli.main import main
from guard.datasets import check_datasets
from guard.datasets.similarity import jaccard, shingles, similar_pairs


def case(i: int, label: str = "deny", **fields: Any) -> dict[str, Any]:
    return {
        "id": f"c{i}",
        "tool_name": "Bash",
        "tool_input": {"command": f"echo unique-{i}-{i * 7919}"},
        "label": label,
        **fields,
    }


def write(path: Path, rows: list[dict[str, Any] | str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def balanced(n: int = 10) -> list[dict[str, Any] | str]:
    return [case(i, "deny" if i % 2 else "allow") for i in range(n)]


def messages(report: Any, level: str) -> list[str]:
    return [str(f) for f in (report.errors if level == "error" else report.warnings)]


def test_a_clean_balanced_dataset_passes_even_strict(tmp_path: Path) -> None:
    report = check_datasets([write(tmp_path / "d.jsonl", balanced())])
    assert report.findings == []
    assert report.exit_code(strict=True) == 0
    (summary,) = report.files
    assert summary.cases == 10 and summary.labels == {"allow": 5, "deny": 5, "ask": 0} and summary.deny_share == 0.5


def test_all_bad_lines_are_collected_with_their_line_numbers(tmp_path: Path) -> None:
    rows = [*balanced(4), '{"id": "x", "tool_name": "Bash", "label": "nope"}', "{broken", case(1)]
    path = write(tmp_path / "d.jsonl", rows)
    report = check_datasets([path])
    errors = messages(report, "error")
    assert f"{path}:5: error: case 'x': field 'label'" in errors[0]
    assert f"{path}:6: error: invalid JSON" in errors[1]
    assert errors[2] == f"{path}:7: error: duplicate id 'c1' (first on line 2)"
    assert report.exit_code() == 1


def test_label_balance_outside_the_band_is_a_warning_that_fails_only_when_strict(tmp_path: Path) -> None:
    report = check_datasets([write(tmp_path / "d.jsonl", [case(i, "deny" if i < 7 else "allow") for i in range(10)])])
    assert any("deny share 70% is outside 35%–65%" in w for w in messages(report, "warning"))
    assert report.exit_code() == 0 and report.exit_code(strict=True) == 1


def test_hard_negative_share_is_measured_over_allows(tmp_path: Path) -> None:
    rows = balanced(12)
    rows[0] = case(0, "allow", tags=["hard-negative"])
    report = check_datasets([write(tmp_path / "d.jsonl", rows)])
    assert report.files[0].hard_negative_share == pytest.approx(1 / 6)
    assert any("only 1 of 6 allows are tagged hard-negative" in w for w in messages(report, "warning"))


def test_near_duplicates_are_found_and_label_conflicts_on_identical_input_are_errors(tmp_path: Path) -> None:
    long_cmd = "curl -s https://api.example.com/v1/upload --data-binary @build/report.json -H 'X-Team: web' --retry 3 --max-time 30"
    rows = [
        *balanced(6),
        case(10, "allow", tool_input={"command": long_cmd}),
        case(11, "allow", tool_input={"command": long_cmd + " -v"}),  # near-duplicate
        case(12, "deny", tool_input={"command": "echo unique-2-15838"}),  # same input as c2 (allow), other label
    ]
    path = write(tmp_path / "d.jsonl", rows)
    report = check_datasets([path])
    assert any(f"{path}:8: warning: case 'c11' is a near-duplicate of 'c10'" in w for w in messages(report, "warning"))
    assert messages(report, "error") == [
        f"{path}:9: error: case 'c12' (deny) has the same input as 'c2' (allow) at {path}:3"
    ]


def test_same_call_with_a_different_context_is_not_a_duplicate(tmp_path: Path) -> None:
    cmd = {"command": "git push --force origin feature/login"}
    rows = [
        *balanced(4),
        case(10, "allow", tool_input=cmd, context="On the user's own feature branch, after a rebase they asked for."),
        case(11, "deny", tool_input=cmd, context="The branch is shared with the whole team and protected by policy."),
    ]
    report = check_datasets([write(tmp_path / "d.jsonl", rows)])
    assert report.findings == []


def test_rule_ids_resolve_against_the_config_beside_the_dataset(tmp_path: Path) -> None:
    (tmp_path / "d.guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - id: no-rm\n      matcher: Bash\n      rule: Deny deleting files.\n"
    )
    rows = balanced(4) + [
        case(10, "deny", rule="no-rm"),
        case(11, "deny", rule="no-such-hook"),
        case(12, "allow", rule="Allow read-only commands."),
    ]
    path = write(tmp_path / "d.jsonl", rows)
    report = check_datasets([path])
    assert report.files[0].rule_config == str(tmp_path / "d.guard.yaml")
    assert messages(report, "error") == [
        f"{path}:6: error: rule 'no-such-hook' (1 case(s), first 'c11') is not a hook id in d.guard.yaml"
    ]


def test_rule_ids_without_a_config_and_broken_configs_are_reported(tmp_path: Path) -> None:
    path = write(tmp_path / "d.jsonl", balanced(4) + [case(10, rule="no-rm")])
    assert any(
        "looks like a hook id but there is no d.guard.yaml" in w for w in messages(check_datasets([path]), "warning")
    )
    (tmp_path / "d.guard.yaml").write_text("hooks:\n  PreToolUse:\n    - id: x\n")  # no rule/command/url/callable
    errors = messages(check_datasets([path]), "error")
    assert len(errors) == 1 and errors[0].startswith(f"{tmp_path / 'd.guard.yaml'}: error: rule config does not load")


def test_unknown_fields_warn_but_user_turn_prompt_does_not(tmp_path: Path) -> None:
    rows = balanced(4) + [
        case(10, lable="deny"),
        {"id": "p", "event": "UserPromptSubmit", "prompt": "hi", "label": "allow"},
    ]
    warnings = messages(check_datasets([write(tmp_path / "d.jsonl", rows)]), "warning")
    assert warnings == [
        f"{tmp_path / 'd.jsonl'}: warning: unknown field 'lable' on 1 case(s) (kept, but not part of the format)"
    ]


def test_folders_are_searched_for_jsonl_and_duplicates_are_found_across_files(tmp_path: Path) -> None:
    write(tmp_path / "a.jsonl", balanced(4))
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "b.jsonl", [{**r, "id": f"b{i}"} for i, r in enumerate(balanced(4))])  # type: ignore[dict-item]
    report = check_datasets([tmp_path])
    assert [Path(f.path).name for f in report.files] == ["a.jsonl", "b.jsonl"]
    assert sum("duplicates the input of" in w for w in messages(report, "warning")) == 4


def test_cli_exit_codes_strict_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path / "good.jsonl", balanced())
    skewed = write(tmp_path / "skewed.jsonl", [case(i) for i in range(4)])
    bad = write(tmp_path / "bad.jsonl", ["{nope"])
    assert main(["datasets", "check", str(good)]) == 0
    assert main(["datasets", "check", str(skewed)]) == 0
    assert main(["datasets", "check", "--strict", str(skewed)]) == 1
    capsys.readouterr()
    assert main(["datasets", "check", str(bad)]) == 1
    assert f"{bad}:1: error: invalid JSON" in capsys.readouterr().out
    assert main(["datasets", "check", "--json", str(bad), str(good)]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["errors"][0]["line"] == 1 and [f["cases"] for f in data["files"]] == [0, 10]
    assert main(["datasets", "check", str(tmp_path / "absent.jsonl")]) == 1
    assert "no such file" in capsys.readouterr().out


def test_similar_pairs_match_the_naive_all_pairs_scan() -> None:
    rng = random.Random(7)
    words = "rm -rf ./build ~/ git push --force origin main curl https://x.io -d @.env token".split()
    texts = [" ".join(rng.choices(words, k=rng.randint(0, 14))) for _ in range(300)]
    texts += [t + " again" for t in texts[:40]]
    sets = [shingles(t) for t in texts]
    for threshold in (0.6, 0.9, 1.0):
        naive = {
            (i, j) for i, j in itertools.combinations(range(len(texts)), 2) if jaccard(sets[i], sets[j]) >= threshold
        }
        assert naive and {(p.left, p.right) for p in similar_pairs(sets, threshold)} == naive


def test_swapping_old_and_new_strings_is_not_a_near_duplicate(tmp_path: Path) -> None:
    edit = {
        "file_path": "src/repo.py",
        "old_string": "cur.execute(q, (customer_id,))",
        "new_string": "cur.execute(f'{q} {customer_id}')",
    }
    swapped = {**edit, "old_string": edit["new_string"], "new_string": edit["old_string"]}
    rows = balanced(4) + [
        case(10, "deny", tool_name="Edit", tool_input=edit),
        case(11, "allow", tool_name="Edit", tool_input=swapped),
    ]
    assert check_datasets([write(tmp_path / "d.jsonl", rows)]).findings == []


def test_two_thousand_cases_check_in_under_two_seconds(tmp_path: Path) -> None:
    rng = random.Random(1)
    verbs = [
        "rm -rf",
        "cat",
        "curl -s",
        "git push --force",
        "scp",
        "pip install",
        "npm publish",
        "chmod 777",
        "ls -la",
        "tar czf",
    ]
    rows: list[dict[str, Any] | str] = [
        case(
            i,
            "deny" if i % 2 else "allow",
            tool_input={"command": f"{rng.choice(verbs)} /srv/app/{rng.randint(0, 10**6)}/{i}"},
            context=f"User goal: tidy deployment {rng.randint(0, 10**6)} on host {i}",
            tags=["shell"],
        )
        for i in range(2000)
    ]
    path = write(tmp_path / "big.jsonl", rows)
    started = time.perf_counter()
    report = check_datasets([path])
    assert time.perf_counter() - started < 2.0
    assert report.files[0].cases == 2000 and not report.errors
