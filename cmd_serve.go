package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/catalogd/catalogd/catalog/store"
	"github.com/catalogd/catalogd/data"
	"github.com/catalogd/catalogd/importer"
	"github.com/catalogd/catalogd/internal/gcheadroom"
	"github.com/catalogd/catalogd/internal/logbuf"
	"github.com/catalogd/catalogd/server"
	"github.com/catalogd/catalogd/server/auth"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"golang.org/x/net/netutil"
)

const (
	defaultAddr    = "127.0.0.1:8080"
	defaultAPIPath = "/api/v1"
	// defaultShutdownGrace bounds how long in-flight requests may run on
	// after a SIGTERM before the process exits anyway: less than the 30 s
	// systemd and Kubernetes wait before they kill it.
	defaultShutdownGrace = 20 * time.Second
	// logFlushEvery is how long an access-log line may wait to be written
	// with others: one write per request would cost more than the line.
	logFlushEvery = 100 * time.Millisecond
	// defaultGCHeadroom is the MiB the heap may grow by between
	// collections (internal/gcheadroom says why), at most maxGCHeadroom.
	defaultGCHeadroom = 16
	maxGCHeadroom     = 1 << 10
	// maxAnswerCache bounds --answer-cache-mb (MiB) at 1 TiB, far past any machine.
	maxAnswerCache = 1 << 20

	// defaultMaxConns bounds what connections hold, whatever clients do: a
	// client that sends a header slowly holds some 64 KiB until
	// ReadHeaderTimeout, an idle one some 18 KiB until IdleTimeout, and a
	// connection beyond the limit waits in the kernel's queue, holding
	// nothing of serve's (docs/OPERATIONS.md, Connections).
	defaultMaxConns = 1024
)

type serveOptions struct {
	db          string
	addr        string
	baseURL     string
	issuer      string
	jwksURL     string
	audience    string
	authURL     string
	denyClients []string
	metricsAddr string
	rateLimit   float64
	rateBurst   int
	answerCache int // MiB
	gcHeadroom  int // MiB
	maxConns    int
	maxDownload int
	maxInFlight int
	accessLog   string
	slowRequest time.Duration
	grace       time.Duration
	dev         bool
	devClientID string
	devSecret   string
	tls         tlsOptions
}

func newServeCommand(e *env) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve [--db PATH] [--addr HOST:PORT] [--base-url URL] [--issuer URL] ... [--dev]",
		Short: "Serve the catalogue API (REST and MCP)",
		Long: `serve answers the partner catalogue API from the catalogue file, behind OAuth
bearer tokens issued by --issuer. With --dev it needs nothing: it serves the
built-in sample catalogue when --db does not exist and issues its own tokens.`,
		Args:        noArgs,
		Annotations: map[string]string{annotationLogsJSON: "true"},
		// The settings are checked before anything runs, and apart from
		// running, so that deploy/'s tests check them as serve does.
		PreRunE: func(cmd *cobra.Command, args []string) error { return o.check() },
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), e, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.db, "db", defaultDB, "catalogue file")
	f.StringVar(&o.addr, "addr", defaultAddr, "address to listen on")
	f.StringVar(&o.baseURL, "base-url", "", "public URL of the API; routes are mounted under its path (default http://{addr}/api/v1; with TLS https://{certificate's name or addr}/api/v1)")
	f.StringVar(&o.issuer, "issuer", "", "token issuer (the identity provider's URL, exactly as in the tokens' iss)")
	f.StringVar(&o.jwksURL, "jwks-url", "", "JWKS URL (default: discovered from {issuer}/.well-known/openid-configuration)")
	f.StringVar(&o.audience, "audience", "", "token audience (default {base-url}/mcp)")
	f.StringVar(&o.authURL, "auth-url", "", "authorization server announced to clients (default {issuer})")
	f.StringSliceVar(&o.denyClients, "deny-client", nil, "client id whose tokens are refused (repeatable)")
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "address for Prometheus metrics (off when empty)")
	f.IntVar(&o.maxConns, "max-conns", defaultMaxConns, "connections served at once; more wait to be accepted (0: no limit)")
	f.IntVar(&o.maxDownload, "max-downloads", server.DefaultMaxDownloads, "exports sent at once, about 2 MB each; one more is answered 503")
	f.IntVar(&o.maxInFlight, "max-client-requests", server.DefaultMaxClientRequests, "requests one client (token's client id) may have in flight over every connection and stream; one more is answered 429")
	f.StringVar(&o.accessLog, "access-log", "all", "requests the access log writes: all, errors (status 400 or more, an answer cut short, or slower than --slow-request), sample:N (those, and 1 in N of the others) or none; the metrics count every request")
	f.DurationVar(&o.slowRequest, "slow-request", server.DefaultSlowRequest, "duration from which --access-log errors and sample:N write a request")
	f.DurationVar(&o.grace, "shutdown-grace", defaultShutdownGrace, "how long requests in flight may run on after SIGTERM before their connections are closed (0: at once); with 5 s for the last log lines, keep it below the time the service manager waits before it kills serve")
	f.Float64Var(&o.rateLimit, "rate-limit", 0, "requests per second each client may make (off when 0)")
	f.IntVar(&o.rateBurst, "rate-burst", 0, "requests a client may make at once (default: one second's worth, at least 1)")
	f.IntVar(&o.answerCache, "answer-cache-mb", server.DefaultAnswerCache>>20, "MiB of recent answers of pages of a set, searches, autocompletes and change lists kept in memory (0: none)")
	f.IntVar(&o.gcHeadroom, "gc-headroom-mb", defaultGCHeadroom, "MiB the heap may grow by above the live heap between garbage collections, never less than Go's default (0: Go's default; GOGC in the environment wins)")
	f.BoolVar(&o.dev, "dev", false, "development mode: built-in sample catalogue and a local token issuer, loopback only")
	f.StringVar(&o.devClientID, "dev-client-id", "dev", "client id of the dev token issuer")
	f.StringVar(&o.devSecret, "dev-client-secret", "", "client secret of the dev token issuer (default: random, printed at start)")
	o.tls.addFlags(f)
	return cmd
}

