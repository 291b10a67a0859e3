"""guard inside agent SDKs: Claude Agent SDK, OpenAI Agents SDK, LangChain.

Each integration is a submodule behind its own optional extra
(``pip install 'plainguard[claude-agent-sdk]'``, ``[openai-agents]``, ``[langchain]``)
and imports its SDK only when used: importing this package imports none of them.
All of them decide through one :class:`guard.runtime.gate.Gate` per integration
object, so the config, decision cache, audit log and failure policy are those
of ``guard hook``.
"""
