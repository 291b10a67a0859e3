"""Keys out of a provider's error text, before it reaches a deny reason, a warning or the audit log.

Providers and proxies echo what they were sent ("Incorrect API key provided:
sk-…"), so a model error may carry the key guard called it with. This replaces
the values of this process's credential variables (``OPENAI_API_KEY``,
``ANTHROPIC_API_KEY``, any ``*_KEY``/``*_TOKEN``/``*_SECRET``/``*_PASSWORD``) and
text shaped like the common providers' keys and bearer tokens. Every pattern is
linear (no nested quantifiers): the text is the provider's, of any size.
"""

from __future__ import annotations

import os
import re

from guard.core.decision import REDACTED

__all__ = ["redact_keys"]

#: Environment variables whose values are credentials.
_CREDENTIAL_VARIABLE = re.compile(r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.IGNORECASE)
#: A value shorter than this is too common a string to replace everywhere it appears.
_SHORTEST_VALUE = 8
_SHAPES = re.compile(
    r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{16,}"  # OpenAI (sk-, sk-proj-), Anthropic (sk-ant-…), and their look-alikes
    r"|\bAIza[0-9A-Za-z_\-]{30,}"  # Google API keys
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}"
    r"|\bxox[abposr]-[A-Za-z0-9\-]{10,}"  # Slack
    r"|\bAKIA[0-9A-Z]{16}\b"  # AWS access key ids
    r"|(?<=[Bb]earer )[A-Za-z0-9._~+/=\-]{8,}"
    r"|(?<=[Kk]ey=)[^\s&\"',;]{8,}",
)


def redact_keys(text: str) -> str:
    """``text`` with every credential it holds replaced by ``[redacted]``."""
    for name, value in os.environ.items():
        if len(value) >= _SHORTEST_VALUE and value in text and _CREDENTIAL_VARIABLE.search(name):
            text = text.replace(value, REDACTED)
    return _SHAPES.sub(REDACTED, text)