// runServe serves until ctx is done; newServeCommand has checked o.
func runServe(ctx context.Context, e *env, o serveOptions) error {
	// Go ends a process on a closed stderr pipe unless SIGPIPE is notified.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	// One writer for every log line: access-log lines wait up to
	// logFlushEvery to be written together, other lines go at once, and no
	// two lines interleave even when stderr is a pipe.
	logs := logbuf.New(e.stderr, logFlushEvery)
	defer logs.Close()
	log := slog.New(slog.NewJSONHandler(logs, nil))
	gcHeadroom := o.gcHeadroomMiB(e.getenv)
	if gcHeadroom > 0 {
		defer gcheadroom.Keep(uint64(gcHeadroom) << 20)()
	}
	// From the start, so that a SIGHUP sent early does not end the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	ln, https, err := o.listen(log)
	if err != nil {
		return err
	}
	defer ln.Close()
	defer https.close()
	// Look before opening: a new file renamed over --db in between is then
	// noticed by the first reload check.
	seen, _ := os.Stat(o.db)
	db, cleanup, err := openCatalog(ctx, o)
	if err != nil {
		return err
	}
	defer cleanup()
	live := store.NewLive(db)
	defer live.Close()
	reg, metrics, err := newMetrics(live, logs)
	if err != nil {
		return err
	}
	accessLog, _ := o.accessLogPolicy() // checked
	dev, verifier, err := o.authenticator(ctx, log)
	if err != nil {
		return err
	}
	defer verifier.Close()
	api, err := server.New(server.Config{Catalog: live, BaseURL: o.baseURL, Audience: o.audience,
		Logger: log, AccessLog: logs.Batched(), AccessLogPolicy: accessLog, Metrics: metrics, RateLimit: o.rateLimits(),
		AnswerCache: o.answerCacheBytes(), MaxDownloads: o.maxDownload, MaxClientRequests: o.maxInFlight, Auth: verifier, DevIssuer: dev,
		AuthorizationServers: []string{o.authURL}})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}

	errc := make(chan error, 3)
	metricsSrv, err := o.serveMetrics(reg, log, errc)
	if err != nil {
		return err
	}
	srv, stopHTTPS := https.serve(ctx, api, ln, log, errc)
	defer stopHTTPS()
	rctx, stopReloads := context.WithCancel(ctx)
	defer stopReloads()
	go newReloader(o.db, live, seen, log, metrics).run(rctx, reloadEvery, hup)

	logServing(ctx, log, o, ln, db, verifier.Ready(), gcHeadroom, metricsSrv, https)
	if dev != nil {
		if err := printDevBanner(e.stdout, o, dev, db.Path()); err != nil {
			return err
		}
	}

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	stopReloads()
	return shutdown(log, srv, metricsSrv, o.grace)
}

