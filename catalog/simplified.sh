#!/usr/bin/env bash
# Writes catalog/simplified.txt, the simplified form of each traditional
# Chinese character that Fold maps (docs/CONTRACT.md, Search: Folding):
# OpenCC's table of characters, traditional to simplified
# (dictionary/TSCharacters.txt of the Go module
# github.com/longbridgeapp/opencc, which ships OpenCC's dictionaries;
# Apache License 2.0). Where OpenCC gives several simplified forms, the
# first is its choice and ours; a form that is itself traditional is
# followed to its end, and a character that maps to itself is left out,
# so that folding twice changes nothing.
#
#   catalog/simplified.sh       # needs the Go module proxy
set -euo pipefail
cd "$(dirname "$0")"

module=github.com/longbridgeapp/opencc
version=v0.3.13

# Outside any module, so that no go.mod takes the download.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dir=$(cd "$work" && go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
table=$dir/dictionary/TSCharacters.txt
[[ -f $table ]] || { echo "simplified.sh: no $table" >&2; exit 1; }

{
  echo "# The simplified form of each traditional Chinese character, one pair a"
  echo "# line, from OpenCC's TSCharacters.txt ($module $version,"
  echo "# Apache License 2.0, (c) the OpenCC authors). Written by simplified.sh."
  awk -F'\t' '
    { split($2, to, " "); first[$1] = to[1]; order[n++] = $1 }
    END {
      for (i = 0; i < n; i++) {
        k = order[i]; v = first[k]
        for (hops = 0; (v in first) && first[v] != v && hops < 8; hops++) v = first[v]
        if (v != k) print k "\t" v
      }
    }' "$table"
} > simplified.txt.new
mv simplified.txt.new simplified.txt
echo "catalog/simplified.txt: $(grep -vc '^#' simplified.txt) characters"
