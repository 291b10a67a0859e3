"""An example guard plugin: the ``deny_words`` hook kind (with its options model), the ``linewise`` client, the ``canned`` judge transport and the ``memory://`` cache backend.

The kind is declared here, apart from its hook and options model: guard looks a kind up on every ``guard hook`` call,
and this module imports nothing (``kind.py`` imports pydantic, which only reading a config or running the hook needs).
"""

from guard.core.kinds import Kind

#: ``cache=True``: guard keeps each verdict and answers the same call again from the decision cache, on its fast path;
#: ``expanded``: a word may be ``${VAR}``, substituted from the environment each time the config loads;
#: ``files``: its words file is the user's to change, not the agent's (guard trust pins it, self-protection guards it)
DENY_WORDS = Kind(
    "deny_words",
    "guard_example_plugin.kind:DenyWordsHook",
    options="guard_example_plugin.kind:DenyWordsOptions",
    cache=True,
    expanded=("words",),
    files="guard_example_plugin.kind:word_files",
)
