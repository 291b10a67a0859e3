"""Outbound webhooks: the SSRF check (:mod:`.ssrf`), request signing and the receiver's
verify helper (:mod:`.signing`), one pinned delivery (:mod:`.client`) and the
fire-and-forget queue (:mod:`.delivery`). Standard library only."""
