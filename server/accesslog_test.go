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
