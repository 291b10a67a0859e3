"""Session context: what the user asked for and what the agent did earlier in the same session.

The gate records it (:mod:`guard.session.store`, :mod:`guard.session.recording`); rules
that read it (``context: session``) see a bounded view of it
(:mod:`guard.session.context`), fenced as untrusted data. The names every layer
needs to decide whether any of that applies live in :mod:`guard.core.session`.
"""
