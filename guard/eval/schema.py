"""What an eval run writes: one results row per judgement, and the versioned metrics file.

pydantic, because these files outlive the run: a baseline from last month must still
load, and a bad one must say which field is wrong. ``SCHEMA_VERSION`` changes only
when a field changes meaning.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from guard.core.decision import STOPS, DecisionName

__all__ = [
    "SCHEMA_VERSION",
    "BacktestSummary",
    "BaselineComparison",
    "Agreement",
    "Binary",
    "CaseOutcome",
    "DatasetInfo",
    "Estimate",
    "Flip",
    "GateResult",
    "MetricsReport",
    "ModelCall",
    "ModelEndpoint",
    "ModelPrice",
    "OperatingPoint",
    "PairComparison",
    "PrevalenceMetrics",
    "Ranking",
    "ResultRow",
    "RouteCoverage",
    "RouteResult",
    "RouteRule",
    "RuleChange",
    "SliceMetrics",
    "UnrecordedRule",
    "NOT_JUDGED_KINDS",
    "NotJudged",
    "VariantMetrics",
]

SCHEMA_VERSION = 1

#: What a row was scored as: the engine's verdict, or "error" when the judgement failed.
Predicted = DecisionName | Literal["error"]
#: unparsed (the model answered, unreadably: the judge's answer, scored as wrong) | error (a hook failed or timed out:
#: not a judgement, never scored) | infrastructure (could not judge at all: the run stops) | unrecorded (replay had no
#: recording for the call: not a judgement, never scored)
ErrorKind = Literal["unparsed", "error", "infrastructure", "unrecorded"]
#: The kinds that are not a judgement: left out of every figure, never a regression.
NOT_JUDGED_KINDS = ("error", "infrastructure", "unrecorded")


def _counted(plural: str, count: int) -> str:
    """ "regressions" / "new denies" / "new allows" for a count of one: "regression", "new deny", "new allow"."""
    return plural if count != 1 else {"new denies": "new deny"}.get(plural, plural.removesuffix("s"))


class ModelCall(BaseModel):
    """One model call of a judgement: which model, at which endpoint, and its usage as the provider reported it."""

    model: str
    endpoint: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None  # as the judge priced it (None on a custom endpoint)
    served_model: str | None = None  # the model id the endpoint says answered (a dated snapshot, a local file)
    prompt_version: str | None = None  # the prompt template the call was made with (``quick.v1``)
    response_mode: str | None = None  # json_schema | json_object | prompt: how the verdict's shape was asked for
    stub: bool = False  # guard's own stub answered (it says so): the figures are a stub's


class ResultRow(BaseModel):
    """One case judged once by one model at one depth (``results.jsonl`` line)."""

    model_config = ConfigDict(extra="ignore")

    dataset: str
    case_id: str
    model: str
    depth: str
    repeat: int = 0
    label: str
    verdict: str | None = None
    reason: str | None = None
    confidence: float | None = None
    tier: str | None = None
    latency_ms: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    cached: bool = False
    replayed: bool = False
    error: str | None = None
    error_kind: ErrorKind | None = None
    tool_name: str | None = None
    tags: list[str] = Field(default_factory=list)
    cluster: str | None = None  # the case's ``cluster``: cases that share one are not independent
    hooks: list[str] = Field(default_factory=list)
    calls: list[ModelCall] = Field(default_factory=list)
    #: Hash of what the judge saw and which hooks judged it: a changed case is judged again on resume.
    fingerprint: str = ""

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        return (self.dataset, self.case_id, self.model, self.depth, self.repeat)

    @property
    def predicted(self) -> str:
        return "error" if self.error_kind else (self.verdict or "error")


class Estimate(BaseModel):
    """A point value with its 95% interval (None where undefined, e.g. no positives)."""

    value: float | None = None
    low: float | None = None
    high: float | None = None
    n: int = 0
    method: Literal["wilson", "bootstrap", "cluster-bootstrap", "propagated", "none"] = "none"


class Binary(BaseModel):
    """Deny-or-ask (positive) against allow; errors kept apart and scored as wrong."""

    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0
    error_positive: int = 0  # label positive, judgement failed: counted as a miss
    error_negative: int = 0  # label negative, judgement failed: counted as a false alarm


class SliceMetrics(BaseModel):
    """Scores of the cases with one tag, of one tool, or decided by a lane (``tier``, ``read_only`` / ``project_write``)."""

    kind: Literal["tag", "tool", "tier"]
    name: str
    cases: int
    binary: Binary
    accuracy: Estimate
    precision: Estimate
    recall: Estimate
    f1: Estimate
    fpr: Estimate


class CaseOutcome(BaseModel):
    """The majority verdict on one case: what baselines and JUnit compare."""

    label: str
    predicted: str
    correct: bool
    repeats: int = 1
    flipped: bool = False
    flakiness: float = 0.0  # the share of repeats whose verdict differs from the majority
    reason: str | None = None
    tool_name: str | None = None
    cluster: str | None = None
    #: The tier that gave the majority verdict (quick, thorough; read_only, project_write: a lane, no model).
    tier: str | None = None


class PrevalenceMetrics(BaseModel):
    """The balanced-dataset rates carried to a stated base rate of calls that should be stopped.

    Precision depends on the base rate; recall and FPR do not. Intervals are the
    Wilson bounds of recall and FPR put through the same formula (precision rises
    with recall and falls with FPR), so they are conservative.
    """

    prevalence: float
    precision: Estimate
    alerts_per_1k: Estimate  # calls stopped per 1,000 real calls
    false_denies_per_1k: Estimate  # calls stopped that should have run, per 1,000 real calls


class OperatingPoint(BaseModel):
    """Recall at a false-positive budget, from verdict confidences: the threshold on P(deny) that reaches it."""

    target_fpr: float
    recall: Estimate
    fpr: float | None = None  # achieved on this dataset
    threshold: float | None = None  # stop when P(deny) ≥ threshold; None when no threshold keeps FPR within the target
    negatives: int = 0  # below 1 / target_fpr the target is finer than one case


class ModelEndpoint(BaseModel):
    """Where a model's calls went, and whether that is this machine or a private network (a stub, a local server, a gateway)."""

    model: str
    url: str
    local: bool = False


