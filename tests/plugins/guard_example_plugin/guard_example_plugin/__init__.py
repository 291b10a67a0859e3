"""An example guard plugin: the ``deny_words`` hook kind and the ``linewise`` client."""
