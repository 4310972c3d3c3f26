package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catalogd/catalogd/catalog"
)

// importAnonBound is what `catalogd import` may hold in anonymous memory,
// whatever the snapshot: its buffers are bounded, and so is the heap the
// collector lets them grow to; a small VM gives it 256 MiB.
const importAnonBound = 200 << 20

// TestImportMemoryIsBounded pipes snapshots whose names do not repeat (the
// worst case for the search index) into `catalogd import -` and samples the
// process's anonymous memory as it runs: the same bound holds for a
// catalogue ten times larger. Both go into one file, so the second import
// also compares itself, card by card, with the first. The same holds when
// every card comes before its set, which the import can only check at the
// end; when every card names a set that never comes, which fails; when
// names are long (spaces fold to one, so that the index stays small and the
// test quick); and when card ids come in no order, as UUIDs do.
//
// The shapes run side by side, and beside the package's other parallel
// tests: each import is a process of its own, whose memory alone is read.
// .ci/run runs this test without the race detector, which the imports it
// measures are built without.
func TestImportMemoryIsBounded(t *testing.T) {
	t.Parallel()
	exe := productionBinary(t)
	for _, shape := range []struct {
		name     string
		sizes    []int
		write    func(w io.Writer, cards int) error
		wantExit int
	}{
		// The longest to import first, so that the others run beside it.
		{"the longest names, of the character that folds longest", []int{500, 5_000}, writeLongNames, 0},
		{"names that do not repeat", []int{15_000, 150_000}, func(w io.Writer, cards int) error {
			return writeDistinctNames(w, cards, false)
		}, 0},
		{"cards before their sets", []int{15_000, 150_000}, func(w io.Writer, cards int) error {
			return writeDistinctNames(w, cards, true)
		}, 0},
		{"cards of sets that never come", []int{30_000, 300_000}, writeCardsOfMissingSets, 1},
		{"card ids in no order", []int{100_000, 1_000_000}, writeRandomIDs, 0},
	} {
		t.Run(shape.name, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "catalog.db")
			for _, cards := range shape.sizes {
				peak := importPeakAnon(t, exe, db, cards, shape.write, shape.wantExit)
				t.Logf("%d cards: peak RssAnon %d MiB", cards, peak>>20)
				if peak > importAnonBound {
					t.Errorf("importing %d cards: peak RssAnon %d MiB, over %d MiB", cards, peak>>20, importAnonBound>>20)
				}
			}
		})
	}
}

// distinctZones are the zones of writeDistinctNames's sets, in turn: each
// with its language, a set name that many sets share, as the real
// catalogue's do, and real card names in its script.
var distinctZones = [...]struct {
	zone, lang, setName string
	names               []string
}{
	{"intl", "en", "Expansion Pack", []string{"Pikachu", "Charizard ex", "Professor's Research", "Flabébé", "Steelix"}},
	{"jp", "ja", "拡張パック", []string{"ピカチュウ", "リザードンex", "博士の研究", "フラベベ", "ハガネール"}},
	{"chn", "zh-tw", "擴充包", []string{"皮卡丘", "噴火龍ex", "博士的研究", "花蓓蓓", "大鋼蛇"}},
}

// distinctPerSet is the cards of each set of writeDistinctNames: the
// catalogue generator's average, some 6,700 sets a million cards.
const distinctPerSet = 150

// writeDistinctNames writes a snapshot whose card names do not repeat, the
// worst case for the search index: each is a real name, the card's running
// number and a word of random letters in each of Latin, kana and Han
// script ("Steelix 1 tidr ブユ 皠寷"), so that the bigrams of names run
// into the millions. Its sets, of distinctPerSet cards, take the three
// zones in turn, and its cards have every field a card may have. With
// cardsFirst the cards come before their sets.
func writeDistinctNames(w io.Writer, cards int, cardsFirst bool) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	sets := (cards + distinctPerSet - 1) / distinctPerSet
	writeSets := func() {
		bw.WriteString(`"sets":[`)
		for s := range sets {
			z := &distinctZones[s%len(distinctZones)]
			if s > 0 {
				bw.WriteByte(',')
			}
			fmt.Fprintf(bw, "\n"+`{"id":"%s-s%d","code":"s%d","name":"%s","zone":"%s","releasedOn":"2023-03-10","cardCount":%d}`,
				z.zone, s, s, z.setName, z.zone, min(distinctPerSet, cards-s*distinctPerSet))
		}
		bw.WriteString("\n]")
	}
	writeCards := func() {
		rng := rand.New(rand.NewPCG(uint64(cards), 2))
		word := func(first, letters rune, least, most int) string {
			w := make([]rune, least+rng.IntN(most-least+1))
			for i := range w {
				w[i] = first + rune(rng.IntN(int(letters)))
			}
			return string(w)
		}
		bw.WriteString(`"cards":[`)
		for i := range cards {
			s, n := i/distinctPerSet, i%distinctPerSet+1
			z := &distinctZones[s%len(distinctZones)]
			name := fmt.Sprintf("%s %d %s %s %s", z.names[rng.IntN(len(z.names))], i+1,
				word('a', 26, 4, 8), word(0x30A2, 0x30F3-0x30A2, 2, 5), word(0x4E00, 0x9FA5-0x4E00, 2, 4))
			if i > 0 {
				bw.WriteByte(',')
			}
			fmt.Fprintf(bw, "\n"+`{"id":"%[1]s-s%[2]d-%03[3]d","name":"%[4]s","setName":"%[5]s","setCode":"s%[2]d","number":"%03[3]d/%[6]d",`+
				`"language":"%[7]s","year":2023,"variant":"standard","rarity":"Common","imageUrl":"https://assets.tcgdex.net/%[7]s/sv/s%[2]d/%03[3]d/high.png",`+
				`"zone":"%[1]s","totalCards":%[6]d,"illustrator":"Ryo Ueda","marketAId":"%[8]d","marketBId":"%[9]d"}`,
				z.zone, s, n, name, z.setName, distinctPerSet, z.lang, 500000+i, 900000+i)
		}
		bw.WriteString("\n]")
	}
	first, second := writeSets, writeCards
	if cardsFirst {
		first, second = writeCards, writeSets
	}
	bw.WriteByte('{')
	first()
	bw.WriteByte(',')
	second()
	bw.WriteString("}\n")
	return bw.Flush()
}

