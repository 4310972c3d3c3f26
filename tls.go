package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"
)

// tlsOptions are serve's HTTPS flags: a certificate from files, or from an
// ACME CA (Let's Encrypt by default). docs/OPERATIONS.md explains both.
type tlsOptions struct {
	certFile      string
	keyFile       string
	acmeDomains   []string
	acmeEmail     string
	acmeDirectory string
	acmeHTTPAddr  string
}

func (t *tlsOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&t.certFile, "tls-cert", "", "serve HTTPS with this PEM certificate chain (with --tls-key); re-read when it changes")
	f.StringVar(&t.keyFile, "tls-key", "", "PEM private key of --tls-cert")
	f.StringSliceVar(&t.acmeDomains, "acme-domain", nil, "serve HTTPS with certificates obtained and renewed from an ACME CA for this domain (repeatable)")
	f.StringVar(&t.acmeEmail, "acme-email", "", "contact address given to the ACME CA for expiry and incident notices")
	f.StringVar(&t.acmeDirectory, "acme-directory", acme.LetsEncryptURL, "directory URL of the ACME CA")
	f.StringVar(&t.acmeHTTPAddr, "acme-http-addr", "", "address for ACME HTTP-01 challenges, redirecting other plain HTTP requests to https (off when empty; :80 to use it)")
}

// on reports whether serve speaks HTTPS.
func (t *tlsOptions) on() bool {
	return t.certFile != "" || t.keyFile != "" || len(t.acmeDomains) > 0
}

// acmeDomain is a name an ACME CA can validate by TLS-ALPN-01 or HTTP-01:
// a DNS name with at least two labels, no wildcard, no port.
var acmeDomain = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// check rejects TLS flags that cannot work together, and plain HTTP on
// port 443, where clients speak TLS: a TLS setting forgotten (an
// environment file without CATALOGD_ACME_DOMAIN) stops serve with a
// message rather than serving nothing a client can use.
func (t *tlsOptions) check(dev bool, addr string) error {
	acmeSet := len(t.acmeDomains) > 0
	_, port, _ := net.SplitHostPort(addr)
	switch {
	case !t.on() && port == "443":
		return usageErrorf("serve: --addr %q is the HTTPS port, and no certificate is set: give --acme-domain (CATALOGD_ACME_DOMAIN) or --tls-cert and --tls-key", addr)
	case dev && t.on():
		return usageErrorf("serve: --dev serves plain HTTP on loopback; do not combine it with --tls-cert, --tls-key or --acme-domain")
	case (t.certFile == "") != (t.keyFile == ""):
		return usageErrorf("serve: --tls-cert and --tls-key go together: give both files or neither")
	case t.certFile != "" && acmeSet:
		return usageErrorf("serve: --tls-cert and --acme-domain both set: certificates come from files or from an ACME CA, not both")
	case !acmeSet && (t.acmeEmail != "" || t.acmeHTTPAddr != "" || t.acmeDirectory != acme.LetsEncryptURL):
		return usageErrorf("serve: --acme-email, --acme-directory and --acme-http-addr need --acme-domain")
	}
	for i, d := range t.acmeDomains {
		d = strings.ToLower(strings.TrimSuffix(d, "."))
		if !acmeDomain.MatchString(d) || len(d) > 253 {
			return usageErrorf("serve: --acme-domain %q: want a DNS name such as catalog.example.com (no scheme, port or wildcard)", t.acmeDomains[i])
		}
		t.acmeDomains[i] = d
	}
	if acmeSet {
		u, err := url.Parse(t.acmeDirectory)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return usageErrorf("serve: --acme-directory %q: want the https URL of an ACME directory such as %s", t.acmeDirectory, acme.LetsEncryptURL)
		}
	}
	return nil
}

// hstsValue is the Strict-Transport-Security of every HTTPS answer: two
// years, the host alone (subdomains may be other services).
const hstsValue = "max-age=63072000"

// certWatchEvery is how often the certificate files are looked at: two
// stats, cheap, and it sees a renewal on any filesystem, Kubernetes'
// secret volumes (a symbolic link swapped) included.
const certWatchEvery = reloadEvery

// certSource gives the HTTPS listener its certificate and keeps it current.
type certSource interface {
	// getCertificate is tls.Config.GetCertificate.
	getCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error)
	// run keeps the certificate current until ctx ends.
	run(ctx context.Context)
	// unready says why no certificate fit to serve is in hand, "" when
	// one is.
	unready() string
	// host is the name clients are expected to use, for the default
	// --base-url; "" when none is known.
	host() string
	// kind names the source in the log.
	kind() string
}

