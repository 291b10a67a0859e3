"""The differential check: prove each line, run what is proven, and report what the proof did not foresee.

A line is proven to only read (``read``), or else to write only its redirection
targets (``write``); a proven line runs in a sandbox, and :mod:`.oracle` reads its
trace. Reading guard's secret counts only when self-protection lets the line run, and
printing the environment only when the read-only lane allows it without a model
(:mod:`.claims`). An escape is then shrunk (:mod:`.minimise`) to the fewest words that
still escape the same way.
"""

from __future__ import annotations

import datetime
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from .claims import Claims, Verdict
from .classes import classify
from .corpus import Entry
from .generator import Line
from .minimise import ddmin
from .oracle import DELETES, ENVIRONMENT, NETWORK, RUNS, SECRET, WRITES, Finding, findings
from .sandbox import Pool, Run
from .world import World

__all__ = ["Escape", "Report", "Verifier"]

#: Effects from the gravest: a minimised line must keep the gravest effect its original had.
_GRAVITY = (RUNS, NETWORK, DELETES, WRITES, SECRET, ENVIRONMENT)


@dataclass(frozen=True)
class Escape:
    """A proven line that did what its proof rules out."""

    line: str
    kind: str
    mode: str
    reason: str
    findings: tuple[Finding, ...]
    #: Whether guard would let it run without a model: the lane of its mode allows it; self-protection allows it.
    lane: bool = False
    protect: bool = False

    @property
    def effects(self) -> list[str]:
        return sorted({f.effect for f in self.findings}, key=_GRAVITY.index)

    def entry(self, against: str, world: World) -> Entry:
        """The corpus line for this escape, its evidence with the world's folder written ``<world>``."""
        evidence = list(
            dict.fromkeys(f"{f.effect}: {f.evidence}".replace(str(world.root), "<world>") for f in self.findings)
        )[:6]
        return Entry(
            self.line,
            self.mode,
            classify(self.line, self.effects),
            self.effects,
            evidence,
            datetime.date.today().isoformat(),
            against,
            self.lane,
            self.protect,
        )


@dataclass
class Report:
    """What a run of the verifier tried and found."""

    tried: int = 0
    proven: int = 0
    proven_writes: int = 0
    timed_out: int = 0
    seconds: float = 0.0
    escapes: list[Escape] = field(default_factory=list)
    tried_by_kind: Counter[str] = field(default_factory=Counter)
    proven_by_kind: Counter[str] = field(default_factory=Counter)

    def add(self, other: Report) -> None:
        """Count ``other`` (a later round of the same run) in this report."""
        self.tried += other.tried
        self.proven += other.proven
        self.proven_writes += other.proven_writes
        self.timed_out += other.timed_out
        self.seconds += other.seconds
        self.escapes += other.escapes
        self.tried_by_kind.update(other.tried_by_kind)
        self.proven_by_kind.update(other.proven_by_kind)

    def summary(self) -> str:
        effects = Counter(e for escape in self.escapes for e in escape.effects)
        lane, protect = sum(e.lane for e in self.escapes), sum(e.protect for e in self.escapes)
        return (
            f"{self.tried} lines tried, {self.proven} proven to only read and {self.proven_writes} to write only their targets, "
            f"{self.timed_out} stopped at the time limit, {len(self.escapes)} escapes ({dict(effects)}; {lane} allowed by the lane "
            f"without a model, {protect} let through by self-protection), {self.seconds:.1f} s"
        )


class Verifier:
    """Proves with ``claims``, runs in ``pool``, judges with the oracle in ``world``; ``allowed``: the allowlisted binaries."""

    def __init__(self, claims: Claims, pool: Pool, world: World, allowed: frozenset[tuple[int, int]]) -> None:
        self.claims, self.pool, self.world, self.allowed = claims, pool, world, allowed

    def proof(self, line: str) -> tuple[str, Verdict] | None:
        """The claim to check: ``read`` when proven to only read, else ``write`` when proven to write only its targets."""
        verdict = self.claims.proof(line, writes=False)
        if verdict.proven:
            return "read", verdict
        verdict = self.claims.proof(line, writes=True)
        return ("write", verdict) if verdict.proven else None

    def judge(self, run: Run, kind: str, mode: str, verdict: Verdict) -> Escape | None:
        writing = mode == "write"
        found = findings(
            run, self.world, self.allowed, verdict.written if writing else None, verdict.made if writing else ()
        )
        if any(f.effect == SECRET for f in found) and not self.claims.protect_allows(run.line):
            found = [f for f in found if f.effect != SECRET]
        if any(f.effect == ENVIRONMENT for f in found) and not self.claims.lane_allows(run.line):
            found = [f for f in found if f.effect != ENVIRONMENT]
        if not found:
            return None
        lane = self.claims.lane_allows(run.line, writes=mode == "write")
        return Escape(run.line, kind, mode, verdict.reason, tuple(found), lane, self.claims.protect_allows(run.line))

    def check(self, line: str, kind: str = "replay") -> Escape | None:
        """Prove ``line`` and, when proven, run and judge it: its escape, or None."""
        claim = self.proof(line)
        if claim is None:
            return None
        return self.judge(self.pool.run(line), kind, *claim)

    def run(self, lines: Iterable[Line]) -> Report:
        """Every line of ``lines``: proven ones run across the pool."""
        report = Report()
        started = time.monotonic()
        pending: dict[str, tuple[str, str, Verdict]] = {}

        def proven() -> Iterator[str]:
            for line in lines:
                report.tried += 1
                report.tried_by_kind[line.kind] += 1
                claim = self.proof(line.text)
                if claim is None:
                    continue
                report.proven_by_kind[line.kind] += 1
                if claim[0] == "read":
                    report.proven += 1
                else:
                    report.proven_writes += 1
                pending[line.text] = (line.kind, *claim)
                yield line.text

        for run in self.pool.run_all(proven()):
            kind, mode, verdict = pending.pop(run.line)
            report.timed_out += run.timed_out
            escape = self.judge(run, kind, mode, verdict)
            if escape:
                report.escapes.append(escape)
        report.seconds = time.monotonic() - started
        return report

    def minimise(self, escape: Escape, budget: int = 150) -> Escape:
        """``escape`` in its smallest form that is still proven and still has its gravest effect."""
        gravest = escape.effects[0]

        def still(candidate: str) -> bool:
            found = self.check(candidate, escape.kind)
            return found is not None and gravest in found.effects

        smallest = ddmin(escape.line, still, budget)
        return (self.check(smallest, escape.kind) or escape) if smallest != escape.line else escape
