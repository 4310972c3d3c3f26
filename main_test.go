package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as catalogd: with this variable set, TestMain runs
// the real main, so tests can start, signal and kill real processes.
const beCatalogd = "GO_TEST_BE_CATALOGD"

func TestMain(m *testing.M) {
	if os.Getenv(beCatalogd) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// catalogdCommand is the real program as a child process.
func catalogdCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := endsWithTheTest(exec.Command(exe, args...))
	// Without the CATALOGD_ variables of whoever runs the tests: each test
	// sets its own.
	cmd.Env = append(childEnv(t), beCatalogd+"=1")
	return cmd
}

// runCLI runs the command line in process and returns its exit status and
// output.
func runCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	code := run(context.Background(), args, environ, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

const realCatalogue = "testdata/catalogue-real.json.gz"

// TestImportRealCatalogueAndInfo imports the whole real catalogue and checks
// that info prints the counts per zone the snapshot holds (see
// testdata/README.md).
func TestImportRealCatalogueAndInfo(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "catalog.db")
	code, out, errOut := runCLI(t, nil, "import", "--db", db, realCatalogue)
	if code != exitOK {
		t.Fatalf("import: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(out, "imported 564 sets and 43811 cards") {
		t.Errorf("import output: %q", out)
	}
	code, out, errOut = runCLI(t, nil, "info", "--db", db)
	if code != exitOK {
		t.Fatalf("info: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		`intl\s+218\s+23546`,
		`jp\s+200\s+12781`,
		`chn\s+146\s+7484`,
		`total\s+564\s+43811`,
		`\nname groups:  0\n`,
		`generation:\s+\d{8}T\d{6}Z-[0-9a-f]{8}`,
		`catalogue-real\.json\.gz\s+sha256:9cd6f3b0db578d1bbbb1c858ba1a948e68477232125dab197a656fbbe816445f\s+1114504 bytes`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("info output lacks %s:\n%s", want, out)
		}
	}
}

// TestImportKeepsHistory imports four times into one file with
// CATALOGD_HISTORY=2: the second import changed nothing, the file keeps the
// changes of the last two imports, and info lists the generations a sync
// can start from, the first import's no longer.
func TestImportKeepsHistory(t *testing.T) {
	db := filepath.Join(t.TempDir(), "catalog.db")
	env := map[string]string{"CATALOGD_HISTORY": "2"}
	var gens []string
	for i, in := range []string{"data/sample.json", "data/sample.json", "server/testdata/odd.json", "data/sample.json"} {
		code, out, errOut := runCLI(t, env, "import", "--db", db, in)
		if code != exitOK {
			t.Fatalf("import %d: exit %d\n%s", i, code, errOut)
		}
		gens = append(gens, regexp.MustCompile(`generation (\S+) `).FindStringSubmatch(out)[1])
		if i == 1 && !strings.Contains(out, "0 records changed since generation "+gens[0]) {
			t.Errorf("re-import of the same snapshot: %q", out)
		}
	}
	code, out, errOut := runCLI(t, nil, "info", "--db", db)
	if code != exitOK {
		t.Fatalf("info: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		`changes since \(2 imports kept\):`,
		regexp.QuoteMeta(gens[1]) + `\s+\d+ records changed by the import of ` + regexp.QuoteMeta(gens[2]),
		regexp.QuoteMeta(gens[2]) + `\s+\d+ records changed by the import of ` + regexp.QuoteMeta(gens[3]),
		regexp.QuoteMeta(gens[3]) + `\s+this generation`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("info output lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, gens[0]+" ") {
		t.Errorf("info lists %s, older than the two imports kept:\n%s", gens[0], out)
	}
	if code, _, errOut := runCLI(t, nil, "import", "--db", db, "--history", "-1", "data/sample.json"); code != exitUsage {
		t.Errorf("--history -1: exit %d, want %d\n%s", code, exitUsage, errOut)
	}
	if code, _, errOut := runCLI(t, nil, "import", "--db", db, "-", "data/sample.json", "-"); code != exitUsage || !strings.Contains(errOut, "standard input is one snapshot") {
		t.Errorf("'-' twice: exit %d, want %d\n%s", code, exitUsage, errOut)
	}
	// A --db that names a directory is refused before anything is read
	// or written, and leaves nothing behind.
	dir := t.TempDir()
	for _, bad := range []string{"", dir, dir + "/sub/"} {
		code, _, errOut := runCLI(t, nil, "import", "--db", bad, "data/sample.json")
		if code != exitUsage || !strings.Contains(errOut, "not a directory") {
			t.Errorf("--db %q: exit %d, want %d\n%s", bad, code, exitUsage, errOut)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused --db left %v", entries)
	}
}

func TestEnvironmentVariablesSetFlags(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "env.db")
	env := map[string]string{"CATALOGD_DB": db}
	if code, _, errOut := runCLI(t, env, "import", "data/sample.json"); code != exitOK {
		t.Fatalf("import: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("CATALOGD_DB was not used: %v", err)
	}
	// A flag wins over the environment.
	other := filepath.Join(dir, "flag.db")
	if code, _, errOut := runCLI(t, env, "import", "--db", other, "data/sample.json"); code != exitOK {
		t.Fatalf("import: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("--db did not win over CATALOGD_DB: %v", err)
	}
}

// TestUnknownEnvironmentVariables checks that a CATALOGD_ variable that sets
// no flag is named, once, and changes nothing else; one that sets a flag of
// another command (an environment file shared by serve and import) is not
// named; serve names it in its JSON log.
func TestUnknownEnvironmentVariables(t *testing.T) {
	env := map[string]string{
		"CATALOGD_ADRR":            "127.0.0.1:1", // misspelt
		"CATALOGD_HELP":            "1",           // no flag to set
		"CATALOGD_DRY_RUN":         "true",        // import's
		"CATALOGD_ANSWER_CACHE_MB": "4",           // serve's
		"CATALOGDX":                "1",           // not ours
	}
	code, _, errOut := runCLI(t, env, "version")
	if code != exitOK {
		t.Fatalf("version: exit %d\n%s", code, errOut)
	}
	want := "catalogd: warning: environment variable CATALOGD_ADRR sets no flag of any catalogd command; it is ignored\n" +
		"catalogd: warning: environment variable CATALOGD_HELP sets no flag of any catalogd command; it is ignored\n"
	if errOut != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", errOut, want)
	}

	// A typo that makes serve refuse to start is named before the refusal.
	code, _, errOut = runCLI(t, map[string]string{"CATALOGD_ISUER": "https://idp.example"}, "serve")
	warning, _, _ := strings.Cut(errOut, "\n")
	var line map[string]any
	if err := json.Unmarshal([]byte(warning), &line); code != exitUsage || err != nil ||
		line["level"] != "WARN" || line["msg"] != "environment variable ignored" || line["variable"] != "CATALOGD_ISUER" {
		t.Errorf("serve with CATALOGD_ISUER: exit %d, stderr:\n%s\nwant exit %d after a JSON warning naming it", code, errOut, exitUsage)
	}

	p := startServeEnv(t, []string{"CATALOGD_ADRR=127.0.0.1:1", "CATALOGD_DRY_RUN=true"}, "--db", filepath.Join(t.TempDir(), "catalog.db"))
	line = p.logged(t, "environment variable ignored", 5*time.Second)
	if line["level"] != "WARN" || line["variable"] != "CATALOGD_ADRR" {
		t.Errorf("serve's warning: %v", line)
	}
	p.stop(t)
	if n := strings.Count(p.stderr.String(), "environment variable ignored"); n != 1 {
		t.Errorf("serve warned %d times, want once (CATALOGD_DRY_RUN is import's):\n%s", n, p.stderr.String())
	}
}

func TestExitStatuses(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args    []string
		env     map[string]string
		code    int
		message string
	}{
		{[]string{"bogus"}, nil, exitUsage, `unknown command "bogus"`},
		{[]string{"import"}, nil, exitUsage, "catalogd: import: missing snapshot"},
		{[]string{"import", "--no-such-flag", "x"}, nil, exitUsage, "unknown flag"},
		{[]string{"info", "extra"}, nil, exitUsage, "catalogd: info: unexpected argument"},
		{[]string{"serve"}, nil, exitUsage, "--issuer"},
		{[]string{"serve", "--dev", "--issuer", "https://idp.example"}, nil, exitUsage, "--dev"},
		{[]string{"serve", "--dev", "--addr", "0.0.0.0:0"}, nil, exitUsage, "loopback"},
		{[]string{"serve", "--dev"}, map[string]string{"CATALOGD_ADDR": "192.0.2.1:80"}, exitUsage, "loopback"},
		{[]string{"import", "x.json"}, map[string]string{"CATALOGD_DRY_RUN": "maybe"}, exitUsage, "CATALOGD_DRY_RUN"},
		{[]string{"serve", "--dev", "--rate-limit", "-1"}, nil, exitUsage, "--rate-limit"},
		{[]string{"serve", "--dev", "--rate-burst", "-3"}, nil, exitUsage, "--rate-burst"},
		{[]string{"serve", "--dev", "--rate-limit", "1e-12"}, nil, exitUsage, "want a rate of 0.001 to"},
		{[]string{"serve", "--dev", "--rate-limit", "10", "--rate-burst", "2000000"}, nil, exitUsage, "a burst of 1 to 1000000"},
		{[]string{"serve", "--dev", "--rate-burst", "50"}, nil, exitUsage, "--rate-burst 50 without --rate-limit"},
		{[]string{"serve", "--dev", "--gc-headroom-mb", "-1"}, nil, exitUsage, "--gc-headroom-mb"},
		{[]string{"serve", "--dev", "--max-downloads", "0"}, nil, exitUsage, "--max-downloads"},
		{[]string{"serve", "--dev", "--access-log", "sample:0"}, nil, exitUsage, "--access-log \"sample:0\": want all, errors, sample:N"},
		{[]string{"serve", "--dev"}, map[string]string{"CATALOGD_ACCESS_LOG": "debug"}, exitUsage, "--access-log"},
		{[]string{"serve", "--dev", "--slow-request", "0s"}, nil, exitUsage, "--slow-request 0s: want a positive duration"},
		{[]string{"serve", "--dev", "--shutdown-grace", "-1s"}, nil, exitUsage, "--shutdown-grace -1s: want 0 (close every connection at once) or more"},
		{[]string{"serve", "--dev", "--max-client-requests", "0"}, nil, exitUsage, "--max-client-requests 0: want 1 or more"},
		{[]string{"serve", "--dev"}, map[string]string{"CATALOGD_GC_HEADROOM_MB": "4096"}, exitUsage, "--gc-headroom-mb"},
		{[]string{"serve", "--dev"}, map[string]string{"CATALOGD_RATE_LIMIT": "NaN"}, exitUsage, "--rate-limit"},
		{[]string{"info", "--db", filepath.Join(dir, "missing.db")}, nil, exitFailure, "missing.db"},
		{[]string{"import", "--db", filepath.Join(dir, "c.db"), filepath.Join(dir, "nope.json")}, nil, exitFailure, "nope.json"},
		{[]string{"version"}, nil, exitOK, ""},
	}
	for _, c := range cases {
		code, _, errOut := runCLI(t, c.env, c.args...)
		if code != c.code || !strings.Contains(errOut, c.message) {
			t.Errorf("catalogd %q: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, errOut, c.code, c.message)
		}
	}
}

func TestImportReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"sets":[
{"id":"a","code":"a","name":"A","zone":"mars","cardCount":0},
{"id":"b","code":"b","name":"B","zone":"intl","cardCount":-1}
],"cards":[]}`), 0o644)
	code, _, errOut := runCLI(t, nil, "import", "--db", filepath.Join(dir, "c.db"), bad)
	if code != exitFailure {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"bad.json:2:", "sets[0]", "zone", "bad.json:3:", "sets[1]", "cardCount", "2 problems", "not changed"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}

	os.WriteFile(bad, []byte(`{"sets":[{"id":"a","code":"a","name":"A","zone":"mars","cardCount":0}],"cards":[]}`), 0o644)
	if _, _, errOut := runCLI(t, nil, "import", "--db", filepath.Join(dir, "c.db"), bad); !strings.Contains(errOut, "import failed: 1 problem;") {
		t.Errorf("one problem reported as:\n%s", errOut)
	}
}

// importSample imports the sample into a new catalogue and returns its
// directory, its path and its bytes.
func importSample(t *testing.T) (dir, db string, contents []byte) {
	t.Helper()
	dir = t.TempDir()
	db = filepath.Join(dir, "catalog.db")
	if code, _, errOut := runCLI(t, nil, "import", "--db", db, "data/sample.json"); code != exitOK {
		t.Fatalf("first import: %s", errOut)
	}
	contents, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	return dir, db, contents
}

// sendHalf writes half the snapshot to an import's input, unless in is
// nil, and returns once the import's temporary file is in dir.
func sendHalf(t *testing.T, in io.Writer, snapshot []byte, dir string) {
	t.Helper()
	if in != nil {
		if _, err := in.Write(snapshot[:len(snapshot)/2]); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		tmps, _ := filepath.Glob(filepath.Join(dir, ".catalog.db.import-*"))
		if len(tmps) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the import never started writing its temporary file")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestKilledImportLeavesCatalogue starts the real binary importing from a
// pipe, kills it while the new file is half written, and checks that the
// catalogue is byte for byte what it was and the next import succeeds.
func TestKilledImportLeavesCatalogue(t *testing.T) {
	dir, db, before := importSample(t)

	snapshot, err := os.ReadFile("data/sample.json")
	if err != nil {
		t.Fatal(err)
	}
	cmd := catalogdCommand(t, "import", "--db", db, "-")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The import is now in the middle of writing.
	sendHalf(t, stdin, snapshot, dir)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	after, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("the catalogue changed after a killed import")
	}
	if code, out, errOut := runCLI(t, nil, "info", "--db", db); code != exitOK || !strings.Contains(out, "total") {
		t.Fatalf("info after a killed import: exit %d\n%s%s", code, out, errOut)
	}
	// The next import removes the dead one's leftovers.
	if code, _, errOut := runCLI(t, nil, "import", "--db", db, "data/sample.json"); code != exitOK {
		t.Fatalf("import after a killed import: %s", errOut)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".catalog.db.import-*")); len(tmps) != 0 {
		t.Errorf("temporary files left: %q", tmps)
	}
}

// TestInterruptedImportLeavesCatalogue interrupts the real binary while it
// waits for more of a snapshot that a stalled writer holds back: it must
// end at once, say so, remove its temporary file and leave the catalogue
// as it was, whether the snapshot comes on standard input or through a
// named pipe.
func TestInterruptedImportLeavesCatalogue(t *testing.T) {
	snapshot, err := os.ReadFile("data/sample.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		fifo   bool
		writer bool // the pipe's writer opens it
		signal os.Signal
	}{
		{"stdin, SIGINT", false, true, os.Interrupt},
		{"named pipe, SIGTERM", true, true, syscall.SIGTERM},
		{"named pipe no writer opened, SIGINT", true, false, os.Interrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, db, before := importSample(t)
			var cmd *exec.Cmd
			var in io.WriteCloser
			var stderr lockedBuffer
			if tc.fifo {
				fifo := filepath.Join(t.TempDir(), "snapshot.json")
				if err := syscall.Mkfifo(fifo, 0o600); err != nil {
					t.Fatal(err)
				}
				cmd = catalogdCommand(t, "import", "--db", db, fifo)
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				// Opening a pipe's end waits for the other: the import's.
				if tc.writer {
					if in, err = os.OpenFile(fifo, os.O_WRONLY, 0); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				cmd = catalogdCommand(t, "import", "--db", db, "-")
				cmd.Stderr = &stderr
				if in, err = cmd.StdinPipe(); err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			defer cmd.Process.Kill()

			// The import now waits for the rest, or for a writer.
			if in != nil {
				defer in.Close()
			}
			sendHalf(t, in, snapshot, dir)
			if err := cmd.Process.Signal(tc.signal); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != exitFailure {
					t.Fatalf("interrupted import: %v, want exit status %d", err, exitFailure)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the import did not end on its signal while its input stalled")
			}
			if msg := stderr.String(); !strings.Contains(msg, "import: interrupted") || !strings.Contains(msg, "was not changed") {
				t.Errorf("message does not say what happened: %q", msg)
			}
			assertCatalogueKept(t, dir, db, before, "an interrupted import")
		})
	}
}

// TestImportWriteErrorLeavesCatalogue runs the real binary with a file size
// limit, so that writing the new catalogue fails part way with a real write
// error (EFBIG; Go ignores SIGXFSZ), as a full disk would.
func TestImportWriteErrorLeavesCatalogue(t *testing.T) {
	dir, db, before := importSample(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// 4096 blocks of 512 bytes: 2 MiB, well short of the real catalogue.
	cmd := endsWithTheTest(exec.Command("sh", "-c", `ulimit -f 4096 && exec "$0" "$@"`, exe, "import", "--db", db, realCatalogue))
	cmd.Env = append(childEnv(t), beCatalogd+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitFailure {
		t.Fatalf("import past the size limit: exit %d (%v), want %d\n%s", code, err, exitFailure, stderr.String())
	}
	if msg := stderr.String(); !strings.Contains(msg, "file too large") || !strings.Contains(msg, "not changed") {
		t.Errorf("message does not say what failed: %s", msg)
	}
	assertCatalogueKept(t, dir, db, before, "a failed write")
}

// assertCatalogueKept fails unless the catalogue db holds the bytes it held
// before the failed import and no temporary file is left in dir.
func assertCatalogueKept(t *testing.T, dir, db string, before []byte, after string) {
	t.Helper()
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".catalog.db.import-*")); len(tmps) != 0 {
		t.Errorf("temporary files left after %s: %q", after, tmps)
	}
	now, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, now) {
		t.Fatalf("the catalogue changed after %s", after)
	}
}

// TestServeDev starts the real binary as a newcomer would (serve --dev, no
// catalogue file), calls the API with the token it prints, and stops it with
// SIGTERM.
func TestServeDev(t *testing.T) {
	dir := t.TempDir()
	p := startServe(t, "--db", filepath.Join(dir, "catalog.db"))
	banner, api, token := p.banner, p.api, p.token
	get := func(path, token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, api+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("/catalog/sets", token); code != http.StatusOK || !strings.Contains(body, `"id":"jp-SV1a"`) {
		t.Fatalf("GET /catalog/sets with the printed token: %d %s", code, body)
	}
	if code, _ := get("/catalog/sets", ""); code != http.StatusUnauthorized {
		t.Fatalf("GET /catalog/sets without a token: %d", code)
	}
	// The dev key was made beside the db file, private to its owner.
	if st, err := os.Stat(filepath.Join(dir, "catalogd-dev-key.pem")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("dev key: %v, mode %v", err, st.Mode())
	}
	// The client-credentials grant with the exact body of docs/CONTRACT.md, Authentication,
	// using the credentials the banner printed.
	origin := strings.TrimSuffix(api, "/api/v1")
	grant := func(secret, audience string) (int, map[string]any) {
		body, _ := json.Marshal(map[string]string{
			"grant_type": "client_credentials", "client_id": banner["client id"],
			"client_secret": secret, "audience": audience,
		})
		resp, err := http.Post(origin+"/oauth/token", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	code, tok := grant(banner["client secret"], banner["audience"])
	if code != http.StatusOK || tok["token_type"] != "Bearer" || tok["expires_in"] != float64(86400) || tok["scope"] != "catalog:read" {
		t.Fatalf("POST /oauth/token: %d %v", code, tok)
	}
	if code, body := get("/catalog/search?q=pikachu", tok["access_token"].(string)); code != http.StatusOK {
		t.Fatalf("search with a granted token: %d %s", code, body)
	}
	if code, out := grant("wrong", banner["audience"]); code != http.StatusUnauthorized || out["error"] != "invalid_client" {
		t.Errorf("wrong secret: %d %v", code, out)
	}
	if code, out := grant(banner["client secret"], "https://elsewhere.example/mcp"); code != http.StatusBadRequest || out["error"] == nil {
		t.Errorf("wrong audience: %d %v", code, out)
	}

	// catalogd token signs with the same key.
	code, out, errOut := runCLI(t, nil, "token", "--db", filepath.Join(dir, "catalog.db"), "--base-url", api)
	if code != exitOK {
		t.Fatalf("token: %s", errOut)
	}
	if code, body := get("/catalog/cards/jp-SV1a-001", strings.TrimSpace(out)); code != http.StatusOK {
		t.Fatalf("GET a card with catalogd token's token: %d %s", code, body)
	}

	p.stop(t)
}

// readDevBanner reads serve --dev's start message: its "name  value" lines
// (API, client id, client secret, audience) and the token of its curl line.
func readDevBanner(t *testing.T, r io.Reader) map[string]string {
	t.Helper()
	lines := make(chan string)
	go func() {
		s := bufio.NewScanner(r)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	timeout := time.After(30 * time.Second)
	banner := map[string]string{}
	for banner["token"] == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("serve --dev exited before printing its banner")
			}
			if f := strings.Fields(line); len(f) >= 2 {
				banner[strings.Join(f[:len(f)-1], " ")] = f[len(f)-1]
			}
			if _, rest, ok := strings.Cut(line, "Bearer "); ok {
				banner["token"], _, _ = strings.Cut(rest, "'")
			}
		case <-timeout:
			t.Fatal("no banner from serve --dev")
		}
	}
	go func() {
		for range lines {
		}
	}()
	return banner
}

// TestImportRejectsBadNameGroups: a snapshot whose name groups break a
// rule fails the import with the place of the bad group, and leaves the
// catalogue as it was.
func TestImportRejectsBadNameGroups(t *testing.T) {
	_, db, before := importSample(t)
	for _, c := range []struct{ fixture, where string }{
		{"names-group-of-one.json", "names-group-of-one.json:7:1: names[1]"},
		{"names-not-string.json", "names-not-string.json:7:32: names[1]"},
		{"names-too-many.json", "names-too-many.json:7:1: names[1]"},
		{"names-empty-name.json", "names-empty-name.json:7:14: names[1]"},
		{"names-not-array.json", "names-not-array.json:5:11:"},
	} {
		code, _, errOut := runCLI(t, nil, "import", "--db", db, filepath.Join("importer", "testdata", "invalid", c.fixture))
		if code != exitFailure || !strings.Contains(errOut, c.where) || !strings.Contains(errOut, "not changed") {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit %d naming %q", c.fixture, code, errOut, exitFailure, c.where)
		}
		if after, err := os.ReadFile(db); err != nil || !bytes.Equal(after, before) {
			t.Errorf("%s: the catalogue changed (%v)", c.fixture, err)
		}
	}
}
