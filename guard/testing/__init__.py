"""Test doubles shipped with guard, so tests, benchmarks and eval suites run offline.

``guard.testing.openai_stub`` is a loopback OpenAI-compatible server with scripted
replies. Nothing here is imported by the library itself.
"""
