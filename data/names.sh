#!/usr/bin/env bash
# Writes data/names.json, the name groups of every Pokémon species in every
# language the npm package "pokemon" gives (MIT; its data/*.json, one name
# per species and language, in national Pokédex order). Each group holds a
# species' distinct names, in the order of the languages below; the file is
# a snapshot of its own ({"sets": [], "cards": [], "names": [...]}), which
# `catalogd import` takes beside a catalogue (README, Names in every
# language).
#
#   data/names.sh           # needs node and npm, and the npm registry
set -euo pipefail
cd "$(dirname "$0")"

version=3.3.1
languages=(en ja zh-hant zh-hans ko fr de es ru th)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "pokemon@$version" >/dev/null && tar xzf "pokemon-$version.tgz")

node - "$work/package/data" "${languages[@]}" >names.json.new <<'JS'
const fs = require("fs");
const [dir, ...languages] = process.argv.slice(2);
const byLanguage = languages.map(l => JSON.parse(fs.readFileSync(`${dir}/${l}.json`, "utf8")));
const species = byLanguage[0].length;
for (const [i, names] of byLanguage.entries()) {
  if (names.length !== species) throw new Error(`${languages[i]}: ${names.length} species, ${languages[0]} has ${species}`);
}
const groups = [];
for (let s = 0; s < species; s++) {
  const group = [...new Set(byLanguage.map(names => names[s].trim()).filter(n => n !== ""))];
  if (group.length >= 2) groups.push(group);
}
process.stdout.write('{"sets":[],"cards":[],"names":[\n' + groups.map(g => JSON.stringify(g)).join(",\n") + "\n]}\n");
JS
mv names.json.new names.json
echo "data/names.json: $(grep -c '^\[' names.json) groups"
