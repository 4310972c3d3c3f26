package layout

// The layout of an export needs the bytes of each set's cards, and bbolt
// cannot sum values without reading them: a walk of the cards reads the
// whole cards bucket, 80 s at ten million cards from a cold page cache, all
// before the first byte of the first download of a generation
// (docs/BENCHMARKS.md, "The first download of a generation"). So the
// import stores them:
//
//	setBytes   set prefix -> 8-byte big-endian sum of the lengths of the
//	           set's cards' values in the cards bucket
//
// Like the marks of pages (pages.go), the bucket is optional and not part
// of FormatVersion: the sets of a file without it, or missing from it, are
// measured by a walk of their cards. A size that no set's cards could take
// fails catalog/store's Export; one that does not match the set's cards
// fails the download that reads that set (its ExportReader), and does not shift the bytes after
// it.

// BucketSetBytes holds the sizes above.
var BucketSetBytes = []byte("setBytes")
