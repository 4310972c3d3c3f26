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
// required: .ci/test installs it.
func newBrowser(t *testing.T) (context.Context, *browserLog) {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("the API reference page is tested in Chromium, which is not installed: apt-get install chromium (.ci/test does): %v", err)
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
	// The browser has until shortly before the test binary's deadline: a
	// hang then fails here, with what the browser reported, rather than
	// in go test's panic, and a slow machine is held to no guess.
	limit := 5 * time.Minute
	if deadline, ok := t.Deadline(); ok {
		limit = min(limit, time.Until(deadline)-15*time.Second)
	}
	if limit < 30*time.Second {
		t.Fatalf("%v left before the test's deadline: too little for the browser", limit)
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, limit)
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

// referencePage is the reference page of one server, open in its own
// Chromium.
type referencePage struct {
	ctx    context.Context
	log    *browserLog
	origin string // the server's
}

// openReference loads docsURL in a fresh Chromium and waits until the
// page has rendered the document.
func openReference(t *testing.T, docsURL string) *referencePage {
	t.Helper()
	u, err := url.Parse(docsURL)
	if err != nil {
		t.Fatal(err)
	}
	ctx, l := newBrowser(t)
	p := &referencePage{ctx: ctx, log: l, origin: u.Scheme + "://" + u.Host}
	if err := chromedp.Do(ctx, chromedp.Navigate(docsURL)); err != nil {
		t.Fatal(err)
	}
	p.poll(t, "the operations", `document.body.dataset.reference === "ready" && document.querySelectorAll(".opblock").length > 0`)
	return p
}

// poll waits until the JavaScript expression js is true on the page.
func (p *referencePage) poll(t *testing.T, what, js string) {
	t.Helper()
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("waiting for %s: %v; browser errors: %q", what, err, p.log.errorsSoFar())
	}
}

