//go:build !linux

package store

// readAhead is readahead_linux.go's, which elsewhere leaves the kernel to
// read as it will.
func (l *storedList) readAhead([]byte) {}
