"""Run every case × model × depth × repeat through guard's own gate and engine, resumably.

Why the gate: users must evaluate exactly what runs in production (the same
prompts, tiers, merging, failure modes and stop-loop guard). Each (model, depth) gets its own
gate and engine with the decision cache and audit log off (repeats are real samples, and an eval
must not fill the user's audit log); each case's hooks are mounted for that case
only (:meth:`Registry.mount`), so concurrent cases never see each other's hooks.

Rows are appended to ``results.jsonl`` as they finish, so a killed run loses at
most the calls in flight; rerunning with the same ``--out`` schedules only rows
that are missing, stale (the case or its hooks changed), failed for
infrastructure reasons, could not be judged (a timeout) or found no recording (so
``--record`` into the same ``--out`` records just the calls replay missed).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import multiprocessing
import queue
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from guard.cache import canonical_json
from guard.core.decision import Decision, merge
from guard.core.kinds import judged
from guard.core.settings import Settings
from guard.core.spec import HookSpec, SmartSettings
from guard.eval.cases import JudgedCase
from guard.eval.limiter import AdaptiveLimiter
from guard.eval.progress import Progress
from guard.eval.recording import Recorder, current_case
from guard.eval.schema import NOT_JUDGED_KINDS, ResultRow
from guard.eval.verdicts import decision_fields, is_rate_limited
from guard.judge.model import warm_client
from guard.runtime.deciders import in_process
from guard.runtime.engine import Engine
from guard.runtime.gate import Gate
from guard.runtime.registry import Registry

if TYPE_CHECKING:
    from multiprocessing.queues import Queue

__all__ = [
    "DEFAULT_CONCURRENCY",
    "EngineJudge",
    "model_latency_ms",
    "run_in_workers",
    "RunOutcome",
    "Variant",
    "WorkItem",
    "ResultsFile",
    "plan",
    "read_rows",
    "run_schedule",
]

log = logging.getLogger("guard.eval")

DEFAULT_CONCURRENCY = 8
RATE_LIMIT_RETRIES = 5
#: Set per case and repeat, so every judgement is its own sample (see Variant.adapt).
SAMPLE_FIELD = "session_id"


@dataclass(frozen=True)
class Variant:
    """One (model, depth) column of the run: its settings and how it adapts a hook."""

    model: str  # label shown in reports
    depth: str  # quick | thorough | auto | config
    settings: Settings
    pinned_model: str | None = None  # --model: every smart hook uses it, whatever the config says
    pinned_depth: str | None = None  # --depth: every smart hook runs at it
    judging: str | None = (
        None  # --judging: together (with the config's other rules on the call) or apart; None: as configured
    )

    @property
    def name(self) -> str:
        return f"{self.model} @ {self.depth}"

    def adapt(self, spec: HookSpec) -> HookSpec:
        """The hook as this variant runs it.

        ``session_id`` joins the smart hook's key (it stays hidden from the prompt), so
        the single flight never folds two repeats, or two cases, into one model call.
        """
        if not isinstance(spec.options, SmartSettings):
            return spec
        changes: dict[str, object] = {"cache_keep": (*spec.options.cache_keep, SAMPLE_FIELD)}
        if self.pinned_depth:
            changes["depth"] = self.pinned_depth
        if self.pinned_model:
            changes["model"] = self.pinned_model
        if self.judging is not None:
            changes["judge_together"] = self.judging == "together"
        return spec.replace(options=spec.options.replace(**changes))


@dataclass(frozen=True)
class WorkItem:
    variant: Variant
    case: JudgedCase
    repeat: int
    fingerprint: str

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        return (self.case.dataset, self.case.case.id, self.variant.model, self.variant.depth, self.repeat)


Judge = Callable[[WorkItem], Awaitable[ResultRow]]


@dataclass
class RunOutcome:
    rows: list[ResultRow]
    aborted: str | None = None  # why the run stopped early (an infrastructure failure)
    rate_limit_backoffs: int = 0


def _provider_ms(call: dict[str, Any]) -> float:
    """A call's time on the wire (request sent → answer read) where its transport measured it, else the whole call's."""
    wire = call.get("wire_ms")
    return float(wire if wire is not None else call.get("latency_ms") or 0.0)


def model_latency_ms(decision: Decision, *, fallback: float) -> float:
    """How long the model took to answer this decision: each call's HTTP exchange, request sent → answer read.

    A hook's calls run one after another (quick, then thorough), hooks in parallel:
    the slowest hook's total. Time spent waiting for a slot, on the event loop around
    the call, or in the client's own per-call work (building the request, parsing,
    LiteLLM's logging) is the harness's, not the provider's, so it is left out. A
    decision without model calls (cached, command hooks) keeps its wall time.
    """
    per_hook = [sum(_provider_ms(call) for call in hook.details.get("calls", ())) for hook in decision.hooks]
    return round(max(per_hook) if any(per_hook) else fallback, 3)


def _case_gate(engine: Engine) -> Gate:
    """``guard eval``'s gate for one variant: the hooks run on ``engine`` (its registry, where each case mounts its own),
    no service, no audit row, and each case's own session and files kept as given."""
    return Gate(engine=engine, deciders=in_process(engine), audit=False, given_context=True)


