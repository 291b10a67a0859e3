"""The ``litellm`` transport: every provider LiteLLM speaks, through ``litellm.acompletion``.

LiteLLM is imported here, lazily, the first time a model needs it (seconds in a
fresh process). Before the import its price map is pinned to the bundled copy
(no network fetch) and its async client to httpx (so vcrpy cassettes can record
and replay it).
"""

from __future__ import annotations

import os
import warnings
from typing import Any

from guard.judge.reply_limit import cap_litellm

__all__ = ["acompletion", "completion_cost", "load", "response_mode"]


def load() -> Any:
    """LiteLLM, imported and configured once (later calls return it)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True")  # no fetch from GitHub on the first anthropic/ call
    os.environ.setdefault("DISABLE_AIOHTTP_TRANSPORT", "True")
    # Pydantic notes about LiteLLM's own TypedDicts surface mid-call (schemas are built lazily);
    # they are not the user's business. Re-applied on every call: filterwarnings is idempotent,
    # and a caller's catch_warnings() (pytest's "error" filter) would otherwise shadow it.
    warnings.filterwarnings("ignore", message=r".*`ReadOnly` qualifier", category=UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # import-time notes, same reason
        import litellm

    litellm.suppress_debug_info = True
    cap_litellm()
    return litellm


async def acompletion(**kwargs: Any) -> Any:
    return await load().acompletion(**kwargs)


def completion_cost(*, completion_response: Any) -> float | None:
    cost = load().completion_cost(completion_response=completion_response)
    return float(cost) if cost is not None else None


def response_mode(model: str) -> str:
    """json_schema where LiteLLM knows the model supports it, else json_object where allowed, else prompt."""
    litellm = load()
    try:
        if litellm.supports_response_schema(model=model):
            return "json_schema"
        if "response_format" in (litellm.get_supported_openai_params(model=model) or ()):
            return "json_object"
    except Exception:  # unknown provider or model: ask in the prompt only
        pass
    return "prompt"