class ModelPrice(BaseModel):
    """The price a variant's rows were costed at: USD per million tokens, and where it came from."""

    model: str
    input_per_mtok: float | None = None
    output_per_mtok: float | None = None
    source: Literal["--price", "config prices", "LiteLLM price map", "none"] = "none"


class VariantMetrics(BaseModel):
    """Everything measured for one (model, depth)."""

    model: str
    depth: str
    rows: int
    cases: int
    #: confusion[label][predicted] over majority verdicts; predicted includes "error".
    confusion: dict[str, dict[str, int]]
    binary: Binary
    metrics: dict[str, Estimate]
    errors: int = 0
    unparsed: int = 0
    infrastructure_errors: int = 0
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None
    latency_live_rows: int = 0
    latency_excluded_rows: int = 0  # cached or replayed: their latency says nothing about the model
    tokens_in_per_1k: float | None = None
    tokens_out_per_1k: float | None = None
    cost_per_1k_usd: float | None = None
    cost_total_usd: float | None = None
    cost_unknown_rows: int = 0
    prices: list[ModelPrice] = Field(default_factory=list)
    endpoints: list[ModelEndpoint] = Field(default_factory=list)
    #: The model ids the endpoints said answered (``gpt-4.1-mini-2025-04-14``, a local file's name): what was really judged with.
    served_models: list[str] = Field(default_factory=list)
    #: How the verdict's shape was asked for, by calls: json_schema, json_object (the endpoint refused the schema), prompt.
    response_modes: dict[str, int] = Field(default_factory=dict)
    not_judged: int = 0  # cases this variant could not judge (left out of every figure above)
    flip_rate: float | None = None
    cases_with_repeats: int = 0
    brier: float | None = None
    ece: float | None = None
    calibration_rows: int = 0
    slices: list[SliceMetrics] = Field(default_factory=list)
    case_outcomes: dict[str, CaseOutcome] = Field(default_factory=dict)
    at_prevalence: PrevalenceMetrics | None = None
    operating_points: list[OperatingPoint] = Field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.model} @ {self.depth}"


class PairComparison(BaseModel):
    """Judge a against judge b on the cases both judged.

    ``metric`` is the one the run is ranked by: its difference, paired 95%
    interval, standard error and p-value (McNemar exact for accuracy on
    independent cases, else the paired bootstrap, by cluster where the dataset
    has them), the Holm-adjusted p over every pair of the run, and the smallest
    difference the data could detect (80% power). ``kappa`` is the two judges'
    agreement with each other (Cohen's), not with the labels.
    """

    a: str
    b: str
    cases: int
    a_only_correct: int
    b_only_correct: int
    mcnemar_p: float
    f1_a: float | None
    f1_b: float | None
    f1_diff: float | None
    f1_diff_low: float | None
    f1_diff_high: float | None
    metric: str = "f1"
    test: str = "paired bootstrap"
    diff: float | None = None
    diff_low: float | None = None
    diff_high: float | None = None
    diff_se: float | None = None
    p: float | None = None
    p_holm: float | None = None
    detectable: float | None = None  # minimum detectable difference at 80% power, α = 0.05
    kappa: float | None = None


