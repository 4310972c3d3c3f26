// Package store is the catalogue file: one generation of the catalogue in
// a bbolt file (its layout is in layout.go). Open reads it, for the
// lookups, pages, search, autocomplete, changes and export of the API;
// Create and Writer build it in bounded memory, as the import does; Live
// is the file being served, swapped when a new import lands. Its records
// are those of package catalog.
package store
