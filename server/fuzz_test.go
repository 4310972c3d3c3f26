package server

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/catalogd/catalogd/server/op"
	"github.com/julienschmidt/httprouter"
)

// FuzzParseQuery reads arbitrary query strings the way the REST routes do
// (restParams, then the operations getCard, listSetCards and searchCards)
// and checks them against the rules of docs/CONTRACT.md, Parameters,
// written out independently: nothing panics; a query string that cannot
// be decoded is one error; every other problem is a ParamError naming the parameter,
// once, with a short detail; a parameter is named exactly when it breaks a
// rule; and what is accepted is in range. The seeds are requests made of
// the values of the built-in sample.
func FuzzParseQuery(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("..", "data", "sample.json"))
	if err != nil {
		f.Fatal(err)
	}
	var snap struct {
		Sets  []struct{ ID, Code, Zone string }
		Cards []struct{ ID, Name, Number, SetCode string }
	}
	if err := json.Unmarshal(raw, &snap); err != nil {
		f.Fatal(err)
	}
	for i, s := range snap.Sets {
		f.Add("page=" + strconv.Itoa(i) + "&pageSize=" + strconv.Itoa(i*20))
		f.Add("q=" + url.QueryEscape(snap.Cards[i*100%len(snap.Cards)].Name) + "&zone=" + s.Zone + "&set=" + url.QueryEscape(s.Code) + "&limit=" + strconv.Itoa(i*10))
		f.Add("set=" + url.PathEscape(s.ID) + "&q=" + url.PathEscape(snap.Cards[i*37%len(snap.Cards)].Number))
	}
	for _, q := range []string{
		"", "page=01", "page=%2B1", "page=1.0", "page=1e2", "page=", "page=0x10", "page=9007199254740992",
		"page=9007199254740991&pageSize=200", "pageSize=%EF%BC%91", "page=1&page=2", "page=99999999999999999999999",
		"q=pikachu&q=raichu", "q=%20a%20", "q=%FF%FE", "q=" + strings.Repeat("x", 201), "zone=mars&q=ab",
		"set=&q=ab", "set=" + strings.Repeat("é", 51) + "&q=ab", "limit=0&limit=101", "a=%zz", "page=%", "x=1;y=2",
		"q=charizard+4&zone=intl&set=base1&limit=100", "q=%E3%81%B4%E3%81%8B&zone=jp",
		"q=charzard&fuzzy=true", "q=charzard&fuzzy=false&fuzzy=true", "q=ab&fuzzy=yes", "q=ab&fuzzy=",
		"q=p", "q=p&limit=20", "q=pika&limit=21", "q=%20", "q=%E3%83%94&zone=jp&limit=01",
	} {
		f.Add(q)
	}
	srv := &Server{log: slog.New(slog.DiscardHandler)}
	f.Fuzz(func(t *testing.T, raw string) {
		values, decodeErr := url.ParseQuery(raw)
		r := &http.Request{URL: &url.URL{RawQuery: raw}}

		// getCard: the query decoded, and no parameter of it read.
		p, err := restParams(r, httprouter.Params{{Key: "cardId", Value: "/base1-4"}})
		if decodeErr != nil {
			pe := op.InvalidParams(err)
			if len(pe) != 1 || pe[0].Parameter != "(query string)" || pe[0].Detail == "" {
				t.Fatalf("restParams(%q): %v, want one error for the query string", raw, err)
			}
			checkRendered(t, srv, raw, err, []string{"(query string)"})
			return
		}
		if err != nil {
			t.Fatalf("restParams(%q): %v, but net/url decodes it", raw, err)
		}
		if _, err := op.ParseGetCard(p); err != nil {
			t.Fatalf("getCard with the query %q: %v, but it reads no query parameter", raw, err)
		}

		// listSetCards.
		p, _ = restParams(r, httprouter.Params{{Key: "code", Value: "SV1a"}})
		lr, err := op.ParseListSetCards(p)
		page, pageSize := lr.Page, lr.PageSize
		wantPage, pageOK := intParam(values, "page", 1, 1, op.MaxPage)
		wantSize, sizeOK := intParam(values, "pageSize", op.DefaultPageSize, 1, op.MaxPageSize)
		var bad []string
		if !pageOK {
			bad = append(bad, "page")
		}
		if !sizeOK {
			bad = append(bad, "pageSize")
		}
		checkParamErrors(t, raw, err, bad)
		checkRendered(t, srv, raw, err, bad)
		if err == nil && (page != wantPage || pageSize != wantSize) {
			t.Fatalf("%q: page %d pageSize %d, want %d and %d", raw, page, pageSize, wantPage, wantSize)
		}
		if pageOK && (page < 1 || page > op.MaxPage) || sizeOK && (pageSize < 1 || pageSize > op.MaxPageSize) {
			t.Fatalf("%q: page %d pageSize %d out of range", raw, page, pageSize)
		}

		// searchCards.
		p, _ = restParams(r, nil)
		sq, err := op.ParseSearch(p)
		bad = bad[:0]
		qv := first(values, "q")
		if qn := utf8.RuneCountInString(strings.TrimSpace(qv)); len(values["q"]) != 1 || !utf8.ValidString(qv) || qn < 2 || qn > 200 {
			bad = append(bad, "q")
		}
		zone := first(values, "zone")
		if zs := values["zone"]; len(zs) > 1 || len(zs) == 1 && zone != "intl" && zone != "jp" && zone != "chn" {
			bad = append(bad, "zone")
		}
		set := first(values, "set")
		if ss := values["set"]; len(ss) > 1 || len(ss) == 1 && (set == "" || !utf8.ValidString(set) || utf8.RuneCountInString(set) > 50) {
			bad = append(bad, "set")
		}
		wantLimit, limitOK := intParam(values, "limit", 25, 1, 100)
		if !limitOK {
			bad = append(bad, "limit")
		}
		fuzzy := first(values, "fuzzy")
		if fs := values["fuzzy"]; len(fs) > 1 || len(fs) == 1 && fuzzy != "true" && fuzzy != "false" {
			bad = append(bad, "fuzzy")
		}
		checkParamErrors(t, raw, err, bad)
		checkRendered(t, srv, raw, err, bad)
		if err == nil && (sq.Q != strings.TrimSpace(qv) || sq.Zone != zone || sq.Set != set || sq.Limit != int(wantLimit) || sq.Fuzzy != (fuzzy == "true")) {
			t.Fatalf("%q: search %+v, want q %q zone %q set %q limit %d fuzzy %q", raw, sq, strings.TrimSpace(qv), zone, set, wantLimit, fuzzy)
		}

		// autocompleteNames: q from one character, limit to 20.
		aq, err := op.ParseAutocomplete(p)
		bad = bad[:0]
		if qn := utf8.RuneCountInString(strings.TrimSpace(qv)); len(values["q"]) != 1 || !utf8.ValidString(qv) || qn < 1 || qn > 200 {
			bad = append(bad, "q")
		}
		if zs := values["zone"]; len(zs) > 1 || len(zs) == 1 && zone != "intl" && zone != "jp" && zone != "chn" {
			bad = append(bad, "zone")
		}
		wantLimit, limitOK = intParam(values, "limit", 10, 1, 20)
		if !limitOK {
			bad = append(bad, "limit")
		}
		checkParamErrors(t, raw, err, bad)
		checkRendered(t, srv, raw, err, bad)
		if err == nil && (aq.Q != strings.TrimSpace(qv) || aq.Zone != zone || aq.Limit != int(wantLimit)) {
			t.Fatalf("%q: autocomplete %+v, want q %q zone %q limit %d", raw, aq, strings.TrimSpace(qv), zone, wantLimit)
		}
	})
}

