package importer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCardsOfARejectedSetAreNotReportedAgain: a set reported for its own
// problem is not also "a set that does not exist" for each of its cards.
func TestCardsOfARejectedSetAreNotReportedAgain(t *testing.T) {
	dir := t.TempDir()
	for _, order := range []string{"sets first", "cards first"} {
		sets := `"sets":[{"id":"jp-A","code":"A","name":"A","zone":"jp","cardCount":-1}]`
		cards := `"cards":[{"id":"jp-A-1","name":"n","setName":"A","setCode":"A","number":"1","language":"ja","zone":"jp"}]`
		body := "{" + sets + ",\n" + cards + "}"
		if order == "cards first" {
			body = "{" + cards + ",\n" + sets + "}"
		}
		file := filepath.Join(dir, "snapshot.json")
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Import(context.Background(), Config{DB: filepath.Join(dir, "catalog.db"), Inputs: []string{file}})
		var verr *ValidationError
		if !errors.As(err, &verr) {
			t.Fatalf("%s: error %v, want a ValidationError", order, err)
		}
		if len(verr.Errors) != 1 || verr.Errors[0].Field != "cardCount" {
			t.Errorf("%s: problems %v, want only the set's cardCount", order, verr.Errors)
		}
	}
}
