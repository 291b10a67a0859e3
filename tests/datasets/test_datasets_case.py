"""The dataset case format: what loads, and how a bad line is reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guard.core.errors import DatasetError
from guard.datasets import Case, iter_cases, load_cases, write_cases

GOOD = {
    "id": "shell-1",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf ~/"},
    "label": "deny",
    "tags": ["shell"],
}


def write_lines(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_loads_a_case_with_contract_defaults(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "d.jsonl", json.dumps(GOOD), json.dumps({**GOOD, "id": "shell-2", "event": "BeforeTool"})
    )
    first, second = load_cases(path)
    assert first.event == "PreToolUse" and first.canonical_event == "pre_tool_use"
    assert second.canonical_event == "pre_tool_use"  # any alias is accepted
    assert first.tool_input == {"command": "rm -rf ~/"} and first.tags == ["shell"]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"id": "a", "tool_name": "Bash", "label": "block"}', "field 'label'"),
        ('{"tool_name": "Bash", "label": "deny"}', "field 'id'"),
        ('{"id": 7, "tool_name": "Bash", "label": "deny"}', "field 'id'"),
        ('{"id": "a", "tool_name": "Bash", "tool_input": "ls", "label": "deny"}', "field 'tool_input'"),
        ('{"id": "a", "tool_name": "Bash", "label": "deny", "event": "not an event!"}', "field 'event'"),
        ('{"id": "a", "label": "deny"}', "tool_name is required"),
        ('{"id": "a", "tool_name": "Bash", "label": "deny"', "invalid JSON"),
        ('["a", "deny"]', "expected a JSON object"),
        ("# a comment", "comment line"),
        ("// a comment", "comment line"),
    ],
)
def test_a_bad_line_names_file_line_and_field(tmp_path: Path, line: str, expected: str) -> None:
    path = write_lines(tmp_path / "bad.jsonl", json.dumps(GOOD), line)
    with pytest.raises(DatasetError) as caught:
        load_cases(path)
    assert str(caught.value).startswith(f"{path}:2: ")
    assert expected in str(caught.value)
    assert caught.value.line == 2


def test_duplicate_id_is_an_error_naming_both_lines(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "d.jsonl", json.dumps(GOOD), json.dumps({**GOOD, "tool_input": {}}), json.dumps(GOOD))
    with pytest.raises(DatasetError, match=r"d\.jsonl:2: duplicate id 'shell-1' \(first on line 1\)"):
        load_cases(path)


def test_blank_line_between_cases_is_an_error_but_trailing_blank_lines_are_not(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "d.jsonl", json.dumps(GOOD), "", json.dumps({**GOOD, "id": "x"}))
    with pytest.raises(DatasetError, match=r":2: blank line"):
        load_cases(path)
    trailing = write_lines(tmp_path / "t.jsonl", json.dumps(GOOD), "", "  ")
    assert [c.id for c in load_cases(trailing)] == ["shell-1"]


def test_user_turn_cases_need_no_tool_and_unknown_fields_are_kept(tmp_path: Path) -> None:
    line = {"id": "p1", "event": "UserPromptSubmit", "prompt": "print the .env file", "label": "ask", "owner": "sec"}
    (case,) = load_cases(write_lines(tmp_path / "d.jsonl", json.dumps(line)))
    assert case.canonical_event == "user_turn" and case.tool_name is None
    assert case.extra_fields == ("prompt", "owner")
    assert json.loads(case.to_json())["owner"] == "sec"


def test_missing_file_and_binary_file_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such file"):
        load_cases(tmp_path / "absent.jsonl")
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(DatasetError, match="not UTF-8"):
        load_cases(binary)


def test_iter_cases_streams_until_the_first_bad_line(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "d.jsonl", json.dumps(GOOD), "{oops")
    cases = iter_cases(path)
    assert next(cases).id == "shell-1"
    with pytest.raises(DatasetError, match=":2: invalid JSON"):
        next(cases)


def test_written_cases_load_back_identical(tmp_path: Path) -> None:
    cases = [
        Case.model_validate(GOOD),
        Case.model_validate({**GOOD, "id": "é-2", "context": "the user asked: « nettoie »"}),
    ]
    path = tmp_path / "round.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        assert write_cases(cases, handle) == 2
    assert load_cases(path) == cases
    assert "null" not in path.read_text(encoding="utf-8")  # unset optional fields are left out
