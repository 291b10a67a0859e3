#!/usr/bin/env bash
# Every benchmark in one go; the figures in docs/benchmarks.md come from this script's output.
# All model figures come from the loopback stub model (guard/testing/openai_stub.py), not a real model.
set -euo pipefail
cd "$(dirname "$0")"
for bench in bench_hook.py bench_dispatch.py bench_cache_hook.py bench_cache_backends.py bench_smart.py bench_serve.py bench_eval.py bench_claude.py bench_integrations.py bench_view.py bench_traffic.py; do
  echo "######## $bench"
  python3 "$bench"
  echo
done
