package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestAccessLineMatchesSlog encodes hostile values and checks the line
// says what slog's JSON handler would: the same members, the same values.
func TestAccessLineMatchesSlog(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 4, 5, 123456789, time.FixedZone("CET", 3600))
	l := accessLine{
		at: at, method: "GET", route: "getCard",
		path:   "/api/v1/catalog/cards/\"quoted\"\n\x01\xff\u2028カード",
		status: 404, bytes: 1234, elapsed: 12345678 * time.Nanosecond,
		clientID: "partner \"1\"", requestID: "req-1", remote: "[::1]:5000",
	}
	line := l.appendJSON(nil)
	if !bytes.HasSuffix(line, []byte("}\n")) || bytes.Count(line, []byte("\n")) != 1 {
		t.Fatalf("not one line: %q", line)
	}
	var got map[string]any
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("%v: %s", err, line)
	}

	var ref bytes.Buffer
	slog.New(slog.NewJSONHandler(&ref, nil)).LogAttrs(t.Context(), slog.LevelInfo, "request",
		slog.String("method", l.method), slog.String("route", l.route), slog.String("path", l.path),
		slog.Int("status", l.status), slog.Int64("bytes", l.bytes), slog.Float64("duration_ms", 12.345),
		slog.String("client_id", l.clientID), slog.String("request_id", l.requestID), slog.String("remote", l.remote))
	var want map[string]any
	if err := json.Unmarshal(ref.Bytes(), &want); err != nil {
		t.Fatal(err)
	}
	want["time"] = at.Format(time.RFC3339Nano)
	if len(got) != len(want) {
		t.Errorf("members %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
}

func TestAppendMillis(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0.000", 999 * time.Nanosecond: "0.000", time.Microsecond: "0.001", 1500 * time.Microsecond: "1.500",
		12*time.Second + 345678*time.Nanosecond: "12000.345", -time.Second: "0.000",
	} {
		if got := string(appendMillis(nil, d)); got != want {
			t.Errorf("appendMillis(%v) = %s, want %s", d, got, want)
		}
	}
}

// BenchmarkAccessLine is the access-log line of a getCard, as every
// request formats it.
func BenchmarkAccessLine(b *testing.B) {
	l := accessLine{
		at: time.Now(), method: "GET", route: "getCard", path: "/api/v1/catalog/cards/sv1a-en-001",
		status: 200, bytes: 343, elapsed: 31 * time.Microsecond,
		clientID: "partner-portal-42", requestID: "3f9a1c2b7d4e-1k7", remote: "127.0.0.1:53412",
	}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = l.appendJSON(buf[:0])
	}
}

func TestAppendRFC3339NanoIsTimeFormat(t *testing.T) {
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("CET", 3600), time.FixedZone("NPT", 5*3600+45*60), time.FixedZone("west", -7*3600-30*60)}
	base := time.Date(2026, 11, 21, 23, 59, 58, 0, time.UTC)
	for _, loc := range zones {
		for _, ns := range []int{0, 1, 10, 120000000, 123456789, 999999999, 500} {
			for _, sec := range []int{0, 1, 2, 3600} {
				at := base.Add(time.Duration(sec)*time.Second + time.Duration(ns)).In(loc)
				// Twice: the second call reads what the first kept.
				for range 2 {
					if got, want := string(appendRFC3339Nano([]byte("x"), at)), "x"+at.Format(time.RFC3339Nano); got != want {
						t.Errorf("appendRFC3339Nano(%v) = %s, want %s", at, got, want)
					}
				}
			}
		}
	}
	// The same second in another zone is another text.
	at := base.In(time.FixedZone("CET", 3600))
	appendRFC3339Nano(nil, at)
	if got, want := string(appendRFC3339Nano(nil, base)), base.Format(time.RFC3339Nano); got != want {
		t.Errorf("same second in UTC after CET: %s, want %s", got, want)
	}
}