// httpsFront is serve's HTTPS: the certificate source and, with ACME
// HTTP-01, the plain HTTP listener for challenges and redirects.
type httpsFront struct {
	certs       certSource
	challengeLn net.Listener // nil when --acme-http-addr is off
	challenge   http.Handler
	// challengeAddr is the address challengeLn listens on.
	challengeAddr string
}

// openHTTPS prepares serve's HTTPS from o, nil when TLS is off: the
// certificate files are loaded (a pair that does not load is an error at
// start), the ACME cache made and the challenge address listened on.
func openHTTPS(o serveOptions, log *slog.Logger) (*httpsFront, error) {
	t := o.tls
	if !t.on() {
		return nil, nil
	}
	if t.certFile != "" {
		files, err := loadCertFiles(t.certFile, t.keyFile, log, time.Now)
		if err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
		return &httpsFront{certs: files}, nil
	}
	a, err := newACMECerts(t, acmeCacheDir(o.db), log)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	f := &httpsFront{certs: a}
	if t.acmeHTTPAddr != "" {
		if f.challengeLn, err = net.Listen("tcp", t.acmeHTTPAddr); err != nil {
			return nil, fmt.Errorf("serve: acme http-01: listen on %s: %w", t.acmeHTTPAddr, err)
		}
		f.challenge = challengeHost(a.manager.HTTPHandler(nil))
		f.challengeAddr = f.challengeLn.Addr().String()
	}
	return f, nil
}

// logAttrs describe serve's TLS in its "serving" log line.
func (f *httpsFront) logAttrs() []slog.Attr {
	if f == nil {
		return nil
	}
	attrs := []slog.Attr{slog.String("tls", f.certs.kind())}
	if f.challengeAddr != "" {
		attrs = append(attrs, slog.String("acme_http_addr", f.challengeAddr))
	}
	return attrs
}

// challengeHost gives autocert's HTTP-01 handler the host of a challenge
// request without its port: a validation request to
// http://catalog.example.com:80/ (or to another port forwarded here) names
// the domain all the same, which autocert's host policy would refuse.
func challengeHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if host, _, err := net.SplitHostPort(r.Host); err == nil && strings.HasPrefix(r.URL.Path, "/.well-known/acme-challenge/") {
			r = r.WithContext(r.Context())
			r.Host = host
		}
		next.ServeHTTP(w, r)
	})
}

// close releases what openHTTPS opened and serve did not take over.
func (f *httpsFront) close() {
	if f != nil && f.challengeLn != nil {
		f.challengeLn.Close()
	}
}

// acmeCacheDir is where ACME account keys and certificates are kept:
// beside the catalogue, so that a unit's state directory holds both.
func acmeCacheDir(db string) string {
	return filepath.Join(filepath.Dir(db), "catalogd-acme")
}

// baseURL is the default --base-url over HTTPS: the certificate's name
// when one is known, else the address listened on.
func (f *httpsFront) baseURL(addr string) string {
	host := addr
	if name := f.certs.host(); name != "" {
		host = name
		if _, port, err := net.SplitHostPort(addr); err == nil && port != "443" {
			host = net.JoinHostPort(name, port)
		}
	}
	return "https://" + host + defaultAPIPath
}

