package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// downloadEvery is the time between two downloads of the export: a
// partner's first sync, now and then, among the other requests.
const downloadEvery = 30 * time.Second

// downloadTimeout bounds one download of the whole export.
const downloadTimeout = 2 * time.Minute

// downloads downloads the export every downloadEvery from start until end,
// compressed and plain in turn, over HTTP/2 and HTTP/1.1 in turn, and
// tallies each as a request of kind exportCatalog.
func (t *traffic) downloads(ctx context.Context, start, end time.Time) {
	var d net.Dialer
	for n := 0; ; n++ {
		due := start.Add(time.Duration(n)*downloadEvery + downloadEvery/2)
		if !due.Before(end) || !sleepUntil(ctx, due) {
			return
		}
		client := &http.Client{Timeout: downloadTimeout, Transport: newTransport(t.roots, n%4 >= 2, d.DialContext)}
		a := t.download(client, n%2 == 0, due, t.runID+"-export-"+strconv.Itoa(n))
		client.CloseIdleConnections()
		t.tally.add(a)
	}
}

// download reads the whole export, checking it as it comes.
func (t *traffic) download(client *http.Client, gzipped bool, due time.Time, id string) (a answer) {
	a = answer{req: request{kind: exportCatalog, path: "/catalog/export"}, due: due, requestID: id, mark: -1}
	defer func() { a.latency = time.Since(due) }()
	hr, err := http.NewRequest(http.MethodGet, t.api+"/catalog/export", nil)
	if err != nil {
		a.problem = err.Error()
		return a
	}
	hr.Header.Set("Authorization", "Bearer "+t.token)
	hr.Header.Set("X-Request-Id", id)
	hr.Header.Set("Accept-Encoding", map[bool]string{true: "gzip", false: "identity"}[gzipped])
	resp, err := client.Do(hr)
	if err != nil {
		a.problem = "no answer: " + err.Error()
		return a
	}
	defer resp.Body.Close()
	a.status, a.proto, a.generation = resp.StatusCode, resp.Proto, resp.Header.Get("Catalog-Generation")
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		a.problem, a.body = "status "+strconv.Itoa(resp.StatusCode), string(body)
		return a
	}
	if a.generation == "" || resp.Header.Get("ETag") == "" {
		a.problem = "no ETag or Catalog-Generation"
		return a
	}
	var plain io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		if !gzipped {
			a.problem = "gzip answer to Accept-Encoding: identity"
			return a
		}
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			a.problem = "gzip body: " + err.Error()
			return a
		}
		plain = zr
	}
	a.problem = checkExport(plain, resp.ContentLength, resp.Header.Get("Content-Encoding") == "")
	return a
}

// checkExport reads a plain export to its end: it must be a snapshot's
// object, as long as its Content-Length says when it is not compressed.
func checkExport(r io.Reader, length int64, identity bool) string {
	head := make([]byte, len(`{"sets":[`))
	if _, err := io.ReadFull(r, head); err != nil || !bytes.Equal(head, []byte(`{"sets":[`)) {
		return fmt.Sprintf("export starts %q (%v)", head, err)
	}
	var last [1]byte
	n := int64(len(head))
	buf := make([]byte, 256<<10)
	for {
		m, err := r.Read(buf)
		if m > 0 {
			n += int64(m)
			last[0] = buf[m-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "reading the export: " + err.Error()
		}
	}
	if last[0] != '}' {
		return fmt.Sprintf("export ends with %q", last[:])
	}
	if identity && length >= 0 && n != length {
		return fmt.Sprintf("export of %d bytes, Content-Length %d", n, length)
	}
	return ""
}
