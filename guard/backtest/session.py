"""One backtest end to end: read the audit log, replay, compare, write ``guard eval``'s files, gate.

Each replayed event becomes a ``results.jsonl`` row whose label is the reference
decision (the recorded one, or the OLD config's) and whose verdict is the new
config's, so the eval writers report agreement, the flip matrix (as the confusion
matrix) and every flipped event (as JUnit failures) without a second renderer.
A flip is a change of stop-or-let-through (ask counts as stop, as in the eval).
Each flip names the rule that stopped the call on the side that stopped it, and the
report shows that rule's text in both configs (a word diff). Exit codes as
``guard eval``: 0 fine, 100 more new denies than ``max_new_denies`` or new allows
than ``max_new_allows``, 1 the replay could not judge (a model unreachable, no config).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from guard.audit import AuditLog
from guard.audit.replayable import RecordedEvent, sample, split_replayable
from guard.backtest.replay import replay, replay_gate
from guard.config.loading import load_config
from guard.config.search import find_config
from guard.core.decision import STOPS, Decision
from guard.core.duration import parse_duration
from guard.core.errors import GuardError
from guard.core.kinds import judged, shown
from guard.core.spec import HookSpec
from guard.eval import stats
from guard.eval.cases import input_summary
from guard.eval.outputs import build_report, write_outputs
from guard.eval.runner import ResultsFile, Variant
from guard.eval.schema import BacktestSummary, DatasetInfo, Flip, MetricsReport, ResultRow, RuleChange
from guard.eval.session import warm_up
from guard.eval.verdicts import decision_fields
from guard.runtime.gate import Gate

__all__ = ["BacktestResult", "audit_path", "backtest"]

EXIT_OK, EXIT_ERROR, EXIT_GATE = 0, 1, 100


@dataclass
class BacktestResult:
    report: MetricsReport
    rows: list[ResultRow]
    out: Path
    exit_code: int
    problems: list[str] = field(default_factory=list)


def audit_path(log: str | None, config: str) -> Path:
    """``--log``, else the audit log of the live config (what ``guard log`` reads), else the new config's."""
    if log:
        return Path(log)
    live = find_config(None)
    settings = load_config(str(live) if live else config).settings
    if settings.audit_path is None:
        raise GuardError("the audit log is off (audit.enabled: false): name one with --log")
    return settings.path(settings.audit_path)


def _stops(decision: str) -> bool:
    return decision in STOPS


@dataclass
class _Comparison:
    """The replayed events so far: results rows (label = reference decision), flips, failures and cache use."""

    dataset: str
    model: str
    depth: str
    rows: list[ResultRow] = field(default_factory=list)
    flips: list[Flip] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # events the new config could not judge at all
    cache_hits: int = 0
    cached_events: int = 0
    errors: int = 0

    def add(
        self, event: RecordedEvent, reference: Decision, decision: Decision, reference_stoppers: Sequence[str]
    ) -> None:
        fields = decision_fields(decision)
        if fields["error_kind"] == "infrastructure":
            self.problems.append(f"audit row {event.audit_id}: {fields['error']}")
        self.errors += fields["error"] is not None
        self.cache_hits += sum(h.cached for h in decision.hooks)
        self.cached_events += _no_model_call(decision)
        self.rows.append(
            ResultRow(
                dataset=self.dataset,
                case_id=str(event.audit_id),
                model=self.model,
                depth=self.depth,
                label=reference.decision,
                latency_ms=decision.details.get("latency_ms"),
                tool_name=event.tool,
                tags=[event.event or "unknown"],
                **fields,  # type: ignore[arg-type]
            )
        )
        if _stops(reference.decision) != _stops(decision.decision):
            stoppers = _stoppers(decision) if _stops(decision.decision) else list(reference_stoppers)
            foreseen = [rule for rule in stoppers if rule in event.shadow_stops] if _stops(decision.decision) else []
            self.flips.append(
                Flip(
                    audit_id=event.audit_id,
                    time=event.time,
                    tool=event.tool,
                    session=event.session,
                    summary=input_summary(event.payload),
                    before=reference.decision,
                    before_reason=reference.reason,
                    after=decision.decision,
                    after_reason=decision.reason,
                    rules=stoppers,
                    foreseen_in_shadow=foreseen,
                )
            )