// writeLongNames writes a snapshot of one set whose cards' names do not
// repeat and are as long as a name may be (catalog.MaxNameLength), of the
// character that folds longest (U+FDFA, 3 bytes that fold to 33): 16 KB
// of search text and autocomplete forms a card.
func writeLongNames(w io.Writer, cards int) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"sets":[{"id":"intl-s","code":"s","name":"S","zone":"intl","cardCount":1}],"cards":[`)
	for i := range cards {
		if i > 0 {
			bw.WriteByte(',')
		}
		prefix := fmt.Sprintf("Card %d ", i)
		name := prefix + strings.Repeat("\ufdfa", catalog.MaxNameLength-len(prefix))
		fmt.Fprintf(bw, "\n"+`{"id":"intl-s-%d","name":%q,"setName":"S","setCode":"s","number":"%d","language":"en","zone":"intl"}`, i, name, i)
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// writeRandomIDs writes a snapshot of one set whose small cards have ids of
// 32 hexadecimal digits drawn at random, as UUIDs are: each id lands
// anywhere in the index of ids.
func writeRandomIDs(w io.Writer, cards int) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"sets":[{"id":"intl-s","code":"s","name":"S","zone":"intl","cardCount":1}],"cards":[`)
	rng := rand.New(rand.NewPCG(uint64(cards), 1))
	for i := range cards {
		if i > 0 {
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, "\n"+`{"id":"%016x%016x","name":"Card %d","setName":"S","setCode":"s","number":"%d","language":"en","zone":"intl"}`, rng.Uint64(), rng.Uint64(), i, i)
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// writeCardsOfMissingSets writes a snapshot of cards each of which names a
// set of its own, and no sets: each reference must be kept until every set
// is known, and none is.
func writeCardsOfMissingSets(w io.Writer, cards int) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"cards":[`)
	for i := range cards {
		if i > 0 {
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, "\n"+`{"id":"intl-x%d-1","name":"Card %d","setName":"Set %d","setCode":"x%d","number":"1","language":"en","zone":"intl"}`, i, i, i, i)
	}
	bw.WriteString("\n" + `],"sets":[]}` + "\n")
	return bw.Flush()
}

// productionBinary returns catalogd as it ships: this test binary, or when
// it is built with the race detector, whose shadow memory would be measured
// too, catalogd built without it.
func productionBinary(t *testing.T) string {
	t.Helper()
	if !raceDetector {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		return exe
	}
	exe := filepath.Join(t.TempDir(), "catalogd")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

// importPeakAnon imports the snapshot write writes, of so many cards, from
// standard input into the catalogue db, and returns the most anonymous
// memory the import process held. The import must exit with wantExit.
func importPeakAnon(t *testing.T, exe, db string, cards int, write func(io.Writer, int) error, wantExit int) int64 {
	t.Helper()
	cmd := endsWithTheTest(exec.Command(exe, "import", "--db", db, "-"))
	cmd.Env = append(childEnv(t), beCatalogd+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	written := make(chan error, 1)
	go func() {
		err := write(stdin, cards)
		written <- errors.Join(err, stdin.Close())
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	var peak int64
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			if werr := <-written; werr != nil && !errors.Is(werr, io.ErrClosedPipe) {
				t.Fatalf("write the snapshot: %v", werr)
			}
			if code := cmd.ProcessState.ExitCode(); code != wantExit {
				t.Fatalf("import of %d cards: %v, want exit status %d", cards, err, wantExit)
			}
			if peak == 0 {
				t.Fatal("no memory figure was read while the import ran")
			}
			return peak
		case <-tick.C:
			if m, err := readProcMem(cmd.Process.Pid); err == nil {
				peak = max(peak, m.anon)
			}
		}
	}
}
