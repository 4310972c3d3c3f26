package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// memCgroup is a memory cgroup with a limit, made for the catalogd that
// serves the load: the limit a small VM or a container's memory limit puts
// on it. The kernel charges a cgroup for its processes' memory and for the
// page cache they read in, and reclaims that cache, mapped or not, to keep
// the whole under the limit; a process that cannot fit is killed.
type memCgroup struct {
	dir   string
	limit int64
	v2    bool
}

// cgroupRoot is where cgroup file systems are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// newMemCgroup makes a memory cgroup limited to limit bytes, without swap:
// under the unified hierarchy's root when the memory controller is there
// (cgroup v2), else under this process's own v1 memory cgroup. It needs
// root on a host's own hierarchy; inside a container or a delegated
// subtree it fails with the kernel's reason.
func newMemCgroup(limit int64) (*memCgroup, error) {
	name := "catalogd-load-" + strconv.Itoa(os.Getpid())
	bytes := strconv.FormatInt(limit, 10)
	var cg *memCgroup
	var settings []cgroupSetting
	if controllers, err := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil && slices.Contains(strings.Fields(string(controllers)), "memory") {
		// The v2 root may hold processes beside child cgroups, so the new
		// one goes there whichever cgroup this process is in.
		if err := writeControl(filepath.Join(cgroupRoot, "cgroup.subtree_control"), "+memory"); err != nil {
			return nil, fmt.Errorf("memory cgroup: enable the memory controller: %w", err)
		}
		cg = &memCgroup{dir: filepath.Join(cgroupRoot, name), limit: limit, v2: true}
		settings = []cgroupSetting{{"memory.max", bytes, false}, {"memory.swap.max", "0", true}}
	} else {
		self, err := procfs.Self()
		if err != nil {
			return nil, fmt.Errorf("memory cgroup: %w", err)
		}
		own, err := ownV1Cgroup(self, "memory")
		if err != nil {
			return nil, fmt.Errorf("memory cgroup: %w", err)
		}
		cg = &memCgroup{dir: filepath.Join(cgroupRoot, "memory", own, name), limit: limit}
		settings = []cgroupSetting{{"memory.limit_in_bytes", bytes, false}}
		if swapOn() {
			// Memory and swap together may not be set below memory
			// alone, so memory comes first. Without swap there is nothing
			// to cap, and the cap would cost the count of limit hits: a
			// v1 cgroup with it counts them in neither failcnt (seen on
			// Linux 6.18).
			settings = append(settings, cgroupSetting{"memory.memsw.limit_in_bytes", bytes, true})
		}
	}
	if err := cg.create(settings); err != nil {
		return nil, err
	}
	// The counters the report needs are read once now, so that a kernel
	// without one fails the run before it starts, not after.
	if _, err := cg.use(); err != nil {
		cg.remove()
		return nil, fmt.Errorf("memory cgroup: %w", err)
	}
	return cg, nil
}

// swapOn reports whether the machine has swap space: /proc/swaps lists
// more than its header.
func swapOn() bool {
	b, err := os.ReadFile("/proc/swaps")
	return err == nil && strings.Count(strings.TrimSpace(string(b)), "\n") > 0
}

// cgroupSetting is a control file of a cgroup and the value written to it;
// an optional one is skipped where the kernel does not have it (swap
// settings without swap accounting).
type cgroupSetting struct {
	file, value string
	optional    bool
}

// create makes the cgroup and writes its settings in order.
func (cg *memCgroup) create(settings []cgroupSetting) error {
	if err := os.Mkdir(cg.dir, 0o755); err != nil {
		return fmt.Errorf("memory cgroup: %w", err)
	}
	for _, set := range settings {
		err := writeControl(filepath.Join(cg.dir, set.file), set.value)
		if set.optional && errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			cg.remove()
			return fmt.Errorf("memory cgroup: set %s: %w", set.file, err)
		}
	}
	return nil
}

// writeControl writes value to a cgroup control file. It never creates the
// file: in a cgroup file system creating one fails with "permission
// denied", which would hide that the kernel does not have it.
func writeControl(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ownV1Cgroup finds the cgroup of process p in the v1 hierarchy of
// controller.
func ownV1Cgroup(p procfs.Proc, controller string) (string, error) {
	groups, err := p.Cgroups()
	if err != nil {
		return "", err
	}
	for _, g := range groups {
		if slices.Contains(g.Controllers, controller) {
			return g.Path, nil
		}
	}
	return "", fmt.Errorf("process %d: no %s controller (cgroup v1 or v2 with it mounted is needed)", p.PID, controller)
}

// procs is the file a process id is written into to move it into the
// cgroup.
func (cg *memCgroup) procs() string { return filepath.Join(cg.dir, "cgroup.procs") }

// cgroupUse is what a cgroup's counters say after a run.
type cgroupUse struct {
	limit     int64 // the cgroup's, bytes
	peak      int64 // highest charge: memory, page cache and kernel memory
	oomKills  int64 // processes the limit killed
	limitHits int64 // times the charge reached the limit (v1 with swap capped: may stay 0)
}

// use reads the cgroup's peak charge and how often the limit was met.
func (cg *memCgroup) use() (cgroupUse, error) {
	u := cgroupUse{limit: cg.limit}
	var err error
	if cg.v2 {
		if u.peak, err = readInt(filepath.Join(cg.dir, "memory.peak")); err != nil {
			return u, err
		}
		events := filepath.Join(cg.dir, "memory.events")
		if u.limitHits, err = readKey(events, "max"); err != nil {
			return u, err
		}
		u.oomKills, err = readKey(events, "oom_kill")
		return u, err
	}
	if u.peak, err = readInt(filepath.Join(cg.dir, "memory.max_usage_in_bytes")); err != nil {
		return u, err
	}
	if u.limitHits, err = readInt(filepath.Join(cg.dir, "memory.failcnt")); err != nil {
		return u, err
	}
	u.oomKills, err = readKey(filepath.Join(cg.dir, "memory.oom_control"), "oom_kill")
	return u, err
}

// remove deletes the cgroup; it must hold no process by then.
func (cg *memCgroup) remove() error { return os.Remove(cg.dir) }

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// readKey reads the value of key from a file of "key value" lines.
func readKey(path, key string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: %s: %w", path, line, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s: no %s", path, key)
}

// evictPageCache drops the file's pages from the page cache, so that a
// process in a memory cgroup reads them in again and is charged for them:
// the kernel charges a page to the cgroup that first read it, here the
// build or the import, which run outside. The file is synced first, since
// only clean pages can go, and so can only pages that no process maps; it
// is an error if any stay, as every page does on tmpfs.
func evictPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("evict %s from the page cache: %w", path, err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("evict %s from the page cache: %w", path, err)
	}
	n, err := residentPages(f)
	if err != nil {
		return fmt.Errorf("evict %s from the page cache: %w", path, err)
	}
	if n > 0 {
		return fmt.Errorf("evict %s from the page cache: %d pages stay (dirty, mapped by a process, or on a file system kept in memory)", path, n)
	}
	return nil
}

// residentPages counts the pages of f in the page cache. Mapping the file
// and asking mincore reads none of it in.
func residentPages(f *os.File) (int, error) {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return 0, err
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, err
	}
	defer unix.Munmap(data)
	page := os.Getpagesize()
	vec := make([]byte, (len(data)+page-1)/page)
	// x/sys/unix has no wrapper for mincore(2).
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&data[0])), uintptr(len(data)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		return 0, fmt.Errorf("mincore: %w", errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n, nil
}
