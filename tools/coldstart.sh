#!/usr/bin/env bash
# The first searches after serve starts on a catalogue none of whose file is
# in the page cache: for each query, drops the page cache (root only), starts
# serve, waits for /readyz, and times the query, then the same query again
# (warm). docs/BENCHMARKS.md, "Cold start", has its figures.
#
# usage: tools/coldstart.sh CATALOG.db QUERY...
#
# CATALOGD names the binary (default: catalogd on the PATH); SERVE_ARGS adds
# flags to serve (--answer-cache-mb=0, say); SEARCH_ARGS adds parameters to
# the search, as curl arguments (-d fuzzy=true, say). 127.0.0.1 only.
set -euo pipefail
db=$1; shift
bin=${CATALOGD:-catalogd}
port=18432
if ! sync || ! echo 1 > /proc/sys/vm/drop_caches 2>/dev/null; then
  echo "coldstart: cannot drop the page cache (/proc/sys/vm/drop_caches needs root)" >&2
  exit 1
fi
printf '%-32s %10s %12s %12s\n' query ready_ms cold_ms warm_ms
for q in "$@"; do
  sync; echo 1 > /proc/sys/vm/drop_caches
  log=$(mktemp)
  start=$(date +%s%N)
  # shellcheck disable=SC2086 # SERVE_ARGS is a list of flags
  $bin serve --dev --db "$db" --addr 127.0.0.1:$port ${SERVE_ARGS:-} > "$log" 2>&1 &
  pid=$!
  until curl -sf -o /dev/null http://127.0.0.1:$port/readyz; do sleep 0.002; done
  ready=$(( ($(date +%s%N) - start) / 1000000 ))
  token=$(grep -o 'Bearer [A-Za-z0-9._-]*' "$log" | head -1 | cut -d' ' -f2)
  search() {
    # shellcheck disable=SC2086 # SEARCH_ARGS is a list of curl arguments
    curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -G -H "Authorization: Bearer $token" \
      --data-urlencode "q=$q" -d limit=25 ${SEARCH_ARGS:-} http://127.0.0.1:$port/api/v1/catalog/search
  }
  read -r code1 cold <<<"$(search)"
  read -r code2 warm <<<"$(search)"
  kill $pid; wait $pid 2>/dev/null || true; rm -f "$log"
  [[ $code1 == 200 && $code2 == 200 ]] || { echo "coldstart: search $q answered $code1, $code2" >&2; exit 1; }
  awk -v q="$q" -v r="$ready" -v c="$cold" -v w="$warm" 'BEGIN { printf "%-32s %10d %12.1f %12.1f\n", q, r, c*1000, w*1000 }'
done
