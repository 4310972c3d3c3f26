// Package importerbench holds the benchmark of the importer, in process,
// on a snapshot of the generator: every step of a real import, from the
// reading of the snapshot to the rename of the new file.
//
//	go test -C tools ./bench/importer -run '^$' -bench Import -benchmem -args -import-cards=1000000
package importerbench
