// Package build writes a catalogue file, as the import does: Create
// starts one, the Writer takes the sets and cards as they are decoded, and
// Finish writes what can only be written once every record is known (the
// sets' totals and lists, the search index, autocomplete's names, the
// changes since the catalogue it replaces), all in bounded memory: what
// grows with the catalogue goes through sorted runs on disk (extsort.go).
// The file's layout is internal/layout's; catalog/store reads it.
package build