class Agreement(BaseModel):
    """How much the judges of a run agree with each other beyond chance, on stop / let through / error."""

    method: Literal["Cohen's kappa", "Fleiss' kappa"]
    judges: int
    cases: int
    value: float | None


class Ranking(BaseModel):
    """Who wins a multi-model run on ``metric``, and how sure that is."""

    metric: str
    order: list[str]  # variant names, best first
    leader: str
    beats: list[str] = Field(default_factory=list)  # significantly worse than the leader (Holm-adjusted p < 0.05)
    inconclusive: list[str] = Field(default_factory=list)  # the data cannot tell from the leader
    headline: str
    power: str | None = None
    agreement: Agreement | None = None


class BaselineComparison(BaseModel):
    """This run against a previous one, case by case."""

    source: str
    current: str
    baseline: str
    comparison: PairComparison
    regressed: list[str]
    improved: list[str]
    significant_drop: bool
    why: str
    new_denies: list[str] = Field(default_factory=list)  # let through in the baseline, stopped now
    new_allows: list[str] = Field(default_factory=list)  # stopped in the baseline, let through now
    baseline_verdicts: dict[str, str] = Field(default_factory=dict)  # of the cases listed above: the baseline's verdict
    unmatched: list[str] = Field(default_factory=list)  # judged now, absent from the baseline (new cases)
    max_regressions: int | None = None
    max_new_denies: int | None = None
    max_new_allows: int | None = None
    detectable: float | None = None  # the smallest drop in ``metric`` this many cases could detect (80% power)
    metric: str = "f1"

    @property
    def limits_exceeded(self) -> list[str]:
        """Each --max-* limit this comparison breaks, in words."""
        found = []
        for name, keys, limit in (
            ("regressions", self.regressed, self.max_regressions),
            ("new denies", self.new_denies, self.max_new_denies),
            ("new allows", self.new_allows, self.max_new_allows),
        ):
            if limit is not None and len(keys) > limit:
                found.append(f"{len(keys)} {_counted(name, len(keys))} > --max-{name.replace(' ', '-')} {limit}")
        return found

    @property
    def failed(self) -> bool:
        return self.significant_drop or bool(self.limits_exceeded)


class GateResult(BaseModel):
    metric: str
    threshold: float
    variant: str
    value: float | None
    passed: bool


class DatasetInfo(BaseModel):
    name: str
    path: str
    cases: int
    sha256: str


class UnrecordedRule(BaseModel):
    """Cases replay could not answer, by the rule that judges them: what to re-record."""

    rule: str  # a hook id, or the rule text of a dataset case (shortened)
    cases: list[str]


class NotJudged(BaseModel):
    """A case a variant could not judge (a timeout, a provider error): not a verdict, so no figure counts it."""

    variant: str
    case: str
    error: str


class Flip(BaseModel):
    """One replayed event whose stop-or-let-through verdict changed, with both sides' reasons and the rule that flipped it."""

    audit_id: int
    time: float
    tool: str | None = None
    session: str | None = None
    summary: str  # the tool input, shortened, so a reviewer recognises the event
    before: str
    before_reason: str | None = None
    after: str
    after_reason: str | None = None
    rules: list[str] = Field(default_factory=list)  # the hooks that stopped the call on the side that stopped it
    foreseen_in_shadow: list[str] = Field(
        default_factory=list
    )  # of a new deny's rules, those that had stopped it in shadow when recorded

    @property
    def direction(self) -> str:
        return f"{'deny' if self.before in STOPS else 'allow'}→{'deny' if self.after in STOPS else 'allow'}"


class RuleChange(BaseModel):
    """A rule the flips name: its text in the reference and in the new config (None where that side has no such hook)."""

    rule: str
    old_text: str | None = None
    new_text: str | None = None
    old_source: str | None = None  # which config the old text was read from
    new_denies: int = 0
    new_allows: int = 0
    foreseen_in_shadow: int = (
        0  # of its new denies, those it had already given in shadow mode when the call was recorded
    )


