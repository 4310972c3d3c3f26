// Package catalogdbench holds the benchmarks of catalogd as a process, on
// catalogues of the generator: the import command (its time, and its peak
// memory read from /proc) and a partner's sync against catalogd serve (the
// export, imports that touch some of the cards, and the pages of changes).
// catalogd is built once for the run from the product module, as it ships.
// docs/BENCHMARKS.md has their figures:
//
//	go test -C tools ./bench/catalogd -run '^$' -bench ImportCommand -benchtime 1x -timeout 0 -args -import-cards 1000000
//	go test -C tools ./bench/catalogd -run '^$' -bench Sync -benchtime 3x -args -sync-cards 100000
package catalogdbench