class EngineJudge:
    """Judges work items through one guard Gate per variant (the production path: fast path, engine, stop-loop guard), audit log off.

    The gate keeps the case's own world (its session and files), as a client's would never be kept.
    """

    def __init__(self, variants: Sequence[Variant], recorder: Recorder | None = None) -> None:
        self.recorder = recorder
        self._gates = {v.name: _case_gate(Engine(v.settings, Registry())) for v in variants}
        # the engine caches built hooks by id(spec): keep every adapted spec alive for the run
        self._adapted: dict[tuple[str, int], HookSpec] = {}

    async def warm(self, items: Sequence[WorkItem]) -> None:
        """Load and warm every variant's model client before the clock starts (:func:`guard.judge.model.warm_client`).

        Loading a client (LiteLLM's import) and its first calls' set-up run on the process
        every variant shares: done while rows are timed, they stall the other variants'
        calls too, charging one provider another's start-up, or a timeout. No call is made.
        """

        seen: set[str] = set()
        for item in items:
            variant = item.variant
            if variant.name in seen or not any(judged(spec.kind) for spec in item.case.specs):
                continue
            seen.add(variant.name)
            settings = variant.settings
            models = (
                [variant.pinned_model]
                if variant.pinned_model
                else [m for m in (settings.model_for("quick"), settings.model_for("thorough")) if m]
            )
            await warm_client(models, settings.effective_api_base())

    def specs(self, variant: Variant, case: JudgedCase) -> tuple[HookSpec, ...]:
        """The hooks that run for ``case``: its own, and under ``--judging together`` the config's other rules on the same call
        (as ``guard hook`` would judge them with it; only the case's own are scored)."""
        out = []
        for spec in (*case.specs, *case.companions) if variant.judging == "together" else case.specs:
            key = (variant.name, id(spec))
            if key not in self._adapted:
                self._adapted[key] = variant.adapt(spec)
            out.append(self._adapted[key])
        return tuple(out)

    def fingerprint(self, variant: Variant, case: JudgedCase) -> str:
        """Hash of what the judge sees and the hooks that judge it."""
        parts = {"event": case.event.payload(), "hooks": [s.to_dict() for s in self.specs(variant, case)]}
        return hashlib.blake2b(canonical_json(parts).encode(), digest_size=12).hexdigest()

    async def __call__(self, item: WorkItem) -> ResultRow:
        gate = self._gates[item.variant.name]
        blame = f"{item.case.key} [{item.variant.name}, repeat {item.repeat}]"
        token = current_case.set(blame)
        started = time.perf_counter()
        try:
            with gate.registry.run():
                gate.registry.mount(self.specs(item.variant, item.case))
                event = item.case.event.model_copy(update={SAMPLE_FIELD: f"guard-eval:{item.case.key}#{item.repeat}"})
                _, decision = await gate.adecide(event.payload())
        finally:
            current_case.reset(token)
        if item.variant.judging == "together" and item.case.companions:
            own = {spec.id for spec in item.case.specs}
            decision = merge([hook for hook in decision.hooks if hook.id in own])  # scored on its own rules' verdicts
        fields = decision_fields(decision)
        missing = self.recorder.missed(blame) if self.recorder else None
        if missing:
            fields["error"] = f"no recording for {missing} in {self.recorder.path}"  # type: ignore[union-attr]
            fields["error_kind"] = "unrecorded"
        case = item.case.case
        return ResultRow(
            dataset=item.case.dataset,
            case_id=case.id,
            model=item.variant.model,
            depth=item.variant.depth,
            repeat=item.repeat,
            label=case.label,
            latency_ms=model_latency_ms(decision, fallback=(time.perf_counter() - started) * 1000),
            replayed=bool(self.recorder and self.recorder.mode == "replay"),
            tool_name=case.tool_name,
            tags=list(case.tags),
            cluster=case.cluster,
            fingerprint=item.fingerprint,
            **fields,  # type: ignore[arg-type]
        )


