#!/usr/bin/env bash
# The first compressed download of a catalogue that serve has just opened,
# as the first partner after a new generation gets it: for each binary and
# catalogue file, starts serve, waits for /readyz, and times the first byte
# and the whole of GET /catalog/export with Accept-Encoding gzip, then of a
# second download. docs/BENCHMARKS.md, "The first compressed download", has
# its figures.
#
# usage: tools/firstbyte.sh BINARY... -- CATALOG.db...
#
# 127.0.0.1 only. With root, the page cache is dropped before each start
# (COLD=1).
set -euo pipefail
bins=()
while [[ $# -gt 0 && $1 != -- ]]; do bins+=("$1"); shift; done
shift
port=18433
printf '%-24s %-28s %10s %10s %10s %10s %12s\n' binary catalogue first_byte_s whole_s next_byte_s next_s bytes
for db in "$@"; do
  for bin in "${bins[@]}"; do
    if [[ ${COLD:-0} == 1 ]]; then sync; echo 1 > /proc/sys/vm/drop_caches; fi
    log=$(mktemp)
    "$bin" serve --dev --db "$db" --addr 127.0.0.1:$port > "$log" 2>&1 &
    pid=$!
    until curl -sf -o /dev/null http://127.0.0.1:$port/readyz; do sleep 0.01; done
    token=$(grep -o 'Bearer [A-Za-z0-9._-]*' "$log" | head -1 | cut -d' ' -f2)
    download() {
      curl -s -o /dev/null -H "Authorization: Bearer $token" -H 'Accept-Encoding: gzip' \
        -w '%{http_code} %{time_starttransfer} %{time_total} %{size_download}\n' \
        http://127.0.0.1:$port/api/v1/catalog/export
    }
    read -r code1 first1 whole1 size1 <<<"$(download)"
    read -r code2 first2 whole2 size2 <<<"$(download)"
    kill $pid; wait $pid 2>/dev/null || true; rm -f "$log"
    [[ $code1 == 200 && $code2 == 200 && $size1 == "$size2" ]] || { echo "firstbyte: $bin on $db answered $code1 ($size1 bytes), $code2 ($size2 bytes)" >&2; exit 1; }
    printf '%-24s %-28s %10.3f %10.3f %10.3f %10.3f %12d\n' "$(basename "$bin")" "$(basename "$db")" "$first1" "$whole1" "$first2" "$whole2" "$size1"
  done
done
