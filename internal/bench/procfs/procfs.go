// Package procfs reads what the benchmark harnesses measure of the
// processes they start, from Linux's /proc, and prepares their environment.
package procfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Mem is the resident memory of a process (/proc/PID/status): all of it,
// and its anonymous and file-backed parts, in bytes. A catalogue file
// mapped into memory counts in File for the pages that were read.
type Mem struct {
	RSS, Anon, File int64
}

// Max keeps the larger of each figure.
func (m *Mem) Max(o Mem) {
	m.RSS, m.Anon, m.File = max(m.RSS, o.RSS), max(m.Anon, o.Anon), max(m.File, o.File)
}

// ReadMem reads the resident memory of process pid.
func ReadMem(pid int) (Mem, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	b, err := os.ReadFile(path)
	if err != nil {
		return Mem{}, err
	}
	var m Mem
	for line := range strings.SplitSeq(string(b), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch name {
		case "VmRSS":
			dst = &m.RSS
		case "RssAnon":
			dst = &m.Anon
		case "RssFile":
			dst = &m.File
		default:
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return Mem{}, fmt.Errorf("%s: %s: %w", path, line, err)
		}
		*dst = kb << 10
	}
	if m.RSS == 0 {
		return Mem{}, fmt.Errorf("%s: no VmRSS", path)
	}
	return m, nil
}

// ChildEnv is this process's environment without catalogd's own settings
// (CATALOGD_*), which would add to the flags a harness gives, and without
// the variables named by the other prefixes given.
func ChildEnv(dropPrefixes ...string) []string {
	drop := append([]string{"CATALOGD_"}, dropPrefixes...)
	var env []string
next:
	for _, kv := range os.Environ() {
		for _, p := range drop {
			if strings.HasPrefix(kv, p) {
				continue next
			}
		}
		env = append(env, kv)
	}
	return env
}
