#!/usr/bin/env bash
# Measures every catalogue route against the ceiling, hot-spot and
# long-tail traffic, and writes the figures, with the commit, the machine
# and the command, into the table at the top of docs/BENCHMARKS.md
# (between its marker lines). Arguments are passed to the load harness
# (-cards 1000000, say). Run it on a quiet machine; 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."
go run -C tools ./load -conns 64 -duration 5s -attempts 3 -starts 1 -traffic hot-spot,long-tail \
  -summary "$PWD/docs/BENCHMARKS.md" "$@"
