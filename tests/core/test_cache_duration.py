"""``cache.ttl`` (and any other duration in guard.yaml) as people write it."""

from __future__ import annotations

import pytest

from guard.core.duration import format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("7d", 604800),
        ("12h", 43200),
        ("30m", 1800),
        ("45s", 45),
        ("45", 45),
        (90, 90),
        (1.5, 1.5),
        ("1h30m", 5400),
        ("1.5h", 5400),
        (" 2W ", 1209600),
        ("1h 30m", 5400),
    ],
)
def test_durations_in_seconds(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "abc", "7x", "1h30", "-5", "5m5", "h", None, True, [1]])
def test_malformed_durations_say_what_is_expected(text: object) -> None:
    with pytest.raises(ValueError, match="30m, 12h or 7d"):
        parse_duration(text)


@pytest.mark.parametrize("text", [0, "0s", 0.0])
def test_zero_is_refused(text: object) -> None:
    with pytest.raises(ValueError, match="positive"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"), [(604800, "1w"), (86400 * 3, "3d"), (43200, "12h"), (1800, "30m"), (90, "90s"), (1.5, "1.5s")]
)
def test_durations_print_as_they_are_written(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
    assert parse_duration(text) == seconds
