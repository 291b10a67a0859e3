"""Finding and loading guard's configuration, in one pass with each step a function of the one before.

locate (:mod:`~guard.config.search`) → trust and pin (:mod:`~guard.config.pinning`:
``guard hook`` and ``guard serve`` enforce the copy the user trusted) → parse and
validate (:mod:`~guard.config.snapshot` when nothing changed, else
:mod:`~guard.config.parse`) → assemble (:mod:`~guard.config.assembly`: the org
policy, the tiers' timeouts, the self-protection hook) → the gate's registry.
:mod:`~guard.config.loading` is that pass for the config on disk (``guard check``,
``guard eval``). No step imports one after it. The package names nothing itself:
each step is imported from its module, so a ``guard hook`` loads only the steps
its pass takes.
"""
