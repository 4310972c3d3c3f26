#!/usr/bin/env bash
# Lists the functions of catalogd's own packages that one request runs, from
# the listener to the bytes, with their files: docs/ARCHITECTURE.md names
# them. It builds catalogd with coverage counters, serves the built-in
# sample twice (serve --dev on a file imported beforehand), sends the
# request twice to warm every cache (the token's verification among them),
# then once in one run and eleven times in the other, and keeps the
# functions whose blocks ran at least ten times more in the second: once
# per request, whatever the timers of the background did meanwhile (both
# runs last as long, so the timers run about as often in each).
# Methods of the same name in one file are counted apart.
#
# usage: tools/pathfuncs.sh METHOD PATH [JSON-BODY]
#   tools/pathfuncs.sh GET /api/v1/catalog/cards/jp-SV1a-001
#   tools/pathfuncs.sh POST /api/v1/mcp '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_cards","arguments":{"q":"pikachu"}}}'
#
# With CHECK_DOC=FILE and CHECK_LIST=TITLE it fails, saying what is
# missing, unless FILE has a "<details><summary>TITLE: N functions in M
# files" list with the count this run found and, on the line of each file,
# each of its functions (`name` or `Type.name`). SERVE_ARGS adds flags to
# serve (--answer-cache-mb=0 for a search's path on a miss, say).
# 127.0.0.1 only. Needs curl.
set -euo pipefail
method=$1 path=$2 body=${3:-}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
pid=
# serve writes its counters into $work as it exits: wait for it first.
trap '[[ -n $pid ]] && kill $pid 2>/dev/null && wait $pid; rm -rf "$work"' EXIT
fail() { echo "pathfuncs${CHECK_LIST:+ ($CHECK_LIST)}: $*" >&2; exit 1; }
go build -cover -covermode=count -coverpkg=./... -o "$work/catalogd" .

run() { # run N: serve, warm up, send the request N times, stop
  local n=$1 dir=$work/cov$1 log=$work/serve$1.log
  mkdir -p "$dir"
  local started; started=$(date +%s.%N)
  # On a port the kernel chooses, so that checks can run side by side.
  # shellcheck disable=SC2086 # SERVE_ARGS is a list of flags
  GOCOVERDIR=$dir "$work/catalogd" serve --dev --db "$work/catalog.db" --addr 127.0.0.1:0 ${SERVE_ARGS:-} > "$log" 2>&1 &
  pid=$!
  # serve prints its address and the dev token once it listens; wait for
  # them and for readiness, or for its end.
  local port=
  for ((tries = 0; ; tries++)); do
    kill -0 $pid 2>/dev/null || fail "serve ended: $(tail -3 "$log")"
    ((tries < 400)) || fail "serve not ready in 20 s: $(tail -3 "$log")"
    if [[ -z $port ]] && grep -qs 'Bearer ' "$log"; then
      port=$(grep -o -m1 'API  *http://127.0.0.1:[0-9]*' "$log" | sed 's/.*://' || true)
      [[ -n $port ]] || fail "serve printed no API address: $(head -5 "$log")"
    fi
    if [[ -n $port ]] && curl -sf -o /dev/null http://127.0.0.1:$port/readyz; then break; fi
    sleep 0.05
  done
  local token
  token=$(grep -o 'Bearer [A-Za-z0-9._-]*' "$log" | head -1 | cut -d' ' -f2)
  local args=(-s -o /dev/null -w '%{http_code}' -X "$method" -H "Authorization: Bearer $token")
  if [[ -n $body ]]; then
    args+=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' --data "$body")
  fi
  for i in $(seq $((2 + n))); do
    code=$(curl "${args[@]}" "http://127.0.0.1:$port$path") || code=000
    [[ $code == 2* ]] || fail "$method $path answered $code"
    if ((i == 2)); then sleep 0.5; fi
  done
  # Both runs last about the same, so that what serve does on a timer
  # (the catalogue file's look every second) runs about as often in each,
  # however slow the machine is to start serve; at least half a second
  # after the last request, so that its log line is written.
  sleep "$(awk -v since="$started" -v now="$(date +%s.%N)" -v lasting="$lifetime" 'BEGIN { s = lasting - (now - since); print (s > 0.5 ? s : 0.5) }')"
  kill -TERM $pid
  wait $pid || true
  pid=
  go tool covdata textfmt -i="$dir" -o "$work/$n.out"
}
# Both runs serve one file imported beforehand: serve --dev would import
# the sample afresh, and an import's sorts compare a number of times that
# changes from run to run.
GOCOVERDIR=$work "$work/catalogd" import --db "$work/catalog.db" data/sample.json data/names.json > /dev/null
# Each serve lasts this many seconds from its start to SIGTERM, or half
# a second past its last request when that is later.
lifetime=2
run 1
run 11

# The access log's lines are written by its flusher, every 100 ms, not by
# the request: on a slow machine each request's line may get a write of
# its own, and the flusher would seem to run once a request.
flusher='internal/logbuf/logbuf.go flush
internal/logbuf/logbuf.go tick
internal/logbuf/logbuf.go write'

# A profile whose count is 1 where a block ran at least ten times more in
# the second run, for go tool cover to name the functions.
awk 'FNR == 1 { next }
     NR == FNR { first[$1] += $3; next }
     { second[$1] += $3; stmts[$1] = $2 }
     END { print "mode: set"; for (b in second) print b, stmts[b], (second[b] - first[b] >= 10) ? 1 : 0 }' \
  "$work/1.out" "$work/11.out" > "$work/path.out"
# file:line name, a function a line; then file name, sorted.
go tool cover -func="$work/path.out" |
  awk '$1 != "total:" && $NF != "0.0%" { sub(/^github.com\/catalogd\/catalogd\//, "", $1); sub(/:$/, "", $1); print $1, $2 }' |
  sort -u | awk '{ sub(/:[0-9]+$/, "", $1); print }' | sort |
  grep -vxF "$flusher" > "$work/funcs"
count="$(wc -l < "$work/funcs") functions in $(cut -d' ' -f1 "$work/funcs" | sort -u | wc -l) files"
cat "$work/funcs"
echo "$count"

if [[ -n ${CHECK_DOC:-} ]]; then
  list=$(sed -n "/^<details><summary>${CHECK_LIST:?CHECK_LIST names the list}: /,/^<\/details>/p" "$CHECK_DOC")
  [[ -n $list ]] || fail "$CHECK_DOC has no list \"$CHECK_LIST\""
  missing=
  grep -qF "<summary>$CHECK_LIST: $count</summary>" <<< "$list" || missing+=$'\n'"  the count: $count"
  while read -r file fn; do
    line=$(grep -F "\`$file\`:" <<< "$list" || true)
    grep -qE "\`([A-Za-z]+\.)?$fn\`" <<< "$line" || missing+=$'\n'"  $file $fn"
  done < "$work/funcs"
  [[ -z $missing ]] || fail "$CHECK_DOC, list \"$CHECK_LIST\", lacks what $method $path runs:$missing"
fi
