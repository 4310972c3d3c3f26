package procfs

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStatCPU(t *testing.T) {
	// A command name with a space and a parenthesis; utime 250, stime 50.
	stat := "4242 (cat (x) y) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 1 0 1000 1000000 200 18446744073709551615\n"
	got, err := statCPU([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Fatalf("statCPU = %s, want %s", got, want)
	}
	for _, bad := range []string{"", "4242 cat S 1", "4242 (cat) S 1 2 3", "4242 (cat) S 1 4242 4242 0 -1 4194304 100 0 0 0 x 50 0"} {
		if _, err := statCPU([]byte(bad)); err == nil {
			t.Fatalf("statCPU(%q) did not fail", bad)
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