def read_rows(path: Path) -> list[ResultRow]:
    """Rows of an existing results.jsonl; a torn last line (killed run) is skipped."""
    if not path.is_file():
        return []
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(ResultRow.model_validate_json(line))
        except ValidationError:
            log.warning("%s:%d: unreadable results row skipped (it will be judged again)", path, number)
    return rows


def plan(items: Sequence[WorkItem], existing: Sequence[ResultRow]) -> tuple[list[ResultRow], list[WorkItem]]:
    """Split the schedule into rows already done (kept) and items still to judge.

    Labels, tags and clusters are not part of what the judge saw: a kept row takes
    the dataset's current ones, so fixing a label costs no model call. Rows that
    are not a judgement (a failed hook, infrastructure, no recording) are judged again.
    """
    wanted = {item.key: item for item in items}
    kept: dict[tuple[str, str, str, str, int], ResultRow] = {}
    for row in existing:
        item = wanted.get(row.key)
        if item is not None and row.fingerprint == item.fingerprint and row.error_kind not in NOT_JUDGED_KINDS:
            case = item.case.case
            kept[row.key] = row.model_copy(
                update={"label": case.label, "tags": list(case.tags), "cluster": case.cluster}
            )
    return list(kept.values()), [item for item in items if item.key not in kept]


@dataclass
class _Run:
    judge: Judge
    sink: Callable[[ResultRow], None]
    progress: Progress
    backoff: float
    limiters: dict[str, AdaptiveLimiter] = field(default_factory=dict)
    rows: list[ResultRow] = field(default_factory=list)
    aborted: str | None = None

    async def one(self, item: WorkItem) -> None:
        limiter = self.limiters[item.variant.model]
        for attempt in range(RATE_LIMIT_RETRIES + 1):
            async with limiter.slot():
                if self.aborted:
                    return
                row = await self.judge(item)
            if not (row.error_kind == "infrastructure" and is_rate_limited(row.error)) or attempt == RATE_LIMIT_RETRIES:
                break
            await limiter.rate_limited()
            await asyncio.sleep(self.backoff * 2**attempt)
        if row.error_kind is None:
            await limiter.succeeded()
        self.rows.append(row)
        self.sink(row)
        self.progress.advance(row.cost_usd, row.error_kind is not None)
        if row.error_kind == "infrastructure" and not self.aborted:
            self.aborted = f"{item.case.key} ({item.variant.name}): {row.error}"


async def run_schedule(
    items: Sequence[WorkItem],
    judge: Judge,
    sink: Callable[[ResultRow], None],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: bool | None = None,
    backoff: float = 1.0,
) -> RunOutcome:
    """Judge ``items`` with ``concurrency`` calls in flight per model; stop at the first infrastructure failure."""
    with Progress(len(items), enabled=progress) as bar:
        run = _Run(judge, sink, bar, backoff)
        for item in items:
            run.limiters.setdefault(item.variant.model, AdaptiveLimiter(concurrency))
        tasks = [asyncio.ensure_future(run.one(item)) for item in items]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
    return RunOutcome(
        rows=run.rows, aborted=run.aborted, rate_limit_backoffs=sum(lim.backoffs for lim in run.limiters.values())
    )