// handler adds to every HTTPS answer what HTTPS promises: the
// Strict-Transport-Security header, and a /readyz that is not ready before
// a certificate is, nor once it has expired.
func (f *httpsFront) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", hstsValue)
		if r.URL.Path == "/readyz" {
			if why := f.certs.unready(); why != "" {
				writeUnready(w, why)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func writeUnready(w http.ResponseWriter, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintf(w, `{"status":"unavailable","detail":%q}`, detail)
}

// serve answers on ln with root in a hardened server: plain HTTP when f
// is nil (TLS off), else HTTPS, and the challenge listener if any. Each
// server's end goes to errc. stop, once srv is shut down, stops the rest.
func (f *httpsFront) serve(ctx context.Context, root http.Handler, ln net.Listener, log *slog.Logger, errc chan<- error) (srv *http.Server, stop func()) {
	if f == nil {
		srv = newHTTPServer(root, log, defaultLimits)
		go func() { errc <- srv.Serve(ln) }()
		return srv, func() {}
	}
	srv = newHTTPServer(f.handler(root), log, defaultLimits)
	srv.TLSConfig = &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: f.certs.getCertificate,
		// In order of preference: HTTP/2 first.
		NextProtos: []string{"h2", "http/1.1"},
	}
	if _, ok := f.certs.(*acmeCerts); ok {
		srv.TLSConfig.NextProtos = append(srv.TLSConfig.NextProtos, acme.ALPNProto)
	}
	ctx, cancel := context.WithCancel(ctx)
	go f.certs.run(ctx)
	go func() { errc <- srv.ServeTLS(ln, "", "") }()
	if f.challengeLn == nil {
		return srv, cancel
	}
	challenge := newHTTPServer(f.challenge, log, defaultLimits)
	challengeLn := f.challengeLn
	f.challengeLn = nil // challenge owns it now
	go func() { errc <- challenge.Serve(challengeLn) }()
	return srv, func() {
		cancel()
		challenge.Close()
	}
}

// certFiles is a certificate and key read from PEM files, read again when
// either file changes. A pair that does not load, or whose certificate is
// not valid now (expired, or not yet valid), is logged and the pair in use
// stays.
type certFiles struct {
	certFile, keyFile string
	log               *slog.Logger
	now               func() time.Time
	current           atomic.Pointer[tls.Certificate]
	// validFrom is when the pair last refused as not yet valid becomes
	// valid: the files unchanged, check loads it again from then.
	validFrom time.Time
	// seen are the files as last read or tried, so that a bad pair is
	// reported once, not every second.
	seenCert, seenKey os.FileInfo
}

// certExpiresSoon is how long before its expiry a certificate loaded
// from files is logged as a warning: certbot renews 30 days before, so a
// certificate this close to its end was not renewed.
const certExpiresSoon = 14 * 24 * time.Hour

func loadCertFiles(certFile, keyFile string, log *slog.Logger, now func() time.Time) (*certFiles, error) {
	c := &certFiles{certFile: certFile, keyFile: keyFile, log: log, now: now}
	if err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

// load reads the pair and, if it loads, makes it the one served.
func (c *certFiles) load() error {
	// Stat before reading: a change in between is then seen next time.
	c.seenCert, _ = os.Stat(c.certFile)
	c.seenKey, _ = os.Stat(c.keyFile)
	c.validFrom = time.Time{} // of the pair these files held before, if any
	// LoadX509KeyPair checks that the key is the certificate's, and fills
	// in Leaf unless GODEBUG=x509keypairleaf=0.
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err == nil && pair.Leaf == nil {
		pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0])
	}
	if err != nil {
		return fmt.Errorf("tls certificate %s, key %s: %w", c.certFile, c.keyFile, err)
	}
	leaf, now := pair.Leaf, c.now()
	if now.Before(leaf.NotBefore) {
		c.validFrom = leaf.NotBefore
	}
	if now.Before(leaf.NotBefore) || now.After(leaf.NotAfter) {
		return fmt.Errorf("tls certificate %s is valid from %s to %s, not now (%s)", c.certFile,
			leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if leaf.NotAfter.Sub(now) < certExpiresSoon {
		c.log.Warn("tls certificate expires soon; renew it", slog.String("certificate", c.certFile), slog.Time("not_after", leaf.NotAfter))
	}
	c.current.Store(&pair)
	return nil
}

func (c *certFiles) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.current.Load(), nil
}

// unready is not "" once the certificate served has expired: clients
// refuse it, and a load balancer should stop sending them here.
func (c *certFiles) unready() string {
	if leaf := c.current.Load().Leaf; c.now().After(leaf.NotAfter) {
		return "the TLS certificate expired at " + leaf.NotAfter.UTC().Format(time.RFC3339)
	}
	return ""
}

func (c *certFiles) kind() string { return "certificate files" }

func (c *certFiles) host() string {
	if leaf := c.current.Load().Leaf; leaf != nil && len(leaf.DNSNames) > 0 {
		return leaf.DNSNames[0]
	}
	return ""
}

func (c *certFiles) run(ctx context.Context) {
	tick := time.NewTicker(certWatchEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			c.check()
		}
	}
}

