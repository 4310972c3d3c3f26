#!/usr/bin/env bash
# Writes data/names.json, the name groups of every Pokémon species in every
# language the npm package "pokemon" gives (MIT; its data/*.json, one name
# per species and language, in national Pokédex order). Each group holds a
# species' distinct names, in the order of the languages below; the file is
# a snapshot of its own ({"sets": [], "cards": [], "names": [...]}), which
# `catalogd import` takes beside a catalogue (README, Names in every
# language).
#
# The package's Chinese names are often older than those printed on the
# cards (帕路奇犽 for Palkia, printed 帕路奇亞), so each group also takes the
# Chinese names the real catalogue prints (testdata/catalogue-real.json.gz,
# from TCGdex, MIT): a card printed in both the jp and chn zones, under one
# set code and number, pairs its Japanese and Chinese names. A Chinese name
# in no group joins the group whose Japanese name it is paired with on at
# least two cards and on more than half of its cards: a single pairing may
# be two different cards numbered alike (a Poké Ball beside Rotom).
# A name the real catalogue prints with white space that its group's name
# has not (`Nidoran ♀` beside `Nidoran♀`) joins that group too.
#
#   data/names.sh           # needs node and npm, and the npm registry
set -euo pipefail
cd "$(dirname "$0")"

version=3.3.1
languages=(en ja zh-hant zh-hans ko fr de es ru th)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "pokemon@$version" >/dev/null && tar xzf "pokemon-$version.tgz")

node - "$work/package/data" ../testdata/catalogue-real.json.gz "${languages[@]}" >names.json.new <<'JS'
const fs = require("fs");
const zlib = require("zlib");
const [dir, real, ...languages] = process.argv.slice(2);
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
const { cards } = JSON.parse(zlib.gunzipSync(fs.readFileSync(real)));
const japanese = new Map(cards.filter(c => c.zone === "jp").map(c => [c.setCode + " " + c.number, c.name]));
// groupsBy maps the key of each name to its group's index; -1 if the key
// is in several groups.
const groupsBy = key => {
  const m = new Map();
  groups.forEach((g, i) => g.forEach(n => m.set(key(n), m.has(key(n)) && m.get(key(n)) !== i ? -1 : i)));
  return m;
};
const nfkc = n => n.normalize("NFKC");
const groupOf = groupsBy(nfkc);
const pairings = new Map(); // a Chinese name to its cards and, by group, those paired with the group
for (const c of cards.filter(c => c.zone === "chn")) {
  const jp = japanese.get(c.setCode + " " + c.number);
  if (jp === undefined) continue;
  const p = pairings.get(c.name) ?? { cards: 0, byGroup: new Map() };
  pairings.set(c.name, p);
  p.cards++;
  const g = groupOf.get(nfkc(jp)) ?? -1;
  if (g >= 0) p.byGroup.set(g, (p.byGroup.get(g) ?? 0) + 1);
}
for (const [name, p] of pairings) {
  if (groupOf.has(nfkc(name))) continue;
  for (const [g, n] of p.byGroup) if (n >= 2 && 2 * n > p.cards) groups[g].push(name);
}
const spaceless = n => nfkc(n).replace(/\s+/g, "");
const groupWithoutSpaces = groupsBy(spaceless);
for (const name of new Set(cards.map(c => c.name))) {
  if (groupOf.has(nfkc(name)) || spaceless(name) === nfkc(name)) continue;
  const g = groupWithoutSpaces.get(spaceless(name)) ?? -1;
  if (g >= 0) groups[g].push(name);
}
process.stdout.write('{"sets":[],"cards":[],"names":[\n' + groups.map(g => JSON.stringify(g)).join(",\n") + "\n]}\n");
JS
mv names.json.new names.json
echo "data/names.json: $(grep -c '^\[' names.json) groups"
