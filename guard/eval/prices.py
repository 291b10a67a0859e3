"""What a judgement cost: a price per token for each model, times the tokens the provider reported.

The judge prices a call only on the provider's own endpoint (through a gateway or
a local server, LiteLLM's price is not necessarily what the endpoint charges).
An eval wants a cost either way, so it prices every call from, in order:

1. ``--price MODEL=IN/OUT`` on the command line,
2. the config's ``prices:`` block (``MODEL: {input: IN, output: OUT}``),
3. LiteLLM's price map (read as a file, never by importing LiteLLM) for a model it knows,

all in USD per million tokens. A call no source prices, or whose tokens were not
reported, leaves its row without a cost: shown as such, never as 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from guard.core.errors import GuardError
from guard.eval.schema import ModelCall, ModelPrice, ResultRow
from guard.judge.openai_transport import price_map

__all__ = ["PER_MILLION", "PriceBook", "list_price", "parse_price"]

PER_MILLION = 1_000_000


def parse_price(text: str) -> tuple[str, tuple[float, float]]:
    """``openai/llama-3.1-8b=0.05/0.08`` → the model and (input, output) USD per million tokens; bad input names the shape."""
    model, sep, raw = text.rpartition("=")
    shape = "expected MODEL=IN/OUT in USD per million tokens, e.g. openai/gpt-4.1-mini=0.4/1.6"
    if not sep or not model.strip():
        raise GuardError(f"--price {text!r}: {shape}")
    parts = raw.split("/")
    try:
        prices = tuple(float(part) for part in parts)
    except ValueError:
        raise GuardError(f"--price {text!r}: {shape}") from None
    if len(prices) != 2 or min(prices) < 0:
        raise GuardError(f"--price {text!r}: {shape}")
    return model.strip(), (prices[0], prices[1])


def _bare(model: str) -> str:
    return model.split("/", 1)[1] if "/" in model else model


def list_price(model: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens from LiteLLM's price map, for a model id it knows (``provider/name`` or a bare name)."""
    prices = price_map()
    provider, _, name = model.partition("/") if "/" in model else ("", "", model)
    candidates = [(model, None), (name, provider or None)]
    if provider == "openai" and "/" in name:  # a gateway's id for another provider's model: openai/anthropic/claude-…
        inner_provider, _, inner_name = name.partition("/")
        candidates.append((inner_name, inner_provider))
    for key, want in candidates:
        info = prices.get(key)
        if not isinstance(info, dict) or (want and not str(info.get("litellm_provider", "")).startswith(want)):
            continue
        per_in, per_out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
        if isinstance(per_in, (int, float)) and isinstance(per_out, (int, float)):
            return round(per_in * PER_MILLION, 9), round(
                per_out * PER_MILLION, 9
            )  # 4e-07 per token reads 0.4, not 0.39999999999999997
    return None


class PriceBook:
    """The prices of one run: ``given`` (``--price``) over ``configured`` (``prices:``) over LiteLLM's map."""

    def __init__(
        self,
        given: Mapping[str, tuple[float, float]] | None = None,
        configured: Mapping[str, tuple[float, float]] | None = None,
    ) -> None:
        self.given = dict(given or {})
        self.configured = dict(configured or {})

    @staticmethod
    def _find(table: Mapping[str, tuple[float, float]], model: str) -> tuple[float, float] | None:
        if model in table:
            return table[model]
        return next((price for name, price in table.items() if _bare(name) == _bare(model)), None)

    def price(self, model: str) -> ModelPrice:
        for source, table in (("--price", self.given), ("config prices", self.configured)):
            found = self._find(table, model)
            if found is not None:
                return ModelPrice(model=model, input_per_mtok=found[0], output_per_mtok=found[1], source=source)  # type: ignore[arg-type]
        listed = list_price(model)
        if listed is not None:
            return ModelPrice(
                model=model, input_per_mtok=listed[0], output_per_mtok=listed[1], source="LiteLLM price map"
            )
        return ModelPrice(model=model)

    def call_cost(self, call: ModelCall) -> float | None:
        price = self.price(call.model)
        if (
            price.input_per_mtok is None
            or price.output_per_mtok is None
            or call.tokens_in is None
            or call.tokens_out is None
        ):
            return None
        return (call.tokens_in * price.input_per_mtok + call.tokens_out * price.output_per_mtok) / PER_MILLION

    def row_cost(self, row: ResultRow) -> float | None:
        """The row's cost from its calls' tokens; a row recorded without calls keeps what the judge said."""
        if not row.calls:
            return row.cost_usd
        costs = [self.call_cost(call) for call in row.calls]
        return None if any(cost is None for cost in costs) else sum(c for c in costs if c is not None)

    def priced(self, rows: Sequence[ResultRow]) -> list[ResultRow]:
        """``rows`` with ``cost_usd`` set from this book (unrecorded rows made no call and stay as they are)."""
        return [row.model_copy(update={"cost_usd": self.row_cost(row)}) if row.calls else row for row in rows]

    def prices_of(self, rows: Sequence[ResultRow]) -> list[ModelPrice]:
        """The price of every model the rows called, in the order first called."""
        models = dict.fromkeys(call.model for row in rows for call in row.calls)
        return [self.price(model) for model in models]
