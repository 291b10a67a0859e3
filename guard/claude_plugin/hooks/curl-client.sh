#!/bin/sh
# `guard install claude --client curl`'s command hook: ask the warm `guard serve` over its Unix socket with curl
# (no interpreter starts), else run the full `guard hook`. Usage: curl-client.sh SOCKET CREDENTIAL_FILE MAX_TIME GUARD_HOOK...
# Only an answer carrying guard serve's exit-code header (0 or 2), and not its refusal header, is read; anything else
# (no socket, no curl, refused, timed out, a non-2xx answer, a listener without the header, a wrong credential
# answered by the failure policy) runs GUARD_HOOK on the same event, which
# decides itself, fail-closed. When that cannot run either, the call is blocked (exit 2).
# The socket is in guard's state folder and the credential file beside guard's secret: the sandbox
# `guard install claude` writes denies the agent writes to the one and reads of the other.
# The project GUARD_HOOK is anchored to (--project, which Claude Code's shared launcher adds) goes to the service as
# X-Guard-Project, which answers only for its own: Claude Code gives a git worktree the main checkout's local settings,
# so a worktree's hook names the main checkout's socket, and the worktree's own config must decide.
sock=$1 cred=$2 max_time=$3
shift 3
project= previous=
for word in "$@"; do
    [ "$previous" = --project ] && project=$word
    previous=$word
done
tab=$(printf '\t') cr=$(printf '\r')
case $project in
    *'
'*|*"$cr"*|' '*|*' '|"$tab"*|*"$tab") sock= ;;  # a folder name no header carries as is (HTTP trims a value's ends): guard hook decides
esac
payload=$(cat; printf x)
payload=${payload%x}
if [ -S "$sock" ] && [ -r "$cred" ] && command -v curl >/dev/null 2>&1; then
    if out=$(printf '%s' "$payload" | curl --unix-socket "$sock" --fail -sS --max-time "$max_time" -H @"$cred" \
            ${project:+-H "X-Guard-Project: $project"} \
            -H "Content-Type: application/json" --data-binary @- -w '\n%header{x-guard-refused}:%header{x-guard-exit-code}' \
            http://guard/v1/hooks/claude 2>/dev/null); then
        code=${out##*
}
        body=${out%
*}
        case $code in
            :0) printf '%s\n' "$body"; exit 0 ;;
            :2) printf '%s\n' "$body" >&2; exit 2 ;;
        esac
    fi
fi
printf '%s' "$payload" | "$@"
status=$?
case $status in
    0|2) exit $status ;;
    126|127) echo "guard: the curl client could not reach guard serve and cannot run guard hook ($1); the call is blocked" >&2 ;;
    *) echo "guard: guard hook ($1) ended with status $status (a crash or a signal); the call is blocked" >&2 ;;
esac
exit 2  # Claude Code reads any other status as a non-blocking error: the call would proceed
