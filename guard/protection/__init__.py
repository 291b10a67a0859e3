"""Self-protection: what the guarded agent may not touch (:mod:`.targets`), and how a tool call is checked against it."""
