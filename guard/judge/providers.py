"""Whether a model id can be called at all, told before its client library loads.

A first run with no key, a mistyped provider (``opnai/gpt-4.1-mini``) or a model
id without one should hear so at once and in one line naming what to set, not
after seconds of importing LiteLLM, and never as a timeout. :func:`preflight`
answers from the environment and from the JSON files LiteLLM ships beside its
package (read, never imported): the providers it knows and the models it maps
to them. It only says what it is sure of: a provider without an entry in
:data:`KEY_VARIABLES` (Bedrock, Vertex, Azure, Ollama…) authenticates in ways
the call itself finds out, and with an ``api_base`` the endpoint decides.
"""

from __future__ import annotations

import difflib
import os
import re
from functools import lru_cache
from typing import TYPE_CHECKING

from guard.core.errors import JudgeError
from guard.core.settings import API_BASE_ENV, MODEL_ENV, from_env
from guard.core.spec import SmartSettings
from guard.judge import openai_transport

if TYPE_CHECKING:
    from guard.core.settings import Settings
    from guard.core.spec import HookSpec

__all__ = [
    "KEY_VARIABLES",
    "ModelUnusable",
    "api_base_origin",
    "check_models",
    "known_providers",
    "model_origin",
    "preflight",
]

#: The variables LiteLLM reads a provider's key from (any one will do), for the providers people start with.
KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_TOKEN"),
    "cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "cerebras": ("CEREBRAS_API_KEY",),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
}
#: Where LiteLLM lists its providers, besides the price map's ``litellm_provider`` fields.
_ENDPOINTS = "provider_endpoints_support_backup.json"
_ENUM_SOURCE = ("types", "utils.py")  # class LlmProviders: the complete list, read as text when the JSON files miss one
_ENUM_VALUE = re.compile(r'^    [A-Z0-9_]+ = "([^"]+)"$', re.MULTILINE)


class ModelUnusable(JudgeError):
    """A model that cannot be called as configured (no key, no such provider); retrying or waiting cannot help."""


@lru_cache(maxsize=1)
def known_providers() -> frozenset[str]:
    """Every provider prefix the installed LiteLLM routes; empty when LiteLLM's files cannot be read (nothing is then refused)."""
    providers = {
        str(v["litellm_provider"])
        for v in openai_transport.price_map().values()
        if isinstance(v, dict) and v.get("litellm_provider")
    }
    listed = openai_transport.litellm_data(_ENDPOINTS).get("providers")
    if isinstance(listed, dict):
        providers |= set(listed)
    return frozenset(providers)


@lru_cache(maxsize=64)
def _listed_in_litellm_source(provider: str) -> bool:
    """LiteLLM's own enum of providers, read as text: the last word before calling a prefix unknown."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return True  # nothing to check against: the call will tell
    try:
        text = Path(spec.origin).parent.joinpath(*_ENUM_SOURCE).read_text(encoding="utf-8")
    except OSError:
        return True
    start = text.find("class LlmProviders(")
    values = set(_ENUM_VALUE.findall(text[start : start + 40000])) if start >= 0 else set()
    return not values or provider in values


def model_origin(spec: HookSpec, settings: Settings, tier: str) -> str:
    """The setting that holds ``tier``'s model for ``spec``, worded to follow "set"."""
    if SmartSettings.of(spec).model:
        return f"model: on hook {spec.id}"
    variable = MODEL_ENV[tier]
    if os.environ.get(variable):
        return variable
    return f"models.{tier} in {os.path.basename(settings.config_path)}" if settings.config_path else variable


def api_base_origin(api_base: str) -> str:
    """Whether ``api_base`` came from ``GUARD_API_BASE`` or the config's ``models.api_base``."""
    return API_BASE_ENV if from_env(API_BASE_ENV) == api_base else "models.api_base"


def _provider(model: str) -> tuple[str | None, str]:
    """(the provider LiteLLM would use, the prefix as written): a model name LiteLLM maps implies its provider."""
    info = openai_transport.price_map().get(model)
    prefix = model.split("/", 1)[0] if "/" in model else ""
    if isinstance(info, dict) and info.get("litellm_provider") and (not prefix or prefix not in known_providers()):
        return str(info["litellm_provider"]), prefix
    return (prefix or None), prefix


def preflight(model: str, api_base: str | None, origin: str) -> None:
    """Raise :class:`ModelUnusable` when ``model`` cannot be called: no provider LiteLLM knows, or no key for one that needs it.

    ``origin`` is the setting that holds the model (see :func:`model_origin`).
    """
    if api_base:
        return  # spoken to as OpenAI at that endpoint, whatever the prefix: the endpoint decides about keys
    from guard.judge.transport import TRANSPORTS, transport_name

    if transport_name(model) not in TRANSPORTS.builtins:
        return  # a plugin's (or the test fake's) transport: what it needs is its own business, and its call will tell
    if not known_providers():
        return  # LiteLLM's files are not there to check against: the call will tell
    provider, prefix = _provider(model)
    example = "a LiteLLM model id such as openai/gpt-4.1-mini"
    if provider is None:
        raise ModelUnusable(
            f"model {model!r} names no provider LiteLLM knows: set {origin} to provider/model, e.g. openai/{model}"
        )
    if provider not in known_providers() and not _listed_in_litellm_source(provider):
        near = difflib.get_close_matches(provider, sorted(known_providers() | set(KEY_VARIABLES)), n=1, cutoff=0.75)
        meant = f" (did you mean {near[0]}/{model.split('/', 1)[1]}?)" if near else ""
        raise ModelUnusable(f"model {model}: unknown provider {prefix!r}{meant}: set {origin} to {example}")
    from guard.judge import cassette

    if cassette.replaying():
        return  # a recording answers: no key is sent, so none is needed (a model no provider routes has none either)
    variables = KEY_VARIABLES.get(provider)
    if variables and not any(os.environ.get(name) for name in variables):
        raise ModelUnusable(
            f"model {model}: no API key for {provider}: set {variables[0]} (or GUARD_API_BASE for an OpenAI-compatible server that needs none)"
        )


def check_models(spec: HookSpec, settings: Settings, models: dict[str, str]) -> None:
    """:func:`preflight` for every tier's model of ``spec`` (``models``: tier to model id, as :func:`~guard.judge.tiers.models_for` gives).

    Every problem at once, so fixing the quick tier's key does not just reveal the thorough tier's.
    """
    problems: list[str] = []
    for tier, model in models.items():
        try:
            preflight(model, settings.effective_api_base(), model_origin(spec, settings, tier))
        except ModelUnusable as exc:
            if str(exc) not in problems:
                problems.append(str(exc))
    if problems:
        raise ModelUnusable("; ".join(problems))
