// Package store reads the catalogue file: one generation of the catalogue
// in a bbolt file, in the layout of internal/layout, which package build
// writes. Open reads it, for the lookups, pages, search, autocomplete,
// changes and export of the API; Live is the file being served, swapped
// when a new import lands. Its records are those of package catalog.
package store