func TestParseAccessLog(t *testing.T) {
	for in, want := range map[string]AccessLogPolicy{
		"all":        {Mode: AccessLogAll},
		"errors":     {Mode: AccessLogErrors},
		"none":       {Mode: AccessLogNone},
		"sample:1":   {Mode: AccessLogSample, Every: 1},
		"sample:100": {Mode: AccessLogSample, Every: 100},
	} {
		got, err := ParseAccessLog(in)
		if err != nil || got != want {
			t.Errorf("ParseAccessLog(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if got.String() != in {
			t.Errorf("%+v.String() = %q, want %q", got, got.String(), in)
		}
	}
	for _, in := range []string{"", "All", "sample", "sample:", "sample:0", "sample:-1", "sample:x", "sample:99999999999", "errors ", "debug"} {
		if _, err := ParseAccessLog(in); err == nil || !strings.Contains(err.Error(), "want all, errors, sample:N") {
			t.Errorf("ParseAccessLog(%q): %v, want the choices named", in, err)
		}
	}
}

// Each policy writes the lines it says, through the real server, and the
// metrics count every request, written or not. Slow requests are made
// slow by the policy (a threshold of a nanosecond, or of an hour), not by
// the clock.
func TestAccessLogPolicies(t *testing.T) {
	// Six requests: three answered 200, a 404, a 401 and a 400.
	requests := []struct {
		target string
		token  bool
		status int
	}{
		{"/catalog/cards/jp-SV1a-001", true, http.StatusOK},
		{"/catalog/sets", true, http.StatusOK},
		{"/catalog/cards/no-such-card", true, http.StatusNotFound},
		{"/catalog/search?q=pikachu", true, http.StatusOK},
		{"/catalog/sets", false, http.StatusUnauthorized},
		{"/catalog/search?q=", true, http.StatusBadRequest},
	}
	for _, c := range []struct {
		policy string
		slow   time.Duration
		want   []int // statuses of the lines written, in order
	}{
		{"all", time.Hour, []int{200, 200, 404, 200, 401, 400}},
		{"none", time.Nanosecond, nil},
		{"errors", time.Hour, []int{404, 401, 400}},
		{"errors", time.Nanosecond, []int{200, 200, 404, 200, 401, 400}},
		// The first of every two of the others: the first and the fourth
		// request (the second and third are a 200 and a 404).
		{"sample:2", time.Hour, []int{200, 404, 200, 401, 400}},
		{"sample:1000", time.Hour, []int{200, 404, 401, 400}},
	} {
		t.Run(c.policy+"-slow-"+c.slow.String(), func(t *testing.T) {
			var logs syncBuffer
			reg := prometheus.NewRegistry()
			f := newFixtureWith(t, func(cfg *Config) {
				cfg.AccessLog = &logs
				policy, err := ParseAccessLog(c.policy)
				if err != nil {
					t.Fatal(err)
				}
				policy.Slow = c.slow
				cfg.AccessLogPolicy = policy
				recordMetrics(t, reg, cfg)
			})
			for _, r := range requests {
				var resp *response
				if r.token {
					resp = f.get(r.target)
				} else {
					resp = f.do(http.MethodGet, r.target, "Authorization", "")
				}
				resp.wantStatus(t, r.status)
			}
			var got []int
			for _, line := range accessLines(t, &logs) {
				got = append(got, int(line["status"].(float64)))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("lines of statuses %v, want %v", got, c.want)
			}
			page := scrape(t, reg)
			wantSeries(t, page,
				fmt.Sprintf(`catalogd_access_log_lines_total{result="written"} %d`, len(c.want)),
				fmt.Sprintf(`catalogd_access_log_lines_total{result="skipped"} %d`, len(requests)-len(c.want)),
				`catalogd_http_requests_total{route="getCard",status="200"} 1`,
				`catalogd_http_requests_total{route="getCard",status="404"} 1`,
				`catalogd_http_requests_total{route="listSets",status="200"} 1`,
				`catalogd_http_requests_total{route="listSets",status="401"} 1`,
				`catalogd_http_requests_total{route="search",status="200"} 1`,
				`catalogd_http_requests_total{route="search",status="400"} 1`,
			)
		})
	}
}

// TestOperationsNamesEveryRoute: docs/OPERATIONS.md lists the values of
// the route field of the access log and the metrics; every route the
// server registers is among them.
func TestOperationsNamesEveryRoute(t *testing.T) {
	doc, err := os.ReadFile("../docs/OPERATIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented string
	for line := range strings.Lines(string(doc)) {
		if strings.HasPrefix(line, "| `route` |") {
			documented = line
		}
	}
	if documented == "" {
		t.Fatal("docs/OPERATIONS.md has no row for the route field")
	}
	reg := prometheus.NewRegistry()
	newFixtureWith(t, func(cfg *Config) { recordMetrics(t, reg, cfg) })
	routes := regexp.MustCompile(`catalogd_http_requests_total\{route="([^"]+)",status="200"\}`).FindAllStringSubmatch(scrape(t, reg), -1)
	if len(routes) < 10 {
		t.Fatalf("%d routes on the metrics page, want every route's series", len(routes))
	}
	for _, m := range routes {
		if !strings.Contains(documented, "`"+m[1]+"`") {
			t.Errorf("route %s is not in docs/OPERATIONS.md's list of routes", m[1])
		}
	}
}
