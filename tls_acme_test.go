package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"github.com/miekg/dns"
)

// pebbleCA is Pebble, Let's Encrypt's test ACME server, running in the
// test on loopback, with real validation of the challenges.
type pebbleCA struct {
	directory string         // the ACME directory URL
	serverPEM string         // file with the certificate of its HTTPS API
	roots     *x509.CertPool // the roots of the certificates it issues
	orders    atomic.Int64   // new orders placed (created)
	// tlsTarget and httpTarget are where TLS-ALPN-01 and HTTP-01
	// validations go.
	tlsTarget, httpTarget atomic.Pointer[string]
}

// startPebble starts Pebble. It validates TLS-ALPN-01 and HTTP-01 by
// connecting to every domain, resolved to 127.0.0.1 by a DNS server of its
// own, on ports that forward to the addresses given to validateOn.
func startPebble(t *testing.T) *pebbleCA {
	t.Helper()
	// Pebble pauses up to 5 s before each validation, to mimic a busy CA.
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	p := &pebbleCA{}
	logs := &lockedBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pebble's log:\n%s", logs.String())
		}
	})
	logger := log.New(logs, "pebble ", log.Lmicroseconds)

	store := db.NewMemoryStore()
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": {Description: "default"}})
	validator := va.New(logger, p.forwarder(t, &p.httpTarget), p.forwarder(t, &p.tlsTarget), false, loopbackDNS(t), store)
	front := wfe.New(logger, store, validator, authority, []string{"pebble.letsencrypt.org"}, false, false, 0, 0)
	api := front.Handler()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/order-plz" {
			api.ServeHTTP(w, r)
			return
		}
		// A request refused (Pebble rejects some nonces on purpose, and
		// the client tries again) places no order.
		rec := &statusRecorder{ResponseWriter: w}
		api.ServeHTTP(rec, r)
		if rec.status == http.StatusCreated {
			p.orders.Add(1)
		}
	}))
	t.Cleanup(srv.Close)
	p.directory = srv.URL + wfe.DirectoryPath
	p.serverPEM = filepath.Join(t.TempDir(), "pebble-api.pem")
	if err := os.WriteFile(p.serverPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	p.roots = x509.NewCertPool()
	p.roots.AddCert(authority.GetRootCert(0).Cert)
	return p
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// validateOn makes Pebble's TLS-ALPN-01 validations reach tlsAddr, and its
// HTTP-01 validations httpAddr.
func (p *pebbleCA) validateOn(tlsAddr, httpAddr string) {
	p.tlsTarget.Store(&tlsAddr)
	p.httpTarget.Store(&httpAddr)
}

// forwarder listens for Pebble's validation connections and returns its
// port; each connection is forwarded to the address in target, once there
// is one.
func (p *pebbleCA) forwarder(t *testing.T, target *atomic.Pointer[string]) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				deadline := time.Now().Add(30 * time.Second)
				for target.Load() == nil && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				to := target.Load()
				if to == nil {
					return
				}
				s, err := net.Dial("tcp", *to)
				if err != nil {
					return
				}
				defer s.Close()
				go io.Copy(s, c)
				io.Copy(c, s)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// loopbackDNS is a DNS server (over TCP, as Pebble asks) that resolves
// every name to 127.0.0.1; it returns its address.
func loopbackDNS(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{Listener: ln, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		for _, question := range q.Question {
			if question.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{
					Hdr: dns.RR_Header{Name: question.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
					A:   net.IPv4(127, 0, 0, 1),
				})
			}
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return ln.Addr().String()
}

// TestServeHTTPSWithACME runs serve --acme-domain against Pebble: serve
// obtains a certificate (Pebble validating TLS-ALPN-01 on serve's HTTPS
// port) before it is ready, answers HTTPS with it, and after a restart
// answers with the cached certificate without placing a new order.
func TestServeHTTPSWithACME(t *testing.T) {
	pebble := startPebble(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "catalog.db")
	importInto(t, db, "data/sample.json")
	idp := newTestIdP(t)
	const domain = "catalog.test"
	args := append(idp.args(), "--db", db, "--addr", "127.0.0.1:0",
		"--acme-directory", pebble.directory, "--acme-email", "ops@catalog.test", "--acme-http-addr", "127.0.0.1:0")
	// The CA's API is HTTPS with a certificate of its own, trusted the way
	// an operator trusts a private CA: SSL_CERT_FILE.
	env := []string{"SSL_CERT_FILE=" + pebble.serverPEM, "CATALOGD_ACME_DOMAIN=" + domain}

	p, addr := startServeLogged(t, env, args...)
	pebble.validateOn(addr, "127.0.0.1:1")
	_, port, _ := net.SplitHostPort(addr)
	if want := "https://" + domain + ":" + port + "/api/v1"; p.api != want {
		t.Fatalf("base URL %s, want %s", p.api, want)
	}
	ready := p.logged(t, "tls certificate ready", 60*time.Second)
	client := httpsClient(pebble.roots, addr)
	resp, body, _ := httpsGet(t, client, "https://"+domain+":"+port+"/readyz", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /readyz: %d %s", resp.StatusCode, body)
	}
	issued := resp.TLS.PeerCertificates[0]
	if issued.SerialNumber.String() != ready["serial"] || issued.VerifyHostname(domain) != nil {
		t.Fatalf("served certificate %s for %v, want %s for %s", issued.SerialNumber, issued.DNSNames, ready["serial"], domain)
	}
	wantHTTPSAnswers(t, client, p.api, idp.token(t, p.api+"/mcp"))
	if got := pebble.orders.Load(); got != 1 {
		t.Errorf("%d orders placed, want 1", got)
	}
	// A client calling by address (a probe) sends no server name: it gets
	// the domain's certificate.
	// (The name is then checked by the probe's own rules, not here.)
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatalf("a handshake without a server name: %v", err)
	}
	if got := conn.ConnectionState().PeerCertificates[0].SerialNumber; got.Cmp(issued.SerialNumber) != 0 {
		t.Errorf("a handshake without a server name got certificate %s, want %s", got, issued.SerialNumber)
	}
	conn.Close()
	// The HTTP-01 listener sends everything else to https.
	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	httpAddr, _ := p.logged(t, "serving", time.Second)["acme_http_addr"].(string)
	if httpAddr == "" {
		t.Fatal(`the "serving" line has no acme_http_addr`)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+httpAddr+"/api/v1/catalog/sets?zone=jp", nil)
	req.Host = domain
	resp, err = plain.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := "https://" + domain + "/api/v1/catalog/sets?zone=jp"; resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want {
		t.Errorf("plain HTTP GET: %d to %q, want 302 to %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	p.stop(t)

	cache := filepath.Join(dir, "catalogd-acme")
	st, err := os.Stat(cache)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("ACME cache %s: %v, mode %v; want a directory private to its owner", cache, err, st.Mode())
	}
	entries, _ := os.ReadDir(cache)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !strings.Contains(strings.Join(names, " "), domain) {
		t.Errorf("ACME cache holds %v, no certificate for %s", names, domain)
	}

	// A restart answers with the cached certificate, and asks the CA nothing.
	p, addr = startServeLogged(t, env, args...)
	p.logged(t, "tls certificate ready", 30*time.Second)
	_, port, _ = net.SplitHostPort(addr)
	resp, body, _ = httpsGet(t, httpsClient(pebble.roots, addr), "https://"+domain+":"+port+"/readyz", "")
	if resp.StatusCode != http.StatusOK || resp.TLS.PeerCertificates[0].SerialNumber.Cmp(issued.SerialNumber) != 0 {
		t.Fatalf("after a restart: %d %s with certificate %s, want 200 with the cached %s",
			resp.StatusCode, body, resp.TLS.PeerCertificates[0].SerialNumber, issued.SerialNumber)
	}
	if got := pebble.orders.Load(); got != 1 {
		t.Errorf("%d orders placed after a restart, want still 1", got)
	}
	p.stop(t)
}

// TestServeACMEHTTP01 has serve's HTTPS port out of the CA's reach, as
// behind a firewall that opens only port 80 to it: TLS-ALPN-01 fails, and
// serve gets its certificate by HTTP-01 on --acme-http-addr.
func TestServeACMEHTTP01(t *testing.T) {
	pebble := startPebble(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "catalog.db")
	importInto(t, db, "data/sample.json")
	idp := newTestIdP(t)
	const domain = "catalog.test"
	p, addr := startServeLogged(t, []string{"SSL_CERT_FILE=" + pebble.serverPEM}, append(idp.args(), "--db", db,
		"--addr", "127.0.0.1:0", "--acme-domain", domain, "--acme-directory", pebble.directory,
		"--acme-http-addr", "127.0.0.1:0")...)
	httpAddr, _ := p.logged(t, "serving", time.Second)["acme_http_addr"].(string)
	// Nothing listens on port 1: the TLS-ALPN-01 validation fails.
	pebble.validateOn("127.0.0.1:1", httpAddr)
	ready := p.logged(t, "tls certificate ready", 60*time.Second)
	_, port, _ := net.SplitHostPort(addr)
	resp, body, _ := httpsGet(t, httpsClient(pebble.roots, addr), "https://"+domain+":"+port+"/readyz", "")
	if resp.StatusCode != http.StatusOK || resp.TLS.PeerCertificates[0].SerialNumber.String() != ready["serial"] {
		t.Fatalf("GET /readyz: %d %s with certificate %s, want 200 with %s", resp.StatusCode, body, resp.TLS.PeerCertificates[0].SerialNumber, ready["serial"])
	}
	// The first order failed on TLS-ALPN-01; the second was validated by
	// HTTP-01.
	if got := pebble.orders.Load(); got != 2 {
		t.Errorf("%d orders placed, want 2", got)
	}
	p.stop(t)
}
