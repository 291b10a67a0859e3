"""Where ``linewise`` reads its hooks: what ``guard install linewise`` writes and ``guard doctor`` reads back."""

from guard.adapters.installers import ClientProfile

LINEWISE = ClientProfile(
    name="linewise",
    project_file=".linewise/hooks.json",
    user_file=".linewise/hooks.json",
    events=("PreToolUse",),
    default_events=("pre_tool_use",),
    matcher=None,
    when_hook_fails="lets the call run",
)
