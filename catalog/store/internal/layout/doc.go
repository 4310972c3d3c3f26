// Package layout is the catalogue file's layout: its buckets, the keys in
// them and the encodings of their values, what a file says of itself
// (Info), and the constants both sides of the file agree on: the import
// writes a file in this layout, and catalog/store reads it.
//
// What is kept here is kept in every file written: changing the encoding
// of a bucket that every file has means a new FormatVersion (the optional
// ones say how they do without it). ErrDamaged, which both sides return
// for a file that is not as written, is here too.
package layout