func (p *referencePage) eval(t *testing.T, js string) string {
	t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// checkOperations checks that the page shows every operation of the
// document, and no Authorize button or password field: it asks for no
// token or secret.
func (p *referencePage) checkOperations(t *testing.T) {
	t.Helper()
	rendered, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".opblock")].map(b =>
		b.querySelector(".opblock-summary-method").textContent + " " +
		b.querySelector(".opblock-summary-path").getAttribute("data-path") + " " +
		b.querySelector(".opblock-summary-operation-id").textContent).sort()`))
	if err != nil {
		t.Fatal(err)
	}
	if want := documentOperations(t); !slices.Equal(rendered, want) {
		t.Errorf("the page shows the operations\n%q\nthe document has\n%q", rendered, want)
	}
	for _, op := range []string{"GET /catalog/cards getCards", "GET /catalog/sets/{code}/cards/{number} getSetCardsByNumber"} {
		if !slices.Contains(rendered, op) {
			t.Errorf("the page does not show %s", op)
		}
	}
	if n := p.eval(t, `String(document.querySelectorAll(".authorize, .auth-wrapper, input[type=password]").length)`); n != "0" {
		t.Errorf("%s Authorize buttons or password fields on the page", n)
	}
}

// checkBrowserLog checks what the browser reported: no error, and no
// request to another origin than the server's.
func (p *referencePage) checkBrowserLog(t *testing.T) {
	t.Helper()
	l := p.log
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.errors {
		t.Errorf("the browser reported an error: %s", e)
	}
	if len(l.requests) < 6 {
		t.Errorf("the browser logged only %d requests: %q", len(l.requests), l.requests)
	}
	for _, r := range offOrigin(l.requests, p.origin) {
		t.Errorf("a request left the origin %s: %s", p.origin, r)
	}
}

// getCardOp is the element of the getCard operation on the page.
const getCardOp = "#operations-catalogue-getCard"

// TestAPIReferenceInBrowser loads the reference page of serve --dev, whose
// start message names it, in headless Chromium: every operation of the
// OpenAPI document is on the page, nothing is logged as an error, no
// request leaves the server's origin, and "Try it out" on a card runs the
// request against the dev catalogue with the token the page fetched
// itself, and gets 200. The page of a production server, with the dev
// server as its identity provider, passes the same checks and offers no
// "Try it out".
func TestAPIReferenceInBrowser(t *testing.T) {
	// Parallel: most of its time is the browser's and the child's, and
	// the race run's longest package is this one.
	t.Parallel()
	args := []string{"--db", filepath.Join(t.TempDir(), "catalog.db")}
	if *updateScreenshot {
		// The default address, as a reader of the README would see it.
		args = append(args, "--addr", defaultAddr)
	}
	dev := startServe(t, args...)
	docsURL := dev.banner["reference"]
	if want := dev.api + "/docs"; docsURL != want {
		t.Fatalf("the start message names the reference %q, want %q", docsURL, want)
	}

	page := openReference(t, docsURL)
	page.checkOperations(t)
	// Try it out: the first example of getCard is a Japanese card.
	page.poll(t, "the dev token", `document.body.dataset.devToken === "ready"`)
	for _, sel := range []string{getCardOp + " .opblock-summary-control", getCardOp + " .try-out__btn", getCardOp + " .execute"} {
		page.poll(t, sel, `!!document.querySelector("`+sel+`")`)
		if err := chromedp.Do(page.ctx, chromedp.Click(sel)); err != nil {
			t.Fatalf("click %s: %v", sel, err)
		}
	}
	const answer = getCardOp + " .live-responses-table tbody"
	page.poll(t, "the answer", `!!document.querySelector("`+answer+` .response-col_status")`)
	shown := page.eval(t, `document.querySelector("`+answer+` .response-col_status").textContent.trim()`)
	body := page.eval(t, `document.querySelector("`+answer+` .response-col_description pre").textContent`)
	cardURL := dev.api + "/catalog/cards/jp-SV2a-025"
	page.log.mu.Lock()
	status := page.log.responses[cardURL]
	page.log.mu.Unlock()
	if status != 200 || !strings.HasPrefix(shown, "200") || !strings.Contains(body, "ピカチュウ") {
		t.Errorf("Try it out on getCard: GET %s answered %d; the page shows %q and %q; want 200 and the card ピカチュウ",
			cardURL, status, shown, body)
	}
	// The search's parameters, fuzzy among them.
	const searchOp = "#operations-catalogue-searchCards"
	page.poll(t, "searchCards", `!!document.querySelector("`+searchOp+` .opblock-summary-control")`)
	if err := chromedp.Do(page.ctx, chromedp.Click(searchOp+" .opblock-summary-control")); err != nil {
		t.Fatalf("click searchCards: %v", err)
	}
	page.poll(t, "searchCards' parameters", `!!document.querySelector("`+searchOp+` tr[data-param-name]")`)
	params := page.eval(t, `[...document.querySelectorAll("`+searchOp+` tr[data-param-name]")].map(r => r.dataset.paramName).join(" ")`)
	if params != "q zone set limit fuzzy" {
		t.Errorf("the page shows the parameters %q of searchCards, want q zone set limit fuzzy", params)
	}
	if *updateScreenshot {
		takeScreenshot(t, page, docsURL+"#/catalogue/getCard")
	}
	page.checkBrowserLog(t)

	t.Run("production", func(t *testing.T) {
		_, db, _ := importSample(t)
		origin := strings.TrimSuffix(dev.api, "/api/v1")
		cmd := catalogdCommand(t, "serve", "--addr", "127.0.0.1:0", "--db", db, "--issuer", origin)
		prod := &serveProcess{cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan error, 1)}
		cmd.Stderr = prod.stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { prod.exited <- cmd.Wait() }()
		t.Cleanup(func() { cmd.Process.Kill() })
		base, _ := prod.logged(t, "serving", 30*time.Second)["base_url"].(string)

		page := openReference(t, base+"/docs")
		page.checkOperations(t)
		page.poll(t, "getCard", `!!document.querySelector("`+getCardOp+` .opblock-summary-control")`)
		if err := chromedp.Do(page.ctx, chromedp.Click(getCardOp+" .opblock-summary-control")); err != nil {
			t.Fatal(err)
		}
		page.poll(t, "getCard's responses", `!!document.querySelector("`+getCardOp+` .responses-wrapper")`)
		if n := page.eval(t, `String(document.querySelectorAll(".try-out__btn, .execute").length)`); n != "0" {
			t.Errorf("the page of a production server has %s Try it out or Execute buttons, want none", n)
		}
		if got := page.eval(t, `document.querySelector(".servers select").value`); got != base {
			t.Errorf("the page names the server %q, want %q", got, base)
		}
		page.checkBrowserLog(t)
		prod.stop(t)
	})
}

func (l *browserLog) errorsSoFar() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.errors)
}

// takeScreenshot loads the page afresh at a deep link to one operation,
// which the page opens, and keeps a picture of the list of operations.
func takeScreenshot(t *testing.T, page *referencePage, link string) {
	t.Helper()
	if err := chromedp.Do(page.ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(link),
		chromedp.EmulateViewport(1280, 1500)); err != nil {
		t.Fatal(err)
	}
	page.poll(t, "the operation", `document.body.dataset.reference === "ready" && !!document.querySelector(".opblock.is-open .responses-wrapper")`)
	page.eval(t, `document.querySelector(".scheme-container").scrollIntoView(); ""`)
	png, err := chromedp.Run(page.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(referenceScreenshot, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
