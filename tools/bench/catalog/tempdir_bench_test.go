package catalogbench

import "os"

// osMkdirTemp makes a directory for files shared by several benchmarks; the
// system removes it with the rest of its temporary files.
func osMkdirTemp() (string, error) { return os.MkdirTemp("", "catalogd-bench-") }