// check reloads the pair when either file is not as last seen, or when
// the pair refused as not yet valid has become valid.
func (c *certFiles) check() {
	cert, errCert := os.Stat(c.certFile)
	key, errKey := os.Stat(c.keyFile)
	if errCert == nil && errKey == nil && c.seenCert != nil && c.seenKey != nil &&
		sameFile(c.seenCert, cert) && sameFile(c.seenKey, key) &&
		(c.validFrom.IsZero() || c.now().Before(c.validFrom)) {
		return
	}
	if errCert != nil || errKey != nil {
		// Said once when a file goes, not every second while it is gone.
		if c.seenCert != nil && c.seenKey != nil {
			c.log.Warn("tls certificate files unavailable; serving the current certificate",
				slog.String("error", errors.Join(errCert, errKey).Error()))
		}
		c.seenCert, c.seenKey = nil, nil
		return
	}
	if err := c.load(); err != nil {
		c.log.Error("tls certificate reload failed; serving the current certificate", slog.String("error", err.Error()))
		return
	}
	leaf := c.current.Load().Leaf
	c.log.Info("tls certificate reloaded", slog.String("certificate", c.certFile),
		slog.String("serial", leaf.SerialNumber.String()), slog.Time("not_after", leaf.NotAfter))
}

// acmeCerts are certificates obtained and renewed by autocert, which
// answers TLS-ALPN-01 challenges on the HTTPS listener itself and HTTP-01
// on --acme-http-addr.
type acmeCerts struct {
	manager *autocert.Manager
	domains []string
	log     *slog.Logger
	have    atomic.Bool // every domain has had a certificate
}

func newACMECerts(t tlsOptions, cacheDir string, log *slog.Logger) (*acmeCerts, error) {
	// The cache holds the account's and the certificates' private keys.
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("acme cache: %w", err)
	}
	if err := os.Chmod(cacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("acme cache: %w", err)
	}
	m := &autocert.Manager{
		Prompt:     autocert.AcceptTOS,
		Cache:      autocert.DirCache(cacheDir),
		HostPolicy: autocert.HostWhitelist(t.acmeDomains...),
		Email:      t.acmeEmail,
		Client:     &acme.Client{DirectoryURL: t.acmeDirectory, UserAgent: "catalogd"},
	}
	return &acmeCerts{manager: m, domains: t.acmeDomains, log: log}, nil
}

func (a *acmeCerts) getCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if hello.ServerName == "" && a.have.Load() {
		// A client calling by IP address (a probe, curl on the machine)
		// sends no name: it gets the first domain's certificate, once
		// there is one, rather than a failed handshake.
		named := *hello
		named.ServerName = a.domains[0]
		return a.manager.GetCertificate(&named)
	}
	return a.manager.GetCertificate(hello)
}

func (a *acmeCerts) unready() string {
	if !a.have.Load() {
		return "no TLS certificate yet"
	}
	return ""
}

func (a *acmeCerts) host() string { return a.domains[0] }
func (a *acmeCerts) kind() string { return "acme" }

// acmeRetryFirst and acmeRetryMax bound the pause between attempts to get
// a first certificate: a CA limits failed validations per hour, and
// autocert answers a failed attempt's error for a minute before it tries
// again.
const (
	acmeRetryFirst = 2 * time.Minute
	acmeRetryMax   = time.Hour
)

// run gets a certificate for every domain at start, from the cache or the
// CA, rather than on the first partner's handshake, so that readiness means
// a certificate is in hand; autocert renews them from then on.
func (a *acmeCerts) run(ctx context.Context) {
	pause := acmeRetryFirst
	for _, d := range a.domains {
		for {
			cert, err := a.manager.GetCertificate(modernHello(d))
			if err == nil {
				a.log.Info("tls certificate ready", slog.String("domain", d), slog.String("serial", cert.Leaf.SerialNumber.String()))
				break
			}
			a.log.Error("tls certificate not obtained; trying again", slog.String("domain", d),
				slog.String("error", err.Error()), slog.String("retry_in", pause.String()))
			select {
			case <-ctx.Done():
				return
			case <-time.After(pause):
			}
			pause = min(2*pause, acmeRetryMax)
		}
	}
	a.have.Store(true)
}

// modernHello is the handshake of a current client for name: one that
// accepts an ECDSA certificate, the kind autocert obtains for such clients,
// so that they get the certificate obtained at start.
func modernHello(name string) *tls.ClientHelloInfo {
	return &tls.ClientHelloInfo{
		ServerName:       name,
		CipherSuites:     []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
		SignatureSchemes: []tls.SignatureScheme{tls.ECDSAWithP256AndSHA256},
		SupportedCurves:  []tls.CurveID{tls.CurveP256},
		SupportedProtos:  []string{"h2", "http/1.1"},
	}
}
