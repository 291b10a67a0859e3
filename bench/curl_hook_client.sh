# A Claude Code command hook that asks a running `guard serve` without starting an interpreter (measured by
# bench_cache_hook.py; not what `guard install` writes). Usage: sh curl_hook_client.sh http://127.0.0.1:PORT
# It blocks (exit 2, Claude Code's "block") on anything but an answer carrying guard serve's exit-code header:
# a service that is down, slow (--max-time) or answering an error, or whatever else listens on the port,
# never reads as "proceed". The token comes from $GUARD_SERVE_TOKEN.
out=$(curl -sS --fail --max-time "${GUARD_CURL_MAX_TIME:-20}" -H "Authorization: Bearer $GUARD_SERVE_TOKEN" \
  -H "Content-Type: application/json" --data-binary @- -w '\n%header{x-guard-exit-code}' "$1/v1/hooks/claude") \
  || { echo "guard: guard serve at $1 did not answer; the call is blocked" >&2; exit 2; }
code=${out##*
}
[ "$code" = 0 ] || { echo "guard: no answer from guard serve at $1; the call is blocked" >&2; exit 2; }
printf '%s\n' "${out%
*}"
