// Package catalogbench holds the benchmarks of the catalogue's read paths
// (lookups, pages, the list of sets, search, open and the first export),
// through the exported API of catalog/store, over the real catalogue of
// testdata and over catalogues of the generator of any size, or a file
// imported before (-bench-db). docs/BENCHMARKS.md has their figures:
//
//	go test -C tools ./bench/catalog -run '^$' -bench SearchGenerated -args -gen-cards=1000000 -gen-distinct
//	go test -C tools ./bench/catalog -run '^$' -bench 'AppendCardReal|SetCardsReal|SearchReal' -benchmem
package catalogbench