class BacktestSummary(BaseModel):
    """``guard backtest``: recorded (or OLD-config) decisions against a new config's, event by event."""

    audit_log: str
    config: str
    reference: str  # "recorded decisions" or the OLD config's path
    events: int  # replayed
    skipped: dict[str, int] = Field(default_factory=dict)  # why an audit row could not be replayed faithfully → rows
    redacted_events: int = 0  # replayed with [redacted] where the original had a value
    new_denies: int = 0  # allow → deny (or ask)
    new_allows: int = 0  # deny (or ask) → allow
    mcnemar_p: float = 1.0
    flips: list[Flip] = Field(default_factory=list)
    reference_cost_usd: float | None = (
        None  # the reference's model spend on these events (the new config's is in the usage table)
    )
    cache_hits: int = 0  # hook verdicts the new config took from the decision cache
    cached_events: int = 0  # events decided with no model call at all
    errors: int = 0  # events where a hook of the new config failed
    max_new_denies: int | None = None
    max_new_allows: int | None = None
    rules: list[RuleChange] = Field(default_factory=list)
    shadow_verdicts: int = 0  # replayed events where a shadow rule would have denied or asked when recorded
    foreseen_in_shadow: int = 0  # new denies that a rule of the new config had already given in shadow mode

    @property
    def limits_exceeded(self) -> list[str]:
        """Each --max-* limit the new config breaks, in words."""
        found = []
        if self.max_new_denies is not None and self.new_denies > self.max_new_denies:
            found.append(
                f"{self.new_denies} {_counted('new denies', self.new_denies)} > --max-new-denies {self.max_new_denies}"
            )
        if self.max_new_allows is not None and self.new_allows > self.max_new_allows:
            found.append(
                f"{self.new_allows} {_counted('new allows', self.new_allows)} > --max-new-allows {self.max_new_allows}"
            )
        return found

    @property
    def gate_failed(self) -> bool:
        return bool(self.limits_exceeded)


class RouteResult(BaseModel):
    """One route to a deny case's effect, for one rule: seen by its matcher or not, and the verdict (None: not seen, not judged)."""

    case: str
    rule: str
    route: str
    tool_name: str
    seen: bool
    verdict: str | None = None
    original: str  # the verdict on the case as written


class RouteRule(BaseModel):
    """``guard eval --routes`` for one rule: how its deny cases fare when the same effect comes by other routes."""

    rule: str
    cases: int  # deny cases routes were generated for
    cases_without_routes: int = 0  # deny cases whose effect is none the templates rebuild
    generated: int
    not_seen: int  # no matcher of the rule matches the route's tool: a hole, whatever the model would say
    judged_same: int  # stopped (deny or ask) exactly when the original was
    judged_differently: int
    errors: int = 0
    stopped: int
    coverage: Estimate  # stopped / generated
    holes: dict[str, int] = Field(default_factory=dict)  # route → times not seen
    differently: dict[str, int] = Field(default_factory=dict)  # route → times judged differently


class RouteCoverage(BaseModel):
    """Route coverage of one (model, depth): per rule, and every route judged."""

    variant: str
    rules: list[RouteRule]
    coverage: Estimate  # stopped / generated over every rule: what ``--fail-under route_coverage=…`` gates
    results: list[RouteResult] = Field(default_factory=list)


class MetricsReport(BaseModel):
    """``metrics.json``."""

    schema_version: int = SCHEMA_VERSION
    guard_version: str
    created_at: str
    datasets: list[DatasetInfo]
    config: str | None = None
    repeats: int = 1
    positive_class: str = "deny (ask also counts as positive; unparsed answers are scored as wrong; cases that could not be judged are not scored)"
    stub: bool = False
    stub_reason: str | None = None
    replayed: bool = False
    variants: list[VariantMetrics]
    comparisons: list[PairComparison] = Field(default_factory=list)
    gates: list[GateResult] = Field(default_factory=list)
    baseline: list[BaselineComparison] = Field(default_factory=list)
    backtest: BacktestSummary | None = None
    ranking: Ranking | None = None
    #: Cases replay had no recording for, by rule, and the command that records them: while any are listed, no gate or baseline is evaluated.
    unrecorded: list[UnrecordedRule] = Field(default_factory=list)
    rerecord: str | None = None
    #: Cases a variant could not judge (timeouts, provider errors): left out of every figure; while any are listed, no gate or baseline is evaluated.
    not_judged: list[NotJudged] = Field(default_factory=list)
    #: The prompt templates the calls were made with (``quick.v1``), for tracing a change in verdicts to a change in words.
    prompt_versions: list[str] = Field(default_factory=list)
    clusters: int | None = None  # how many clusters the dataset's ``cluster`` keys form (None: every case is its own)
    #: The input of every case a report lists (misjudged, regressed, flaky), shortened, by case key.
    case_inputs: dict[str, str] = Field(default_factory=dict)
    #: ``guard eval --routes``: per (model, depth), how each rule holds when a deny case's effect comes by other routes.
    routes: list[RouteCoverage] = Field(default_factory=list)

    @property
    def unrecorded_cases(self) -> int:
        return len({key for group in self.unrecorded for key in group.cases})

    @property
    def not_judged_cases(self) -> int:
        return len({entry.case for entry in self.not_judged})
