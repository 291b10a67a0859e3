"""An example guard plugin: the ``deny_words`` and ``max_input`` hook kinds (with their options models), the ``linewise`` client, the ``canned`` judge transport and the ``memory://`` cache backend.

The kinds are declared here, apart from their hooks and options models: guard looks a kind up on every ``guard hook`` call,
and this module imports nothing (``kind.py`` and ``max_input.py`` import pydantic, which only reading a config or running the hook needs).
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

#: ``verdict``: its answer needs no model or event loop, so ``guard hook`` reaches it on the fast path, before the engine
MAX_INPUT = Kind(
    "max_input",
    "guard_example_plugin.max_input:MaxInputHook",
    options="guard_example_plugin.max_input:MaxInputOptions",
    verdict="guard_example_plugin.length:too_long",
)
