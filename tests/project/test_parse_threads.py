"""The suite parses Python in several threads at once without CPython 3.11's AST race (python/cpython#106905).

pytest's assertion rewriter parses a lazily imported module on the test's thread while a stub server's thread
formats a traceback, which 3.11 does with ``ast.parse``; CI once failed so. tests/conftest.py serializes
``ast.parse``; this drives the same collision harder than the suite does (a thread parsing in a loop, finalizers
that hand the GIL over mid-conversion) and fails on an unguarded 3.11.7.
"""

from __future__ import annotations

import ast
import threading


class _SlowToCollect:
    """A cycle whose finalizer runs Python code, so the collector, run mid-conversion, lets another thread in."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        sum(range(2_000))


def test_parsing_on_two_threads_at_once_never_fails() -> None:
    source = "\n".join(f"x{i} = [call(a, b)[i] for i in range({i})]" for i in range(400))
    errors: list[SystemError] = []
    done = threading.Event()

    def parse_in_a_loop() -> None:
        while not done.is_set():
            try:
                ast.parse("x = [1]\n" * 50)
            except SystemError as error:
                errors.append(error)

    other = threading.Thread(target=parse_in_a_loop, daemon=True)
    other.start()
    try:
        for _ in range(200):
            for _ in range(50):
                _SlowToCollect()
            try:
                ast.parse(source)
            except SystemError as error:
                errors.append(error)
    finally:
        done.set()
        other.join(timeout=10)
    assert errors == []
