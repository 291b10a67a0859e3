"""Which URL a model call goes to, resolved as the transports resolve it, so a report can name it.

An endpoint is set in many places: ``GUARD_API_BASE`` or ``models.api_base`` (passed
as ``api_base``), else the provider's own variables that LiteLLM and OpenAI's
clients read (``OPENAI_BASE_URL``, ``OPENAI_API_BASE``, ``ANTHROPIC_BASE_URL``,
``ANTHROPIC_API_BASE``, ``GEMINI_API_BASE``, ``<PROVIDER>_API_BASE``…), else the
provider's default. An eval that calls a stub on 127.0.0.1 through any of them
must say so, so every judge call records the URL found here.
"""

from __future__ import annotations

import os
from typing import Literal
from urllib.parse import urlparse

__all__ = ["OPENAI_DEFAULT", "locality", "resolve"]

OPENAI_DEFAULT = "https://api.openai.com/v1"
#: Where a provider is reached when nothing overrides it (LiteLLM's defaults for the common ones).
_DEFAULTS = {
    "openai": OPENAI_DEFAULT,
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
    "mistral": "https://api.mistral.ai/v1",
    "groq": "https://api.groq.com/openai/v1",
    "deepseek": "https://api.deepseek.com",
    "openrouter": "https://openrouter.ai/api/v1",
    "xai": "https://api.x.ai/v1",
    "ollama": "http://localhost:11434",
}


def _provider(model: str) -> str:
    provider, sep, _ = model.partition("/")
    return provider.lower() if sep else "openai"  # LiteLLM reads a bare model name as OpenAI's


def _variables(provider: str) -> tuple[str, ...]:
    """The environment variables that move ``provider``'s endpoint, in the order LiteLLM reads them."""
    name = provider.upper().replace("-", "_")
    if provider == "openai":
        return ("OPENAI_BASE_URL", "OPENAI_API_BASE")
    if provider == "anthropic":
        return ("ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL")
    return (f"{name}_API_BASE", f"{name}_BASE_URL")


def resolve(model: str, api_base: str | None) -> str:
    """The URL a call of ``model`` (the id the transport is given) reaches with ``api_base``."""
    if api_base:
        return api_base
    provider = _provider(model)
    for variable in _variables(provider):
        if value := os.environ.get(variable):
            return value
    return _DEFAULTS.get(provider, f"{provider} (LiteLLM's default endpoint)")


def locality(url: str) -> Literal["loopback", "private"] | None:
    """``loopback`` for this machine (a stub or a local server), ``private`` for a private network (a local server or an in-house gateway), None for anything else."""
    host = urlparse(url).hostname if "://" in url else None
    if not host:
        return None
    if host == "localhost" or host.endswith(".localhost"):
        return "loopback"
    if host.endswith((".local", ".internal", ".lan")):
        return "private"
    import ipaddress  # only reports ask, never the hook's path

    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if address.is_loopback or address.is_unspecified:
        return "loopback"
    return "private" if address.is_private or address.is_link_local else None
