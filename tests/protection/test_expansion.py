"""The word expander against bash itself: each word typed, expanded by guard and by ``bash -c 'printf "%s\\0" WORD'``.

The prover proves the words a program receives (``sort {-o,/tmp/x}`` is ``sort -o /tmp/x``), so the
expander must make exactly bash's words, or say it cannot: every case below runs through the real bash
of this machine, in an empty folder, with a known ``HOME``.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from guard.command_analysis.expansion import MAX_FIELDS, Field, NotModelled, expand_word

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not installed (apt-get install bash)")
HOME = "/home/someone"

#: Words bash expands, each compared with bash's own words.
CASES = [
    "plain",
    "'single quoted'",
    '"double quoted"',
    "esc\\ aped",
    "a'b'\"c\"d",
    "$'tab\\tnew\\nline'",
    "$'it\\'s'",
    "{a,b}",
    "x{a,b}y",
    "{a,b}{c,d}",
    "{a,{b,c}}",
    "{{a,b},c}",
    "{-o,/tmp/x}",
    "{--output=,}out",
    "{.,-delete}",
    "--{a,b}",
    "{1..5}",
    "{5..1}",
    "{1..10..3}",
    "{10..1..3}",
    "{01..10}",
    "{-05..3}",
    "{1..9..0}",
    "{a..e}",
    "{e..a}",
    "{a..z..5}",
    "{A..E}",
    "{a}",
    "{}",
    "{,}",
    "x{,}",
    "{,,}",
    "{'a,b'}",
    '{"a,b"}',
    '{a,"b}"}',
    "\\{a,b}",
    "{a\\,b,c}",
    "'{a,b}'",
    "{a..}",
    "{1..a}",
    "{1..2..}",
    "{a..e..}",
    "{a}{b,c}",
    "{a{b,c}}",
    "{a,b}}",
    "{{a,b}",
    "a{b}c{d,e}",
    "{a,b}.{c,d}",
    "{,a}",
    "{a,}",
    "a{1..3}b{x,y}",
    "{1..3}{a..b}",
    "}{a,b}{",
    "{a..c}{,}",
    "{{1..2},{a..b}}",
    "~",
    "~/x",
    "~/x/{a,b}",
    "{~,~/y}",
    "a~",
    "'~'",
    '"~"',
    "~'/x'",
    "~\\/x",
    "x:~",
    "-~",
    "--path=~/x",
    "a*",
    "'a*'",
    "a\\*",
    "*.py",
    "x?",
    "[ab]c",
    "a[",
    "--include=*.py",
    "'*'.py",
    "$",
    "a$",
    '"$"',
    "'$HOME'",
    "$.",
    "$/x",
    "100$",
    '"cost: $"',
    "a\\$b",
    "",
    "''",
    '""',
    "a\\",
    "\\\\",
    "\\\n",
]
#: Words whose value is not known when the call is judged, or that bash reads otherwise than modelled here: refused.
REFUSED = [
    "$HOME",
    "${HOME}",
    '"$HOME"',
    "$(id)",
    "`id`",
    '"$(id)"',
    "$((1+1))",
    "$[1+1]",
    "${x:-y}",
    "$1",
    "$@",
    "$?",
    "$$",
    "$!",
    '$"translated"',
    "<(id)",
    ">(id)",
    "$'\\x2f'",
    "$'\\101'",
    "$'\\u00e9'",
    "$'\\cA'",
    "~root",
    "~+",
    "~-",
    "~1",
    "x=~",
    "PATH=a:~/b",
    "{1..999999}",
    "{a..A}",
    "{Z..a}",
    "$'{a,b}'{c,d}",
    "'unterminated",
    '"unterminated',
]


def bash_words(word: str, cwd: Path) -> list[str]:
    proc = subprocess.run(
        [str(BASH), "-c", f"printf '%s\\0' - {word}"],
        capture_output=True,
        cwd=cwd,
        env={"HOME": HOME, "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert proc.returncode == 0, (word, proc.stderr)
    return [part.decode() for part in proc.stdout.split(b"\0")[1:-1]]  # after the "-" that keeps printf's format in use


@pytest.mark.parametrize("word", CASES)
def test_the_expander_makes_bash_s_words(word: str, tmp_path: Path) -> None:
    assert [field.text for field in expand_word(word, {"HOME": HOME})] == bash_words(word, tmp_path)


@pytest.mark.parametrize("word", REFUSED)
def test_what_is_not_known_at_proof_time_is_refused(word: str) -> None:
    with pytest.raises(NotModelled):
        expand_word(word, {"HOME": HOME})


def test_a_glob_is_a_pattern_with_the_literal_text_every_match_starts_with() -> None:
    assert expand_word("src/*.py", {}) == (Field("src/*.py", True, "src/"),)
    assert expand_word("--include=*.py", {}) == (Field("--include=*.py", True, "--include="),)
    assert expand_word("'*'.py", {}) == (Field("*.py"),)  # quoted: no pathname expansion
    assert expand_word("~/x*", {"HOME": HOME}) == (Field(f"{HOME}/x*", True, f"{HOME}/x"),)
    assert expand_word("{a,-b}*", {}) == (Field("a*", True, "a"), Field("-b*", True, "-b"))


def test_a_tilde_needs_a_home() -> None:
    with pytest.raises(NotModelled):
        expand_word("~/x", {})


def test_brace_expansion_is_bounded() -> None:
    assert len(expand_word("{1..1024}", {})) == MAX_FIELDS
    with pytest.raises(NotModelled):
        expand_word("{1..1025}", {})
    with pytest.raises(NotModelled):
        expand_word("{1..32}{1..32}{1..2}", {})


def test_random_words_expand_as_bash_expands_them(tmp_path: Path) -> None:
    """A few thousand words built from the characters brace expansion, quoting and tilde turn on, each the same in bash."""
    rnd = random.Random(35)
    pieces = list("{},.a1-0~/\\'\"x=:") + ["..", "{a,b}", "{1..3}", "'{'", '"}"', "\\{", "\\,", "$", "a$"]
    words = sorted({"".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 8))) for _ in range(3000)})
    (tmp_path / "words").write_text("\n".join(words) + "\n")
    loop = "while IFS= read -r w; do ( eval \"printf '%s\\\\0' $w\" ) 2>/dev/null || printf '\\2\\0'; printf '\\1\\0'; done < words"
    out = subprocess.run(
        [str(BASH), "-c", loop],
        capture_output=True,
        cwd=tmp_path,
        env={"HOME": HOME, "PATH": "/usr/bin:/bin"},
        check=True,
    ).stdout
    compared = 0
    for word, group in zip(words, out.split(b"\1\0"), strict=False):
        expected = [part.decode() for part in group.split(b"\0")[:-1]]
        if expected[-1:] == ["\2"]:
            continue  # bash refused the word (an unterminated quote)
        try:
            fields = expand_word(word, {"HOME": HOME})
        except NotModelled:
            continue
        assert [f.text for f in fields] == expected, word
        compared += 1
    assert compared > 1200