def _stoppers(decision: Decision) -> list[str]:
    """The enforced hooks that denied or asked (a shadow hook's verdict never stopped anything)."""
    return [h.id for h in decision.hooks if h.decision in STOPS and not h.shadow]


def _reference_specs(config: str, against: Gate | None, against_path: str | None) -> tuple[list[HookSpec], str | None]:
    """The hooks the reference decisions came from, and where their text was read.

    With ``--against OLD``, OLD's. Against the recorded decisions, the audit log keeps
    no rule text: the live config (the one ``guard hook`` finds) is the best account,
    read as it is now and said so, unless it is the new config itself.
    """
    if against is not None:
        return list(against.registry.specs()), against_path
    live = find_config(None)
    if live is None or Path(live).resolve() == Path(config).resolve():
        return [], None
    try:
        return list(load_config(str(live)).specs), f"{live} as it is now (the audit log keeps no rule text)"
    except GuardError:
        return [], None


def _rule_changes(
    flips: Sequence[Flip], new: Sequence[HookSpec], old: Sequence[HookSpec], old_source: str | None
) -> list[RuleChange]:
    """Each rule the flips name, with its old and new text and how many flips went each way."""
    new_by_id, old_by_id = {s.id: s for s in new}, {s.id: s for s in old}
    changes: dict[str, RuleChange] = {}
    for flip in flips:
        for rule in flip.rules:
            change = changes.get(rule)
            if change is None:
                old_spec, new_spec = old_by_id.get(rule), new_by_id.get(rule)
                change = changes[rule] = RuleChange(
                    rule=rule,
                    old_text=shown(old_spec) if old_spec else None,
                    new_text=shown(new_spec) if new_spec else None,
                    old_source=old_source if old_spec else None,
                )
            if _stops(flip.after):
                change.new_denies += 1
                change.foreseen_in_shadow += rule in flip.foreseen_in_shadow
            else:
                change.new_allows += 1
    return sorted(changes.values(), key=lambda c: -(c.new_denies + c.new_allows))


def _no_model_call(decision: Decision) -> bool:
    """Every judged hook of the decision answered from the cache (and there was one)."""
    asked = [h for h in decision.hooks if judged(h.type)]
    return bool(asked) and all(h.cached for h in asked)


def _select(gates: Sequence[Gate], events: list[RecordedEvent], rule: str | None) -> list[RecordedEvent]:
    """Events hook ``rule`` judged when recorded or would judge under any of ``gates``."""
    if rule is None:
        return events
    if not any(spec.id == rule for gate in gates for spec in gate.registry.specs()) and not any(
        rule in e.hooks for e in events
    ):
        raise GuardError(f"--rule {rule}: no hook has this id in the configs or the audit log")
    return [
        e
        for e in events
        if rule in e.hooks
        or any(spec.id == rule for gate in gates for spec in gate.registry.matching(e.event or "", e.tool))
    ]


def _decide_all(
    new: Gate, old: Gate | None, events: list[RecordedEvent], concurrency: int
) -> tuple[list[Decision], list[Decision] | None]:
    payloads = [e.payload for e in events]

    async def both() -> tuple[list[Decision], list[Decision] | None]:
        after = replay(new, payloads, concurrency=concurrency)
        if old is None:
            return await after, None
        before_decisions, after_decisions = await asyncio.gather(replay(old, payloads, concurrency=concurrency), after)
        return after_decisions, before_decisions

    return asyncio.run(both())


