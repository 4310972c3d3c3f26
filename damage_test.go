package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/server"
	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"
)

// damageCardPage damages, in the catalogue file at path, the page that
// holds card id's JSON (under its key in the cards bucket, which every
// lookup of it reads, whether by the key its id names or by its
// locator): its header is made to say it is no kind of page, as a bad
// sector or a bad copy may. Open reads no such page. It returns the
// page's number.
func damageCardPage(t *testing.T, path, id string) uint64 {
	t.Helper()
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	var root uint64
	var key []byte
	if err := bdb.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("cards"))
		root = uint64(b.Root())
		// The card's key: its set, its number, then its id; locators
		// start with 0xFF.
		return b.ForEach(func(k, _ []byte) error {
			if key == nil && k[0] != 0xFF && bytes.HasSuffix(k, []byte(id)) {
				key = bytes.Clone(k)
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if key == nil {
		t.Fatalf("no card %q in the cards bucket", id)
	}
	pageSize := uint64(bdb.Info().PageSize)
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// bbolt's page: id (8 bytes), flags (2: 1 branch, 2 leaf), count
	// (2), overflow (4), then its elements; a branch element is the
	// key's offset from the element (4), its length (4) and the child's
	// page (8). Descend to the leaf whose range holds the key.
	pgid := root
	for depth := 0; ; depth++ {
		page := file[pgid*pageSize:]
		flags, count := binary.LittleEndian.Uint16(page[8:]), int(binary.LittleEndian.Uint16(page[10:]))
		if flags&2 != 0 {
			break
		}
		if flags&1 == 0 || depth > 8 {
			t.Fatalf("page %d: flags %#x, not a branch or a leaf", pgid, flags)
		}
		child := uint64(0)
		for i := range count {
			elem := page[16+16*i:]
			pos, size := binary.LittleEndian.Uint32(elem), binary.LittleEndian.Uint32(elem[4:])
			if i > 0 && bytes.Compare(elem[pos:pos+size], key) > 0 {
				break
			}
			child = binary.LittleEndian.Uint64(elem[8:])
		}
		pgid = child
	}
	if pgid == root {
		t.Fatal("the cards bucket is one page: nothing for Open to leave unread")
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0, 0}, int64(pgid*pageSize+8)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return pgid
}

// A file with a damaged page that Open does not read: it opens, Check
// names the page, a reload refuses it and the current catalogue goes on
// being served, and serve started on it answers a request that reads the
// page with the documented 500, logging the page.
func TestDamagedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "catalog.db")
	first, _ := sampleVariant(t, dir, 1)
	importInto(t, path, first)
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Check(); err != nil {
		t.Fatalf("Check of a whole file: %v", err)
	}
	live := store.NewLive(db)
	defer live.Close()
	seen, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	metrics, err := server.NewMetrics(reg, live)
	if err != nil {
		t.Fatal(err)
	}
	rl := newReloader(path, live, seen, slog.New(slog.NewJSONHandler(&logs, nil)), metrics)

	damaged := filepath.Join(t.TempDir(), "damaged.db")
	second, _ := sampleVariant(t, dir, 2)
	importInto(t, damaged, second)
	page := damageCardPage(t, damaged, "jp-SV1a-001")
	pageSays := "page " + strconv.FormatUint(page, 10)

	d, err := store.Open(damaged)
	if err != nil {
		t.Fatalf("Open reads the damaged page: %v", err)
	}
	if err := d.Check(); !errors.Is(err, store.ErrDamaged) || !strings.Contains(err.Error(), pageSays) {
		t.Errorf("Check: %v; want ErrDamaged naming %s", err, pageSays)
	}
	if _, err := d.AppendCard(nil, "jp-SV1a-001"); !errors.Is(err, store.ErrDamaged) {
		t.Errorf("a card on the damaged page: %v, want ErrDamaged", err)
	}
	d.Close()

	// The reload refuses it.
	current := live.Current().Generation()
	b, err := os.ReadFile(damaged)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".new", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	rl.check(false)
	if live.Current().Generation() != current {
		t.Fatal("a damaged file was swapped in")
	}
	if !strings.Contains(logs.String(), `"msg":"catalogue reload refused: the file is damaged; serving the current catalogue"`) || !strings.Contains(logs.String(), pageSays) {
		t.Errorf("the refusal does not say why and which page: %s", logs.String())
	}
	if _, err := live.Current().AppendCard(nil, "jp-SV1a-001"); err != nil {
		t.Errorf("the current catalogue after the refusal: %v", err)
	}
	if n := reloadFailures(t, reg); n != 1 {
		t.Errorf("%v reload failures counted, want 1", n)
	}

	// serve started on the damaged file answers what does not read the
	// page, and a 500 that says so for what does.
	idp := newTestIdP(t)
	p, _ := startServeLogged(t, nil, append(idp.args(), "--db", damaged, "--addr", "127.0.0.1:0")...)
	p.token = idp.token(t, p.api+"/mcp")
	if status, _, _, err := p.get(http.DefaultClient, "/catalog/sets"); err != nil || status != http.StatusOK {
		t.Errorf("a request that reads no damaged page: %d, %v", status, err)
	}
	status, _, body, err := p.get(http.DefaultClient, "/catalog/cards/jp-SV1a-001")
	var problem struct{ Detail string }
	json.Unmarshal([]byte(body), &problem)
	if err != nil || status != http.StatusInternalServerError || !strings.Contains(problem.Detail, "the catalogue file is damaged") {
		t.Errorf("a request that reads the damaged page: %d %s (%v); want 500 saying the file is damaged", status, body, err)
	}
	line := p.logged(t, "catalogue file damaged", 5*time.Second)
	if msg, _ := line["error"].(string); !strings.Contains(msg, pageSays) {
		t.Errorf("the log line does not name the page: %v", line)
	}
	p.stop(t)
}

// reloadFailures reads catalogd_catalog_reloads_total{result="failure"}.
func reloadFailures(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "catalogd_catalog_reloads_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == "failure" {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatal("no catalogd_catalog_reloads_total{result=\"failure\"}")
	return 0
}
