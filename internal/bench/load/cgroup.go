package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

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

// newMemCgroup makes a memory cgroup limited to limit bytes, under the
// unified hierarchy's root when the memory controller is there (cgroup v2),
// else under this process's own v1 memory cgroup. It needs the right to
// create one (root, or a delegated subtree).
func newMemCgroup(limit int64) (*memCgroup, error) {
	name := "catalogd-load-" + strconv.Itoa(os.Getpid())
	if controllers, err := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil && hasField(string(controllers), "memory") {
		// Processes may sit in the v2 root beside child cgroups, so the
		// new one can go there whichever cgroup this process is in.
		if err := os.WriteFile(filepath.Join(cgroupRoot, "cgroup.subtree_control"), []byte("+memory"), 0); err != nil {
			return nil, fmt.Errorf("memory cgroup: enable the memory controller: %w", err)
		}
		cg := &memCgroup{dir: filepath.Join(cgroupRoot, name), limit: limit, v2: true}
		if err := cg.make(map[string]string{"memory.max": strconv.FormatInt(limit, 10), "memory.swap.max": "0"}); err != nil {
			return nil, err
		}
		return cg, nil
	}
	own, err := ownV1Cgroup("/proc/self/cgroup", "memory")
	if err != nil {
		return nil, fmt.Errorf("memory cgroup: %w", err)
	}
	cg := &memCgroup{dir: filepath.Join(cgroupRoot, "memory", own, name), limit: limit}
	if err := cg.make(map[string]string{"memory.limit_in_bytes": strconv.FormatInt(limit, 10)}); err != nil {
		return nil, err
	}
	return cg, nil
}

// make creates the cgroup and writes its settings; a setting whose file the
// kernel does not have (memory.swap.max without swap accounting) is skipped.
func (cg *memCgroup) make(settings map[string]string) error {
	if err := os.Mkdir(cg.dir, 0o755); err != nil {
		return fmt.Errorf("memory cgroup: %w", err)
	}
	for file, value := range settings {
		err := os.WriteFile(filepath.Join(cg.dir, file), []byte(value), 0)
		if errors.Is(err, os.ErrNotExist) && file != "memory.max" && file != "memory.limit_in_bytes" {
			continue
		}
		if err != nil {
			cg.remove()
			return fmt.Errorf("memory cgroup: set %s: %w", file, err)
		}
	}
	return nil
}

// ownV1Cgroup finds this process's cgroup in the v1 hierarchy of
// controller, from a /proc/PID/cgroup file ("4:memory:/some/path").
func ownV1Cgroup(path, controller string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), ":", 3)
		if len(fields) == 3 && hasField(strings.ReplaceAll(fields[1], ",", " "), controller) {
			return fields[2], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: no %s controller (cgroup v1 or v2 with it mounted is needed)", path, controller)
}

func hasField(s, field string) bool {
	for f := range strings.FieldsSeq(s) {
		if f == field {
			return true
		}
	}
	return false
}

// procs is the file a process id is written into to move it into the
// cgroup.
func (cg *memCgroup) procs() string { return filepath.Join(cg.dir, "cgroup.procs") }

// cgroupUse is what a cgroup's counters say after a run.
type cgroupUse struct {
	peak      int64 // highest charge: memory, page cache and kernel memory
	oomKills  int64 // processes the limit killed
	limitHits int64 // times the charge reached the limit
}

// use reads the cgroup's peak charge and how often the limit was met.
func (cg *memCgroup) use() (cgroupUse, error) {
	var u cgroupUse
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
// import, which runs outside. Only clean pages that no process maps can go;
// it is an error if any stay, as every page does on tmpfs.
func evictPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
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