// intParam is the rule for an integer parameter: absent is def; given once,
// plain decimal digits (leading zeros allowed) with a value from min to max.
func intParam(values url.Values, name string, def, min, max int64) (int64, bool) {
	vs, ok := values[name]
	switch {
	case !ok:
		return def, true
	case len(vs) != 1 || vs[0] == "":
		return def, false
	}
	digits := strings.TrimLeft(vs[0], "0")
	if strings.Trim(vs[0], "0123456789") != "" || len(digits) > 18 {
		return def, false
	}
	n, err := strconv.ParseInt("0"+digits, 10, 64)
	if err != nil || n < min || n > max {
		return def, false
	}
	return n, true
}

// first returns the value of a parameter given once, and "" otherwise.
func first(values url.Values, name string) string {
	if vs := values[name]; len(vs) == 1 {
		return vs[0]
	}
	return ""
}

// checkParamErrors asserts that err names exactly the parameters of want,
// in that order, once each, with a detail that stays short whatever the
// value.
func checkParamErrors(t *testing.T, raw string, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("%q: %v, want no error", raw, err)
		}
		return
	}
	pe := op.InvalidParams(err)
	if pe == nil {
		t.Fatalf("%q: error %T %v, want an invalid request naming %q", raw, err, err, want)
	}
	var named []string
	for _, e := range pe {
		if e.Parameter == "" || e.Detail == "" || len(e.Detail) > 512 {
			t.Fatalf("%q: error %+v: no parameter, or a detail empty or too long (%d bytes)", raw, e, len(e.Detail))
		}
		named = append(named, e.Parameter)
	}
	if !slices.Equal(named, want) {
		t.Fatalf("%q: errors name %q, want %q (%v)", raw, named, want, err)
	}
}

