// Package data holds the sample catalogue built into the binary, so that
// `catalogd serve --dev` answers with real records and no setup.
//
// sample.json is a valid snapshot: five sets of each zone with all their
// cards, among them a set without cards and the code SV1a used in both jp and
// chn. names.json is a snapshot of name groups alone: every Pokémon species
// in ten languages, made by names.sh.
package data

import _ "embed"

//go:embed sample.json
var sample []byte

// SampleName is the file name the sample is imported under.
const SampleName = "sample.json"

// Sample returns the built-in sample snapshot. The caller must not modify it.
func Sample() []byte { return sample }

//go:embed names.json
var names []byte

// NamesName is the file name the name groups are imported under.
const NamesName = "names.json"

// Names returns the built-in name groups, a snapshot with no sets and no
// cards. The caller must not modify it.
func Names() []byte { return names }
