"""The LLM judge behind smart hooks: prompts, verdicts, the model adapter and tiers.

Modules, from the fast path outwards: ``fence`` and ``prompts`` and ``keys``
(standard library, used for cache keys on a ``guard hook`` cache hit),
``verdict`` (pydantic), ``model`` (LiteLLM, imported lazily), ``tiers``
(quick / thorough / auto routing). Nothing is re-exported here so that importing
one module never drags in the others.
"""