// logServing writes the "serving" line: where, what and with which keys.
func logServing(ctx context.Context, log *slog.Logger, o serveOptions, ln net.Listener, db *store.DB, keysLoaded bool, gcHeadroom int, metricsSrv *http.Server, https *httpsFront) {
	attrs := []slog.Attr{slog.String("addr", ln.Addr().String()), slog.String("base_url", o.baseURL),
		slog.String("catalogue", db.Path()), slog.String("generation", db.Info().Generation),
		slog.String("issuer", o.issuer), slog.Bool("keys_loaded", keysLoaded),
		slog.Int("gc_headroom_mb", gcHeadroom)}
	if metricsSrv != nil {
		attrs = append(attrs, slog.String("metrics_addr", metricsSrv.Addr))
	}
	attrs = append(attrs, https.logAttrs()...)
	log.LogAttrs(ctx, slog.LevelInfo, "serving", attrs...)
}

// shutdown stops accepting and lets the requests in flight finish, for at
// most grace, then closes the connections of those still running:
// a download to a slow client may last far longer (each write moves its
// deadline on), and a stop that was asked for is a stop, not a failure
// for systemd or Kubernetes to report.
func shutdown(log *slog.Logger, srv, metricsSrv *http.Server, grace time.Duration) error {
	log.Info("shutting down: finishing requests in flight")
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if metricsSrv != nil {
		// Scrapes during the drain still see the last requests counted.
		defer metricsSrv.Close()
	}
	if err := srv.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
		log.Warn("requests still in flight after the grace period: closing their connections", slog.String("grace", grace.String()))
		if err := srv.Close(); err != nil {
			return fmt.Errorf("serve: shutdown: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// gcHeadroomMiB is the heap headroom to keep: --gc-headroom-mb, or none
// when GOGC is in the environment, which wins.
func (o *serveOptions) gcHeadroomMiB(getenv func(string) string) int {
	if getenv("GOGC") != "" {
		return 0
	}
	return o.gcHeadroom
}

// listen listens on --addr and prepares HTTPS when it is on, then fills in
// the URLs that depend on the address listened on.
func (o *serveOptions) listen(log *slog.Logger) (net.Listener, *httpsFront, error) {
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return nil, nil, fmt.Errorf("serve: listen on %s: %w", o.addr, err)
	}
	if o.maxConns > 0 {
		ln = netutil.LimitListener(ln, o.maxConns)
	}
	https, err := openHTTPS(*o, log)
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	if https != nil && o.baseURL == "" {
		o.baseURL = https.baseURL(ln.Addr().String())
	}
	o.resolveURLs(ln.Addr().String())
	return ln, https, nil
}

// newMetrics registers the process's and catalogd's series.
func newMetrics(live *store.Live, logs *logbuf.Writer) (*prometheus.Registry, *server.Metrics, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics, err := server.NewMetrics(reg, live)
	if err == nil {
		err = metrics.CountDroppedLogLines(reg, logs.Dropped)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("serve: %w", err)
	}
	return reg, metrics, nil
}

// serveMetrics serves reg on --metrics-addr, when it is set; the server's
// end goes to errc. Its Addr is the address listened on.
func (o *serveOptions) serveMetrics(reg *prometheus.Registry, log *slog.Logger, errc chan<- error) (*http.Server, error) {
	if o.metricsAddr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", o.metricsAddr)
	if err != nil {
		return nil, fmt.Errorf("serve: metrics: listen on %s: %w", o.metricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}))
	srv := newHTTPServer(mux, log, defaultLimits)
	srv.Addr = ln.Addr().String()
	go func() { errc <- srv.Serve(ln) }()
	return srv, nil
}

// authenticator returns the dev issuer, with --dev, and the verifier of
// bearer tokens, which trusts it or the identity provider of --issuer.
func (o *serveOptions) authenticator(ctx context.Context, log *slog.Logger) (*auth.DevIssuer, *auth.Verifier, error) {
	var dev *auth.DevIssuer
	if o.dev {
		var err error
		if dev, err = o.devIssuer(); err != nil {
			return nil, nil, err
		}
	}
	verifier, err := o.verifier(ctx, dev, log)
	return dev, verifier, err
}

// verifier checks the bearer tokens of --issuer, or, with --dev, those of
// the dev issuer, whose key it is handed.
func (o *serveOptions) verifier(ctx context.Context, dev *auth.DevIssuer, log *slog.Logger) (*auth.Verifier, error) {
	cfg := auth.Config{Issuer: o.issuer, JWKSURL: o.jwksURL, Audience: o.audience, DenyClients: o.denyClients, Logger: log}
	if dev != nil {
		jwks, err := dev.JWKS()
		if err != nil {
			return nil, fmt.Errorf("serve: dev signing key: %w", err)
		}
		cfg.JWKS = jwks
	}
	v, err := auth.NewVerifier(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	return v, nil
}

// answerCacheBytes is --answer-cache-mb as server.Config wants it.
func (o *serveOptions) answerCacheBytes() int64 {
	if o.answerCache == 0 {
		return -1
	}
	return int64(o.answerCache) << 20
}

// The bounds of --rate-limit and --rate-burst: a slower rate or a larger
// burst refills over centuries, past what the RateLimit headers' seconds
// and Go's durations hold.
const (
	minRateLimit = 0.001 // a request every 1,000 s
	maxRateLimit = 1e6
	maxRateBurst = 1_000_000
)

// rateLimits is the per-client budget of --rate-limit and --rate-burst.
func (o *serveOptions) rateLimits() server.RateLimit {
	burst := o.rateBurst
	if burst == 0 {
		burst = max(1, int(math.Ceil(o.rateLimit)))
	}
	return server.RateLimit{PerSecond: o.rateLimit, Burst: burst}
}

// check rejects combinations that cannot be served safely.
func (o *serveOptions) check() error {
	if o.dev {
		if o.issuer != "" || o.jwksURL != "" {
			return usageErrorf("serve: --dev issues its own tokens; do not combine it with --issuer or --jwks-url")
		}
		host, _, err := net.SplitHostPort(o.addr)
		if err != nil {
			return usageErrorf("serve: --addr %q: %v", o.addr, err)
		}
		if !auth.LoopbackHost(host) {
			return usageErrorf("serve: --dev listens on loopback only; --addr %q is not a loopback address (use 127.0.0.1 or [::1])", o.addr)
		}
	} else if o.issuer == "" {
		return usageErrorf("serve: no token issuer: set --issuer (CATALOGD_ISSUER) to your identity provider's URL, or use --dev for a local one; catalogd never serves without authentication")
	}
	if o.answerCache < 0 || o.answerCache > maxAnswerCache {
		return usageErrorf("serve: --answer-cache-mb %d: want 0 (no cache) to %d", o.answerCache, maxAnswerCache)
	}
	if o.maxDownload < 1 {
		return usageErrorf("serve: --max-downloads %d: want 1 or more", o.maxDownload)
	}
	if _, err := o.accessLogPolicy(); err != nil {
		return usageErrorf("serve: %v", err)
	}
	if o.maxInFlight < 1 {
		return usageErrorf("serve: --max-client-requests %d: want 1 or more", o.maxInFlight)
	}
	if o.grace < 0 {
		return usageErrorf("serve: --shutdown-grace %v: want 0 (close every connection at once) or more", o.grace)
	}
	if o.maxConns < 0 {
		return usageErrorf("serve: --max-conns %d: want a number of connections (0 for no limit)", o.maxConns)
	}
	if o.gcHeadroom < 0 || o.gcHeadroom > maxGCHeadroom {
		return usageErrorf("serve: --gc-headroom-mb %d: want 0 (Go's default) to %d", o.gcHeadroom, maxGCHeadroom)
	}
	if (o.rateLimit != 0 && !(o.rateLimit >= minRateLimit && o.rateLimit <= maxRateLimit)) || o.rateBurst < 0 || o.rateBurst > maxRateBurst {
		return usageErrorf("serve: --rate-limit %v and --rate-burst %d: want a rate of %v to %v requests per second (0 for no limit) and a burst of 1 to %d", o.rateLimit, o.rateBurst, minRateLimit, maxRateLimit, maxRateBurst)
	}
	if o.rateBurst > 0 && o.rateLimit == 0 {
		return usageErrorf("serve: --rate-burst %d without --rate-limit: a burst of what rate? Give --rate-limit too", o.rateBurst)
	}
	if o.baseURL != "" {
		u, err := url.Parse(o.baseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageErrorf("serve: --base-url %q: want an absolute http(s) URL such as http://127.0.0.1:8080/api/v1", o.baseURL)
		}
		if o.tls.on() && u.Scheme != "https" {
			return usageErrorf("serve: --base-url %q: serve answers HTTPS itself (--tls-cert or --acme-domain); want an https URL", o.baseURL)
		}
	}
	return o.tls.check(o.dev, o.addr)
}

// accessLogPolicy reads --access-log and --slow-request.
func (o *serveOptions) accessLogPolicy() (server.AccessLogPolicy, error) {
	p, err := server.ParseAccessLog(o.accessLog)
	if err != nil {
		return p, fmt.Errorf("--access-log %w", err)
	}
	if o.slowRequest <= 0 {
		return p, fmt.Errorf("--slow-request %v: want a positive duration", o.slowRequest)
	}
	p.Slow = o.slowRequest
	return p, nil
}

// openCatalog opens --db; in dev mode, when it does not exist, it imports the
// built-in sample and name groups into a temporary file instead. cleanup removes that file.
func openCatalog(ctx context.Context, o serveOptions) (*store.DB, func(), error) {
	db, err := store.Open(o.db)
	if err == nil || !o.dev || !errors.Is(err, fs.ErrNotExist) {
		return db, func() {}, err
	}
	dir, err := os.MkdirTemp("", "catalogd-sample-")
	if err != nil {
		return nil, nil, fmt.Errorf("serve: built-in sample: %w", err)
	}
	cleanup := func() { os.RemoveAll(dir) }
	sample, names := filepath.Join(dir, data.SampleName), filepath.Join(dir, data.NamesName)
	path := filepath.Join(dir, "sample.db")
	err = os.WriteFile(sample, data.Sample(), 0o600)
	if err == nil {
		err = os.WriteFile(names, data.Names(), 0o600)
	}
	if err == nil {
		_, err = importer.Import(ctx, importer.Config{DB: path, Inputs: []string{sample, names}})
	}
	if err == nil {
		db, err = store.Open(path)
	}
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("serve: built-in sample: %w", err)
	}
	// The import's buffers, tens of MiB, are garbage now; the collector
	// would otherwise keep them until the heap doubled, and size the GC
	// headroom (gcheadroom.Keep) by a live heap the server does not have.
	runtime.GC()
	return db, cleanup, nil
}

// resolveURLs fills in the defaults that depend on other flags (docs/CONTRACT.md,
// Command line); addr is the address actually listened on.
func (o *serveOptions) resolveURLs(addr string) {
	if o.baseURL == "" {
		o.baseURL = "http://" + addr + defaultAPIPath
	}
	o.baseURL = strings.TrimRight(o.baseURL, "/")
	if o.audience == "" {
		o.audience = o.baseURL + "/mcp"
	}
	if o.dev {
		o.issuer = origin(o.baseURL)
		o.jwksURL = o.issuer + "/.well-known/jwks.json"
	}
	if o.authURL == "" {
		o.authURL = o.issuer
	}
}

// origin is the scheme and host of an absolute URL.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Scheme + "://" + u.Host
}

