#!/usr/bin/env bash
# Serves a catalogue file that is already imported (the load harness makes
# its own), times how soon it is ready, then sends a bounded number of
# distinct requests of every route on 127.0.0.1 while sampling serve's
# anonymous memory (RssAnon). docs/BENCHMARKS.md, "Serving ten million
# cards", has its figures.
#
# usage: internal/bench/servefile.sh CATALOG.db SAMPLE.tsv [REQUESTS] [CONNS]
#
# SAMPLE.tsv has a card a line: id, name and set code, tab-separated, for
# instance every 997th card of the snapshot the catalogue was imported from:
#
#   awk 'NR%997==0 && /"setCode"/ {match($0,/"id":"[^"]*"/); id=substr($0,RSTART+6,RLENGTH-7);
#        match($0,/"name":"[^"]*"/); nm=substr($0,RSTART+8,RLENGTH-9);
#        match($0,/"setCode":"[^"]*"/); sc=substr($0,RSTART+11,RLENGTH-12); print id "\t" nm "\t" sc}' snapshot.json
#
# CATALOGD names the binary (default: catalogd on the PATH).
set -euo pipefail
db=$1; sample=$2; n=${3:-20000}; conns=${4:-32}
bin=${CATALOGD:-catalogd}
port=18431
start=$(date +%s%N)
log=$(mktemp)
$bin serve --dev --db "$db" --addr 127.0.0.1:$port > "$log" 2>&1 &
pid=$!
urls=$(mktemp)
mem=$(mktemp)
trap 'kill $pid 2>/dev/null; rm -f "$log" "$urls" "$mem"' EXIT
until curl -sf -o /dev/null http://127.0.0.1:$port/readyz; do sleep 0.005; done
ready=$(( ($(date +%s%N) - start) / 1000000 ))
echo "ready in ${ready} ms (process start to /readyz 200, including the dev issuer's key)"
token=$(grep -o 'Bearer [A-Za-z0-9._-]*' "$log" | head -1 | cut -d' ' -f2)
base=http://127.0.0.1:$port/api/v1/catalog
awk -F'\t' -v base="$base" -v n="$n" 'BEGIN{srand(7)} {
  if ($3 != "") { cards[++c]=$1; names[c]=$2; sets[++s]=$3 } }
  END { for (i=0;i<n;i++) { r=i%4;
    if (r==0) print base "/cards/" cards[int(rand()*c)+1];
    else if (r==1) print base "/sets/" sets[int(rand()*s)+1] "/cards?page=" int(rand()*3)+1;
    else if (r==2) { split(names[int(rand()*c)+1], w, " "); q=w[int(rand()*length(w))+1]; gsub(/[^A-Za-z0-9]/,"",q); if (length(q)<2) q=q "ar"; print base "/search?q=" q "&limit=" int(rand()*25)+1 }
    else print base "/cards/" cards[int(rand()*c)+1] } }' "$sample" > "$urls"
( while kill -0 $pid 2>/dev/null; do a=$(awk '/RssAnon/{print $2}' /proc/$pid/status); echo $a; sleep 0.05; done ) > "$mem" &
sampler=$!
t0=$(date +%s%N)
xargs -P "$conns" -n 1 curl -s -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $token" < "$urls" | sort | uniq -c
t1=$(date +%s%N)
kill $sampler 2>/dev/null || true
peak=$(sort -n "$mem" | tail -1)
echo "$n requests over $conns connections in $(( (t1-t0)/1000000 )) ms; peak RssAnon $((peak/1024)) MiB"
