"""Each decision as an OpenTelemetry log record, sent over OTLP/HTTP to the team's collector (``audit.otlp``).

The official SDK's exporter (the ``otel`` extra) sends the shipper's batches
(:mod:`guard.audit.shipping`); a batch counts as sent only when the collector
acknowledged it, so a collector that is down loses nothing. The record's body is
the decision's reason; its attributes follow OpenTelemetry's names where they
exist (``host.name``, ``user.name``, ``session.id``) and ``guard.*`` for the rest,
the hooks' verdicts and the event payload as JSON text. The event name is
``guard.decision``; the severity is WARN for a deny, INFO otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from guard.audit.shipping import Identity

__all__ = ["EVENT_NAME", "OtlpTarget", "attributes"]

EVENT_NAME = "guard.decision"
_LOGS_PATH = "/v1/logs"


def attributes(row: dict[str, Any], source: Identity) -> dict[str, Any]:
    """The log record's attributes for one audit row (None values left out: OTLP has no null)."""
    values = {
        "host.name": source.machine,
        "user.name": source.user,
        "session.id": row["session"],
        "guard.log_id": source.log_id,
        "guard.row_id": int(row["id"]),
        "guard.chain": row["chain"],
        "guard.event": row["event"],
        "guard.tool": row["tool"],
        "guard.decision": row["decision"],
        "guard.client": row["client"],
        "guard.latency_ms": row["latency_ms"],
        "guard.cost_usd": row["cost_usd"],
        "guard.judged": None if row["judged"] is None else bool(row["judged"]),
        "guard.hooks": row["hooks"],
        "guard.details": row["details"],
        "guard.warnings": row["warnings"],
        "guard.payload": row["payload"],
    }
    return {key: value for key, value in values.items() if value is not None}


class OtlpTarget:
    """Exports batches through the SDK's OTLP/HTTP log exporter; a batch the collector did not acknowledge raises."""

    def __init__(self, endpoint: str, name: str) -> None:
        from guard.core.extras import require

        require("otel", "exporting audit rows to OpenTelemetry (audit.otlp)")
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter

        url = endpoint.rstrip("/")
        self.name = name
        self.endpoint = url if url.endswith(_LOGS_PATH) else url + _LOGS_PATH
        self._exporter = OTLPLogExporter(endpoint=self.endpoint, timeout=10)

    def send(self, rows: list[dict[str, Any]], source: Identity) -> None:
        from opentelemetry._logs import LogRecord, SeverityNumber
        from opentelemetry.sdk._logs import ReadableLogRecord
        from opentelemetry.sdk._logs.export import LogRecordExportResult
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope

        resource = Resource.create({"service.name": "guard", "host.name": source.machine})
        scope = InstrumentationScope("guard.audit")
        batch = []
        for row in rows:
            nanos = int(float(row["time"]) * 1e9)
            deny = row["decision"] == "deny"
            record = LogRecord(
                timestamp=nanos,
                observed_timestamp=nanos,
                severity_number=SeverityNumber.WARN if deny else SeverityNumber.INFO,
                severity_text="WARN" if deny else "INFO",
                body=row["reason"] or row["decision"],
                attributes=attributes(row, source),
                event_name=EVENT_NAME,
            )
            batch.append(ReadableLogRecord(record, resource=resource, instrumentation_scope=scope))
        result = self._exporter.export(batch)
        if result != LogRecordExportResult.SUCCESS:
            raise ConnectionError(
                f"the collector at {self.endpoint} did not take {len(rows)} log record(s) (see the warning before this)"
            )

    def close(self) -> None:
        self._exporter.shutdown()  # type: ignore[no-untyped-call]  # the SDK's method has no annotations