// devKeyPath is where the dev signing key lives: beside the catalogue file,
// so that serve --dev and catalogd token agree on it.
func devKeyPath(db string) string {
	return filepath.Join(filepath.Dir(db), "catalogd-dev-key.pem")
}

const devTokenTTL = 24 * time.Hour

// devIssuer builds the local token issuer of serve --dev.
func (o *serveOptions) devIssuer() (*auth.DevIssuer, error) {
	key, err := auth.LoadOrCreateDevKey(devKeyPath(o.db))
	if err != nil {
		return nil, fmt.Errorf("serve: dev signing key: %w", err)
	}
	if o.devSecret == "" {
		o.devSecret = randomSecret()
	}
	return auth.NewDevIssuer(key, o.issuer, o.audience, o.devClientID, o.devSecret, devTokenTTL), nil
}

func randomSecret() string {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		panic("catalogd: no randomness: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// printDevBanner tells a developer how to call the dev server: its client
// credentials and a ready-to-run curl line with a fresh token.
func printDevBanner(w io.Writer, o serveOptions, dev *auth.DevIssuer, db string) error {
	token, _, err := dev.Token(time.Now())
	if err != nil {
		return fmt.Errorf("serve: dev token: %w", err)
	}
	_, err = fmt.Fprintf(w, `catalogd is serving %s (development mode)

  API            %s
  reference      %s/docs
  token endpoint %s/oauth/token
  client id      %s
  client secret  %s
  audience       %s

Try it (the token is valid for 24 hours):

  curl -H 'Authorization: Bearer %s' %s/catalog/sets

`, db, o.baseURL, o.baseURL, o.issuer, o.devClientID, o.devSecret, o.audience, token, o.baseURL)
	return err
}
