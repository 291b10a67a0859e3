"""Session context: what the user asked for and what the agent did earlier in the same session.

The gate records it (:mod:`guard.session.store`); rules that read it (``context: session``)
see a bounded view of it (:mod:`guard.session.context`), fenced as untrusted data.
"""
