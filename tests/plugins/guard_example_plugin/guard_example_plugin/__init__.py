"""An example guard plugin: the ``deny_words`` hook kind (with its options model), the ``linewise`` client, the ``canned`` judge transport and the ``memory://`` cache backend."""
