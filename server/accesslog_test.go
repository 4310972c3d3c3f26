package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"
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
