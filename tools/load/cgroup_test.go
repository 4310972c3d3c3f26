package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

func TestOwnV1Cgroup(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "7"), 0o755); err != nil {
		t.Fatal(err)
	}
	content := "12:pids:/user.slice\n4:cpu,cpuacct:/a\n3:memory:/process_api/x\n0::/user.slice/session-1.scope\n"
	if err := os.WriteFile(filepath.Join(dir, "7", "cgroup"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := procfs.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	proc, err := fs.Proc(7)
	if err != nil {
		t.Fatal(err)
	}
	for controller, want := range map[string]string{"memory": "/process_api/x", "cpuacct": "/a", "pids": "/user.slice"} {
		got, err := ownV1Cgroup(proc, controller)
		if err != nil || got != want {
			t.Errorf("ownV1Cgroup(%s) = %q, %v; want %q", controller, got, err, want)
		}
	}
	// "cpu" is a prefix of "cpuacct" and "cpu,cpuacct" names both; "mem" names neither.
	if got, err := ownV1Cgroup(proc, "cpu"); err != nil || got != "/a" {
		t.Errorf("ownV1Cgroup(cpu) = %q, %v; want /a", got, err)
	}
	if got, err := ownV1Cgroup(proc, "mem"); err == nil || !strings.Contains(err.Error(), "no mem controller") {
		t.Errorf("ownV1Cgroup(mem) = %q, %v; want no mem controller", got, err)
	}
}

func TestReadKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.events")
	if err := os.WriteFile(path, []byte("low 0\nhigh 0\nmax 17\noom 1\noom_kill 1\noom_group_kill 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int64{"max": 17, "oom": 1, "oom_kill": 1, "oom_group_kill": 0} {
		if got, err := readKey(path, key); err != nil || got != want {
			t.Errorf("readKey(%s) = %d, %v; want %d", key, got, err, want)
		}
	}
	if _, err := readKey(path, "oom_k"); err == nil {
		t.Error("readKey found a key that is only a prefix of one in the file")
	}
}

// TestEvictPageCache checks that a file just written leaves the page
// cache, which a memory-limited run needs before catalogd starts, and that
// a file whose pages cannot go (on tmpfs) is an error.
func TestEvictPageCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "catalog.db")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if n, err := residentPages(f); err != nil || n != (1<<20)/os.Getpagesize() {
		t.Fatalf("just written: %d of %d pages resident, %v", n, (1<<20)/os.Getpagesize(), err)
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	err = evictPageCache(path)
	n, rerr := residentPages(f)
	if rerr != nil {
		t.Fatal(rerr)
	}
	switch {
	case fs.Type == unix.TMPFS_MAGIC:
		// tmpfs pages live only in memory: they stay, and evict says so.
		if err == nil || n == 0 {
			t.Fatalf("tmpfs: evict = %v with %d pages resident, want an error", err, n)
		}
	case err != nil || n != 0:
		t.Fatalf("evict = %v with %d pages resident, want none", err, n)
	}
	if err := evictPageCache(filepath.Join(dir, "absent")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("evict of a missing file = %v, want not exist", err)
	}
}

// TestCgroupSettings checks how settings are written: in order, never by
// creating a control file, an optional one skipped where the kernel has
// none, a missing required one an error that leaves no cgroup behind.
func TestCgroupSettings(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "memory.max")
	if err := writeControl(missing, "1"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("writeControl of a missing file = %v, want not exist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("writeControl created %s", missing)
	}

	cg := &memCgroup{dir: filepath.Join(dir, "optional")}
	if err := cg.create([]cgroupSetting{{"memory.swap.max", "0", true}}); err != nil {
		t.Fatalf("a missing optional setting: %v", err)
	}
	cg = &memCgroup{dir: filepath.Join(dir, "required")}
	err := cg.create([]cgroupSetting{{"memory.swap.max", "0", true}, {"memory.max", "1", false}})
	if err == nil || !strings.Contains(err.Error(), "set memory.max") {
		t.Fatalf("a missing required setting = %v, want set memory.max", err)
	}
	if _, err := os.Stat(cg.dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a cgroup that could not be set up is left behind: %v", err)
	}
}

// TestStartPinnedInCgroup checks that a server started in a cgroup writes
// its own process id, the one stop and the samplers use, into cgroup.procs
// before it runs.
func TestStartPinnedInCgroup(t *testing.T) {
	cg := &memCgroup{dir: t.TempDir()}
	if err := os.WriteFile(cg.procs(), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	p, err := startPinned(allowedCPU(t), cg, log, "sh", "-c", "echo $$")
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if p.Err() != nil {
		t.Fatalf("exited with %v", p.Err())
	}
	want := strconv.Itoa(p.Pid()) + "\n"
	if b, err := os.ReadFile(cg.procs()); err != nil || string(b) != want {
		t.Errorf("cgroup.procs holds %q, %v; want %q", b, err, want)
	}
	if b, err := os.ReadFile(log.Name()); err != nil || string(b) != want {
		t.Errorf("the server saw itself as %q, %v; want %q", b, err, want)
	}
}
