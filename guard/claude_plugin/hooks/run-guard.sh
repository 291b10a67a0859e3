#!/bin/sh
# The plugin's hook: run guard, or block with a message when it cannot be found.
# A plugin cannot know where guard was installed, and a hook command that does not
# start lets the call through silently. guard is looked for as `guard doctor` does
# (guard.setup.install.plugin_guard): $GUARD_BIN, then PATH, then ~/.local/bin/guard.
for candidate in "${GUARD_BIN:-}" "$(command -v guard 2>/dev/null)" "${HOME:-/nonexistent}/.local/bin/guard"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && [ ! -d "$candidate" ]; then
        exec "$candidate" "$@"
    fi
done
message="guard (Claude Code plugin) cannot find the guard program: not in \$GUARD_BIN, on PATH, or in ~/.local/bin. Install it (pipx install plainguard) or set GUARD_BIN; run guard doctor."
payload=$(cat)
case "$payload" in
    *'"PreToolUse"'*|*'"UserPromptSubmit"'*|*'"PermissionRequest"'*)
        # these events can stop what comes next: exit 2 blocks it and shows why
        echo "$message tool calls are blocked until then." >&2
        exit 2 ;;
    *)
        # blocking a Stop or a PostToolUse would loop the agent: say it instead
        printf '{"systemMessage": "%s"}\n' "$message"
        exit 0 ;;
esac