#: What a worker process sends back: each row as JSON, then once ("done", why it stopped early or None, rate-limit backoffs).
ShardMessage = tuple[Literal["row"], str] | tuple[Literal["done"], str | None, int]


def _judge_shard(
    variants: Sequence[Variant], shard: Sequence[WorkItem], concurrency: int, rows: Queue[ShardMessage]
) -> None:
    """A worker process: judge ``shard`` on its own event loop, sending each row (as JSON) and then its outcome."""
    try:
        judge = EngineJudge(variants)

        async def judged() -> RunOutcome:
            await judge.warm(shard)
            return await run_schedule(
                shard,
                judge,
                lambda row: rows.put(("row", row.model_dump_json())),
                concurrency=concurrency,
                progress=False,
            )

        outcome = asyncio.run(judged())
        rows.put(("done", outcome.aborted, outcome.rate_limit_backoffs))
    except BaseException as exc:  # noqa: BLE001 - the parent must hear about it, not wait forever
        rows.put(("done", f"worker failed: {type(exc).__name__}: {exc}", 0))


def _shares(concurrency: int, workers: int) -> list[int]:
    """Each worker's part of the per-model concurrency, together exactly ``concurrency``."""
    return [concurrency // workers + (1 if i < concurrency % workers else 0) for i in range(workers)]


async def run_in_workers(
    items: Sequence[WorkItem],
    variants: Sequence[Variant],
    sink: Callable[[ResultRow], None],
    *,
    workers: int,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: bool | None = None,
) -> RunOutcome:
    """:func:`run_schedule` split over ``workers`` processes, for when one event loop's CPU is the bottleneck.

    Each process gets every ``workers``-th item and its share of the per-model
    concurrency; rows come back here to be written and counted. The first
    infrastructure failure stops every worker, as in one process.
    """

    context = multiprocessing.get_context("spawn")  # fork would copy this process's threads and event loop
    rows_queue: Queue[ShardMessage] = context.Queue()
    processes = [
        context.Process(
            target=_judge_shard, args=(list(variants), list(items[i::workers]), share, rows_queue), daemon=True
        )
        for i, share in enumerate(_shares(concurrency, workers))
    ]
    for process in processes:
        process.start()
    outcome = RunOutcome(rows=[])
    finished = 0
    with Progress(len(items), enabled=progress) as bar:
        while finished < len(processes):
            try:
                message = await asyncio.to_thread(rows_queue.get, True, 0.5)
            except queue.Empty:
                if all(not process.is_alive() for process in processes) and rows_queue.empty():
                    outcome.aborted = outcome.aborted or "a worker process died"
                    break
                continue
            if message[0] == "row":
                row = ResultRow.model_validate_json(message[1])
                outcome.rows.append(row)
                sink(row)
                bar.advance(row.cost_usd, row.error_kind is not None)
                continue
            finished += 1
            outcome.rate_limit_backoffs += message[2]
            if message[1] and not outcome.aborted:
                outcome.aborted = message[1]
                for process in processes:  # as one process would: stop scheduling at the first failure
                    process.terminate()
    for process in processes:
        process.join(timeout=10)
    return outcome


class ResultsFile:
    """``results.jsonl``: rewritten with the kept rows, then each new row appended as it lands."""

    def __init__(self, path: Path, kept: Sequence[ResultRow]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".jsonl.tmp")
        tmp.write_text("".join(row.model_dump_json() + "\n" for row in kept), encoding="utf-8")
        tmp.replace(path)
        self._handle = path.open("a", encoding="utf-8")

    def __call__(self, row: ResultRow) -> None:
        self._handle.write(row.model_dump_json() + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()
