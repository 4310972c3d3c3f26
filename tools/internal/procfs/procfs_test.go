package procfs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// TestStatUsage reads a process's processor time and major faults from a
// /proc/PID/stat laid out in a directory of its own.
func TestStatUsage(t *testing.T) {
	usageOf := func(stat string) (Usage, error) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "4242"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "4242", "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		fs, err := procfs.NewFS(dir)
		if err != nil {
			t.Fatal(err)
		}
		return usage(fs, 4242)
	}
	// A whole line as Linux writes it, with a command name holding a space
	// and a parenthesis; minflt 100, majflt 7, utime 250, stime 50.
	stat := "4242 (cat (x) y) S 1 4242 4242 0 -1 4194304 100 0 7 0 250 50 0 0 20 0 1 0 1000 1000000 200 18446744073709551615 " +
		"94643156889600 94643156909481 140723116884208 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 94643156925488 94643156927104 94643167117312 140723116890817 140723116890837 140723116890837 140723116892139 0\n"
	got, err := usageOf(stat)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Usage{CPU: 3 * time.Second, MajorFaults: 7, MinorFaults: 100}); got != want {
		t.Fatalf("usage = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "4242 cat S 1", "4242 (cat) S 1 2 3", "4242 (cat) S 1 4242 4242 0 -1 4194304 100 0 0 0 x 50 0"} {
		if _, err := usageOf(bad); err == nil {
			t.Fatalf("usage(%q) did not fail", bad)
		}
	}
}

// TestReadSelf reads this process and this machine, as the harnesses do;
// they run only on Linux, where /proc is always there.
func TestReadSelf(t *testing.T) {
	if d, err := CPU(os.Getpid()); err != nil || d < 0 {
		t.Fatalf("CPU = %s, %v", d, err)
	}
	if busy, err := CPUBusy("0", "0"); err != nil || len(busy) != 2 || busy[0] != busy[1] {
		t.Fatalf("CPUBusy = %v, %v; want the same two figures of one reading", busy, err)
	}
	if _, err := CPUBusy("9999"); err == nil {
		t.Error("CPUBusy of a CPU that does not exist: no error")
	}
	if avg, err := LoadAvg(); err != nil || avg[2] == "" {
		t.Fatalf("LoadAvg = %q, %v", avg, err)
	}
	if m, err := ReadMem(os.Getpid()); err != nil || m.RSS <= 0 {
		t.Fatalf("ReadMem = %+v, %v", m, err)
	}
}

// TestImportEnv checks that the caller's catalogd settings do not reach a
// harness's import.
func TestImportEnv(t *testing.T) {
	t.Setenv("CATALOGD_DRY_RUN", "true")
	t.Setenv("LOAD_TEST_KEEP", "1")
	cmd := Import(context.Background(), "/bin/catalogd", "cat.db", "a.json", "b.json")
	if want := []string{"/bin/catalogd", "import", "--db", "cat.db", "a.json", "b.json"}; !slices.Equal(cmd.Args, want) {
		t.Fatalf("args %q, want %q", cmd.Args, want)
	}
	if cmd.Env == nil {
		t.Fatal("the import inherits the whole environment")
	}
	for _, kv := range cmd.Env {
		if strings.HasPrefix(kv, "CATALOGD_") {
			t.Fatalf("the import gets %s", kv)
		}
	}
	if !slices.Contains(cmd.Env, "LOAD_TEST_KEEP=1") {
		t.Fatal("the import lost a variable that is not catalogd's")
	}
}

// TestOpenAndMappedFiles checks the counts on this process, with a file it
// opened and mapped.
func TestOpenAndMappedFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	if err := os.WriteFile(path, make([]byte, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := syscall.Mmap(int(f.Fd()), 0, 8192, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(data)
	fds, open, err := OpenFiles(os.Getpid(), path)
	if err != nil || open != 1 || fds < 2 {
		t.Fatalf("OpenFiles = %d, %d, %v; want the file once among more descriptors", fds, open, err)
	}
	if n, err := MappedFiles(os.Getpid(), path); err != nil || n != 1 {
		t.Fatalf("MappedFiles = %d, %v; want 1", n, err)
	}
	if n, err := MappedFiles(os.Getpid(), path+".other"); err != nil || n != 0 {
		t.Fatalf("MappedFiles of another name = %d, %v; want 0", n, err)
	}
}

// TestSampleMem samples this process while it holds more memory than
// before, and checks that the peak saw it.
func TestSampleMem(t *testing.T) {
	before, err := ReadMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	s := SampleMem(os.Getpid())
	held := make([]byte, 64<<20)
	for i := range held {
		held[i] = 1
	}
	time.Sleep(50 * time.Millisecond)
	peak := s.Stop()
	if peak.Anon < before.Anon+32<<20 || peak.RSS < peak.Anon {
		t.Fatalf("peak %+v after touching 64 MiB, before %+v", peak, before)
	}
	held[0] = 0
}

// TestModuleDirs checks that the harnesses find both modules from within
// the tools module: the product, where catalogd is built, through the
// replace directive, and the tools module itself.
func TestModuleDirs(t *testing.T) {
	for path, want := range map[string]string{Product: "module " + Product + "\n", "": "module " + Product + "/tools\n"} {
		dir, err := moduleDir(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(mod), want) {
			t.Errorf("module %q: %s/go.mod starts %q, want %q", path, dir, mod[:min(len(mod), len(want))], want)
		}
	}
}