def backtest(
    config: str,
    *,
    against: str | None = None,
    log: str | None = None,
    since: str | None = None,
    session: str | None = None,
    rule: str | None = None,
    sample_size: int | None = None,
    seed: int = 0,
    concurrency: int = 8,
    out: str = ".backtest-out",
    max_new_denies: int | None = None,
    max_new_allows: int | None = None,
) -> BacktestResult:
    """Replay the audit log through ``config`` and write the comparison into ``out``; see the module docstring."""

    if (
        concurrency < 1
        or (sample_size is not None and sample_size < 1)
        or any(limit is not None and limit < 0 for limit in (max_new_denies, max_new_allows))
    ):
        raise GuardError(
            "--concurrency and --sample must be at least 1, --max-new-denies and --max-new-allows at least 0"
        )
    try:
        cutoff = time.time() - parse_duration(since) if since else None
    except ValueError as exc:
        raise GuardError(f"--since: {exc}") from None
    new_gate = replay_gate(config)
    old_gate = replay_gate(against) if against else None
    path = audit_path(log, config)
    if not path.is_file():
        raise GuardError(f"no audit log at {path}: nothing to replay")
    events, skipped = split_replayable(AuditLog(path).rows(since=cutoff, session=session))
    events = sample(_select([g for g in (new_gate, old_gate) if g], events, rule), sample_size, seed)

    if any(judged(spec.kind) for gate in (new_gate, old_gate) if gate for spec in gate.registry.specs()):
        warm_up(new_gate.settings.model_for("quick"))
    after, before = _decide_all(new_gate, old_gate, events, concurrency)
    variant = Variant(model=Path(config).name, depth="config", settings=new_gate.settings)
    compared = _Comparison(dataset=path.stem, model=variant.model, depth=variant.depth)
    for index, (event, decision) in enumerate(zip(events, after, strict=True)):
        if before is not None:
            old = before[index]
            compared.add(event, old, decision, _stoppers(old))
        else:
            compared.add(event, Decision(decision=event.decision, reason=event.reason), decision, event.stopped_by)
    rows, flips, problems = compared.rows, compared.flips, compared.problems
    new_denies = sum(1 for f in flips if _stops(f.after))
    reference_costs = (
        [h.cost_usd for d in before for h in d.hooks] if before is not None else [e.cost_usd for e in events]
    )
    known_costs = [cost for cost in reference_costs if cost is not None]
    summary = BacktestSummary(
        audit_log=str(path),
        config=config,
        reference=against or "recorded decisions",
        events=len(events),
        skipped=skipped,
        redacted_events=sum(1 for e in events if e.redacted),
        new_denies=new_denies,
        new_allows=len(flips) - new_denies,
        mcnemar_p=stats.mcnemar_exact(new_denies, len(flips) - new_denies),
        flips=flips,
        reference_cost_usd=sum(known_costs) if known_costs else None,
        cache_hits=compared.cache_hits,
        cached_events=compared.cached_events,
        errors=compared.errors,
        max_new_denies=max_new_denies,
        max_new_allows=max_new_allows,
        rules=_rule_changes(flips, list(new_gate.registry.specs()), *_reference_specs(config, old_gate, against)),
        shadow_verdicts=sum(1 for e in events if e.shadow_stops),
        foreseen_in_shadow=sum(1 for f in flips if f.foreseen_in_shadow),
    )
    digest = hashlib.sha256(",".join(str(e.audit_id) for e in events).encode()).hexdigest()
    info = DatasetInfo(name=path.stem, path=str(path), cases=len(events), sha256=digest)
    report = build_report(
        rows,
        [info],
        [variant],
        config=config,
        repeats=1,
        replayed=False,
        gates=[],
        baseline=None,
        seed=seed,
        backtest=summary,
    )
    output = Path(out)
    ResultsFile(output / "results.jsonl", rows).close()
    write_outputs(output, report)
    code = EXIT_ERROR if problems else EXIT_GATE if summary.gate_failed else EXIT_OK
    return BacktestResult(report=report, rows=rows, out=output, exit_code=code, problems=problems)
