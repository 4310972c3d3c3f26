package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catalogd/catalogd/server"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"go.yaml.in/yaml/v3"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "rewrite "+referenceScreenshot+" from the browser test")

// referenceScreenshot is the picture of the reference page the README shows.
const referenceScreenshot = "docs/api-reference.png"

// browserLog is what the browser reported about a page: every request it
// sent, every answer, and every console message of the error level.
type browserLog struct {
	mu        sync.Mutex
	requests  []string
	responses map[string]int64 // status by URL
	errors    []string
}

func (l *browserLog) record(ev any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		l.requests = append(l.requests, ev.Request.URL)
	case *network.EventResponseReceived:
		l.responses[ev.Response.URL] = ev.Response.Status
	case *network.EventLoadingFailed:
		if ev.BlockedReason != "" {
			l.errors = append(l.errors, fmt.Sprintf("request blocked (%s): %s", ev.BlockedReason, ev.ErrorText))
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			l.errors = append(l.errors, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		l.errors = append(l.errors, fmt.Sprintf("uncaught exception at %s:%d: %s", d.URL, d.LineNumber, msg))
	case *log.EventEntryAdded:
		// Content-Security-Policy violations and failed loads land here.
		if ev.Entry.Level == log.EntryLevelError {
			l.errors = append(l.errors, fmt.Sprintf("browser log (%s): %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
		}
	}
}

// offOrigin returns the requests that went to another origin than origin.
// data: URLs (the page's inline icons) are no requests on the network.
func offOrigin(requests []string, origin string) []string {
	var out []string
	for _, r := range requests {
		u, err := url.Parse(r)
		if err == nil && u.Scheme == "data" {
			continue
		}
		if err != nil || u.Scheme+"://"+u.Host != origin {
			out = append(out, r)
		}
	}
	return out
}

func TestOffOrigin(t *testing.T) {
	origin := "http://127.0.0.1:8080"
	got := offOrigin([]string{
		origin + "/api/v1/docs", "data:image/svg+xml;base64,AAAA", "https://validator.swagger.io/validator",
		"http://127.0.0.1:8081/x", "https://127.0.0.1:8080/x", "http://localhost:8080/x",
	}, origin)
	want := []string{"https://validator.swagger.io/validator", "http://127.0.0.1:8081/x", "https://127.0.0.1:8080/x", "http://localhost:8080/x"}
	if !slices.Equal(got, want) {
		t.Errorf("offOrigin: %q, want %q", got, want)
	}
}

// newBrowser starts Debian's headless Chromium with a fresh profile and
// returns a tab that records what the browser reports. Chromium is
// required: .ci/run installs it.
func newBrowser(t *testing.T) (context.Context, *browserLog) {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("the API reference page is tested in Chromium, which is not installed: apt-get install chromium (.ci/run does): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // Chromium refuses its sandbox as root, as CI runs
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
		// Without these, Chromium reaches for Google's hosts by itself.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-sync", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	l := &browserLog{responses: map[string]int64{}}
	if err := chromedp.Listen(ctx, l.record); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx, l
}

// documentOperations lists the operations of the OpenAPI document as
// "GET /catalog/sets listSets".
func documentOperations(t *testing.T) []string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `yaml:"operationId"`
		} `yaml:"paths"`
	}
	if err := yaml.Unmarshal(server.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for path, item := range doc.Paths {
		for method, op := range item {
			ops = append(ops, strings.ToUpper(method)+" "+path+" "+op.OperationID)
		}
	}
	slices.Sort(ops)
	return ops
}

// TestAPIReferenceInBrowser loads the reference page of serve --dev, whose
// start message names it, in headless Chromium: every operation of the
// OpenAPI document is on the page, nothing is logged as an error, no
// request leaves the server's origin, and "Try it out" on a card runs the
// request against the dev catalogue with the token the page fetched
// itself, and gets 200.
func TestAPIReferenceInBrowser(t *testing.T) {
	args := []string{"--db", filepath.Join(t.TempDir(), "catalog.db")}
	if *updateScreenshot {
		// The default address, as a reader of the README would see it.
		args = append(args, "--addr", defaultAddr)
	}
	p := startServe(t, args...)
	docsURL := p.banner["reference"]
	if want := p.api + "/docs"; docsURL != want {
		t.Fatalf("the start message names the reference %q, want %q", docsURL, want)
	}
	u, _ := url.Parse(p.api)
	origin := u.Scheme + "://" + u.Host

	ctx, l := newBrowser(t)
	poll := func(what, js string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
			t.Fatalf("waiting for %s: %v; browser errors: %q", what, err, l.errorsSoFar())
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(docsURL)); err != nil {
		t.Fatal(err)
	}
	poll("the operations", `document.body.dataset.reference === "ready" && document.querySelectorAll(".opblock").length > 0`)
	rendered, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".opblock")].map(b =>
		b.querySelector(".opblock-summary-method").textContent + " " +
		b.querySelector(".opblock-summary-path").getAttribute("data-path") + " " +
		b.querySelector(".opblock-summary-operation-id").textContent).sort()`))
	if err != nil {
		t.Fatal(err)
	}
	if want := documentOperations(t); !slices.Equal(rendered, want) {
		t.Errorf("the page shows the operations\n%q\nthe document has\n%q", rendered, want)
	}
	// The page asks for no token: it has no Authorize button and no field
	// for one.
	fields, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".authorize, .btn.authorize, input[type=password]").length`))
	if err != nil || fields != 0 {
		t.Errorf("%d Authorize buttons or password fields on the page (%v)", fields, err)
	}

	// Try it out: the first example of getCard is a Japanese card.
	const op = "#operations-catalogue-getCard"
	poll("the dev token", `document.body.dataset.devToken === "ready"`)
	if err := chromedp.Do(ctx, chromedp.Click(op+" .opblock-summary-control")); err != nil {
		t.Fatal(err)
	}
	poll("Try it out", `!!document.querySelector("`+op+` .try-out__btn")`)
	if err := chromedp.Do(ctx, chromedp.Click(op+" .try-out__btn")); err != nil {
		t.Fatal(err)
	}
	poll("Execute", `!!document.querySelector("`+op+` .execute")`)
	if err := chromedp.Do(ctx, chromedp.Click(op+" .execute")); err != nil {
		t.Fatal(err)
	}
	poll("the response", `!!document.querySelector("`+op+` .live-responses-table tbody .response-col_status")`)
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("`+op+` .live-responses-table tbody .response-col_status").textContent.trim()`))
	if err != nil {
		t.Fatal(err)
	}
	cardURL := p.api + "/catalog/cards/jp-SV2a-025"
	l.mu.Lock()
	status := l.responses[cardURL]
	l.mu.Unlock()
	if status != 200 || !strings.HasPrefix(shown, "200") {
		t.Errorf("Try it out on getCard: GET %s answered %d, the page shows %q; want 200", cardURL, status, shown)
	}
	body, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("`+op+` .live-responses-table tbody .response-col_description pre").textContent`))
	if err != nil || !strings.Contains(body, "ピカチュウ") {
		t.Errorf("the page shows the answer %q (%v), want the card ピカチュウ", body, err)
	}

	if *updateScreenshot {
		takeScreenshot(t, ctx, docsURL+"#/catalogue/getCard", poll)
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.errors {
		t.Errorf("the browser reported an error: %s", e)
	}
	if len(l.requests) < 6 {
		t.Errorf("the browser logged only %d requests: %q", len(l.requests), l.requests)
	}
	for _, r := range offOrigin(l.requests, origin) {
		t.Errorf("a request left the origin %s: %s", origin, r)
	}
}

func (l *browserLog) errorsSoFar() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.errors)
}

// takeScreenshot loads the page afresh at a deep link to one operation,
// which the page opens, and keeps a picture of the list of operations.
func takeScreenshot(t *testing.T, ctx context.Context, link string, poll func(what, js string)) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(link),
		chromedp.EmulateViewport(1280, 1500)); err != nil {
		t.Fatal(err)
	}
	poll("the operation", `document.body.dataset.reference === "ready" && !!document.querySelector(".opblock.is-open .responses-wrapper")`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector(".scheme-container").scrollIntoView(); true`)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(referenceScreenshot, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
