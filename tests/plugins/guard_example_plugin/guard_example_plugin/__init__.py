"""An example guard plugin: the ``deny_words`` hook kind, the ``linewise`` client and the ``memory://`` cache backend."""
