package store

import (
	"bytes"
	"flag"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/catalogd/catalogd/catalog/store/internal/layout"
)

var cardsDB = flag.String("cards-db", "", "catalogue file for BenchmarkCardsAtOnce")

// BenchmarkCardsAtOnce looks up 100 random cards of a catalogue file
// imported before, copying each, in one process and alternately: "seek"
// a bbolt seek after a seek (reader.card), "batch" a level of the tree at
// a time (Cards); ns/op is a batch of 100:
//
//	go test ./catalog/store -run '^$' -bench CardsAtOnce -benchtime 10000x -args -cards-db FILE
func BenchmarkCardsAtOnce(b *testing.B) {
	if *cardsDB == "" {
		b.Skip("no -cards-db")
	}
	db, err := Open(*cardsDB)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var ids []string
	db.read(func(r *reader) error {
		return r.tx.Bucket(layout.BucketCards).ForEach(func(k, v []byte) error {
			if rest, ok := bytes.CutPrefix(v, []byte(`{"id":"`)); ok && k[0] != 0xff {
				ids = append(ids, string(rest[:bytes.IndexByte(rest, '"')]))
			}
			return nil
		})
	})
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for i := range ids { // side by side in memory, as a request's ids are
		ids[i] = strings.Clone(ids[i])
	}
	next := 0
	draw := func() []string {
		if next+100 > len(ids) {
			next = 0
		}
		next += 100
		return ids[next-100 : next]
	}
	var buf []byte
	found := func(c []byte) { buf = append(buf, c...) }
	for range 2 {
		b.Run("seek", func(b *testing.B) {
			for b.Loop() {
				buf = buf[:0]
				db.read(func(r *reader) error {
					for _, id := range draw() {
						c, _, _ := r.card(id)
						found(c)
					}
					return nil
				})
			}
		})
		b.Run("batch", func(b *testing.B) {
			for b.Loop() {
				buf = buf[:0]
				db.Cards(draw(), found, func(string) {})
			}
		})
	}
}