// checkRendered asserts that the error is answered as a 400 problem whose
// errors array names the parameters of want.
func checkRendered(t *testing.T, srv *Server, raw string, err error, want []string) {
	t.Helper()
	if err == nil {
		return
	}
	rec := httptest.NewRecorder()
	srv.writeError(rec, httptest.NewRequest(http.MethodGet, "/catalog/search", nil), err)
	if rec.Code != http.StatusBadRequest || rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("%q: answered %d %q, want a 400 problem", raw, rec.Code, rec.Header().Get("Content-Type"))
	}
	var p problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatalf("%q: problem body %q: %v", raw, rec.Body.Bytes(), err)
	}
	var named []string
	for _, e := range p.Errors {
		named = append(named, e.Parameter)
	}
	if p.Status != http.StatusBadRequest || p.Detail == "" || !slices.Equal(named, want) {
		t.Fatalf("%q: problem %+v, want a 400 naming %q", raw, p, want)
	}
}

// FuzzGzipQValue reads arbitrary Accept-Encoding values: nothing panics, the
// q-value is a number from 0 to 1, a value that does not name gzip gives
// 0, and a HEAD is never compressed.
func FuzzGzipQValue(f *testing.F) {
	for _, seed := range []string{
		"gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.8, *;q=0.1",
		"gzip;q=0", "gzip;q=NaN", "gzip;q=1e400", "gzip;q=0x1p-2", "gzip;;q=", "*;q=0",
		"\x00gzip", "GZIP ; Q = 0.5",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, ae string) {
		q := gzipQValue(ae)
		if !(q >= 0 && q <= 1) {
			t.Fatalf("gzipQValue(%q) = %v, not from 0 to 1", ae, q)
		}
		if q != 0 && !strings.Contains(strings.ToLower(ae), "gzip") {
			t.Fatalf("gzipQValue(%q) = %v for a value that does not name gzip", ae, q)
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Accept-Encoding", ae)
		if got := acceptsGzip(r); got != (q > 0) {
			t.Fatalf("acceptsGzip with %q = %v, but its q-value is %v", ae, got, q)
		}
		// A HEAD is never compressed, whatever it accepts: its Content-Length
		// must be the plain GET's.
		r.Method = http.MethodHead
		if acceptsGzip(r) {
			t.Fatalf("acceptsGzip of a HEAD with %q = true", ae)
		}
	})
}
