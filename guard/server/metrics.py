"""Prometheus metrics of the service, in the text exposition format, written by hand.

The figures an operator watches: requests by route and status, decisions by
verdict, decision-cache hits and misses (and their ratio), model latency, and
requests in flight. Everything is derived from the canonical decision, so hook
kinds need no metrics code. No prometheus_client: a few dicts do.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable

from guard.core.decision import Decision
from guard.core.kinds import judged

__all__ = ["LATENCY_BUCKETS", "Histogram", "Metrics"]

#: Seconds; from a cache hit inside the service to a slow thorough judgement.
LATENCY_BUCKETS: tuple[float, ...] = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def _labels(pairs: Iterable[tuple[str, str]]) -> str:
    body = ",".join(f'{k}="{_escape(v)}"' for k, v in pairs)
    return f"{{{body}}}" if body else ""


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _sample(name: str, labels: tuple[tuple[str, str], ...], value: float) -> str:
    return f"{name}{_labels(labels)} {_number(value)}"


def _number(value: float) -> str:
    return repr(float(value)) if value != int(value) else str(int(value))


class Histogram:
    """Cumulative-bucket histogram of seconds."""

    def __init__(self, buckets: tuple[float, ...] = LATENCY_BUCKETS) -> None:
        self.buckets = buckets
        self.counts = [0] * len(buckets)
        self.sum = 0.0
        self.count = 0

    def observe(self, seconds: float) -> None:
        self.sum += seconds
        self.count += 1
        for i, bound in enumerate(self.buckets):
            if seconds <= bound:
                self.counts[i] += 1

    def lines(self, name: str, labels: tuple[tuple[str, str], ...] = ()) -> list[str]:
        bounds = [*(_number(b) for b in self.buckets), "+Inf"]
        return [
            *(_sample(f"{name}_bucket", (*labels, ("le", le)), n) for le, n in zip(bounds, [*self.counts, self.count])),
            _sample(f"{name}_sum", labels, round(self.sum, 6)),
            _sample(f"{name}_count", labels, self.count),
        ]


class Metrics:
    """The service's counters; one instance per process, updated from the event loop."""

    def __init__(self) -> None:
        self.requests: Counter[tuple[str, str, int]] = Counter()  # (method, route, status)
        self.request_latency: dict[str, Histogram] = {}
        self.decisions: Counter[str] = Counter()
        self.hook_errors: Counter[str] = Counter()
        self.cache_hits = 0
        self.cache_misses = 0
        self.model_latency = Histogram()
        self.in_flight = 0
        self.last_request = time.monotonic()  # for --idle-timeout

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        self.last_request = time.monotonic()
        self.requests[(method, route, status)] += 1
        self.request_latency.setdefault(route, Histogram()).observe(seconds)

    def observe_decision(self, decision: Decision) -> None:
        """Count the verdict, and each judged hook's cache hit or model call (with its latency)."""
        self.decisions[decision.decision] += 1
        for hook in decision.hooks:
            if hook.error is not None:
                self.hook_errors[hook.type] += 1
            elif judged(hook.type) and hook.cached:
                self.cache_hits += 1
            elif judged(hook.type):
                self.cache_misses += 1
                if hook.latency_ms is not None:
                    self.model_latency.observe(hook.latency_ms / 1000)

    def render(self) -> str:
        """The Prometheus text exposition (format 0.0.4)."""
        looked_up = self.cache_hits + self.cache_misses
        ratio = round(self.cache_hits / looked_up, 6) if looked_up else 0.0
        families = [
            (
                "guard_http_requests_total",
                "counter",
                "HTTP requests by method, route and status.",
                [
                    _sample("guard_http_requests_total", (("method", m), ("route", r), ("status", str(st))), n)
                    for (m, r, st), n in sorted(self.requests.items())
                ],
            ),
            (
                "guard_http_request_duration_seconds",
                "histogram",
                "HTTP request latency by route.",
                [
                    line
                    for route, h in sorted(self.request_latency.items())
                    for line in h.lines("guard_http_request_duration_seconds", (("route", route),))
                ],
            ),
            (
                "guard_http_requests_in_flight",
                "gauge",
                "Requests being handled now.",
                [_sample("guard_http_requests_in_flight", (), self.in_flight)],
            ),
            (
                "guard_decisions_total",
                "counter",
                "Decisions by final verdict.",
                [
                    _sample("guard_decisions_total", (("decision", d),), self.decisions[d])
                    for d in ("allow", "ask", "deny")
                ],
            ),
            (
                "guard_hook_errors_total",
                "counter",
                "Hook runs that failed (timeouts, crashes, model errors) by hook type.",
                [_sample("guard_hook_errors_total", (("type", t),), n) for t, n in sorted(self.hook_errors.items())],
            ),
            (
                "guard_cache_hits_total",
                "counter",
                "Smart-hook verdicts served from the decision cache.",
                [_sample("guard_cache_hits_total", (), self.cache_hits)],
            ),
            (
                "guard_cache_misses_total",
                "counter",
                "Smart-hook verdicts that were not in the decision cache.",
                [_sample("guard_cache_misses_total", (), self.cache_misses)],
            ),
            (
                "guard_cache_hit_ratio",
                "gauge",
                "Cache hits / (hits + misses) since start.",
                [_sample("guard_cache_hit_ratio", (), ratio)],
            ),
            (
                "guard_model_latency_seconds",
                "histogram",
                "Latency of smart hooks that were not cache hits.",
                self.model_latency.lines("guard_model_latency_seconds"),
            ),
        ]
        lines: list[str] = []
        for name, kind, help_text, samples in families:
            lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", *samples]
        return "\n".join(lines) + "\n"
