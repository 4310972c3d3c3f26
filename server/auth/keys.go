package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

const (
	// defaultHTTPTimeout bounds one request to the identity provider.
	defaultHTTPTimeout = 10 * time.Second
	// startupWait is how long NewVerifier waits for the first JWKS load, so
	// that a server with a healthy IdP is ready as soon as it listens while a
	// server with an unreachable IdP still starts.
	startupWait = 5 * time.Second
	// firstRetry is the first pause after a failed load; pauses double up to
	// Config.RefreshRateLimit.
	firstRetry = 500 * time.Millisecond
	// maxDiscoveryBody bounds the OpenID configuration document we read.
	maxDiscoveryBody = 1 << 20
	// maxJWKSBody bounds a JWKS: a real one holds a few keys in a few
	// kilobytes, and jwkset would otherwise read whatever the URL returns.
	maxJWKSBody = 1 << 20
)

// keySet is a loaded JWKS: the keyfunc that reads it and refreshes it.
type keySet struct {
	keyfunc keyfunc.Keyfunc
	// store holds the keys as last fetched; reading it never refreshes.
	store *trackedStorage
	// ctx lives as long as the set: refreshes run under it, apart from the
	// requests that asked for them, and end when the verifier closes.
	ctx context.Context
	// stop ends the set's refreshes; the verifier's own cancel does too.
	stop context.CancelFunc

	mu sync.Mutex
	// inFlight is closed when the unknown-kid refresh under way ends; nil
	// when none is.
	inFlight chan struct{}
}

// refresh starts a refresh of the set for the unknown kid of t, or joins
// the one under way, and returns a channel closed when it has ended. jwkset
// rate-limits the refreshes themselves.
func (set *keySet) refresh(t *jwt.Token, timeout time.Duration) <-chan struct{} {
	set.mu.Lock()
	defer set.mu.Unlock()
	if set.inFlight != nil {
		return set.inFlight
	}
	done := make(chan struct{})
	set.inFlight = done
	go func() {
		ctx, cancel := context.WithTimeout(set.ctx, timeout)
		defer cancel()
		// Looking up an unknown kid is what makes jwkset refresh.
		set.keyfunc.KeyfuncCtx(ctx)(t)
		set.mu.Lock()
		set.inFlight = nil
		set.mu.Unlock()
		close(done)
	}()
	return done
}

// keyLoader fetches the JWKS of the issuer until it has one, then hands the
// refreshing set to the verifier. jwkset does the periodic and unknown-kid
// refreshes; what it does not do is retry a failed first load before its
// next periodic refresh (an hour), so that retry lives here.
type keyLoader struct {
	cfg     Config
	log     *slog.Logger
	client  *http.Client
	timeout time.Duration
	jwksURL string // resolved by discovery when Config.JWKSURL is empty
	set     atomic.Pointer[keySet]
}

// run loads the JWKS, retrying with capped exponential backoff until it
// succeeds or ctx ends. first is closed after the first attempt.
func (l *keyLoader) run(ctx context.Context, first chan<- struct{}) {
	delay := firstRetry
	for attempt := 1; ; attempt++ {
		err := l.load(ctx)
		if attempt == 1 {
			close(first)
		}
		if err == nil || ctx.Err() != nil {
			return
		}
		delay = min(delay, l.cfg.RefreshRateLimit)
		// Jitter spreads the retries of many replicas restarted together.
		wait := delay/2 + rand.N(delay/2+1)
		l.log.WarnContext(ctx, "auth: JWKS not loaded, requests are rejected until it is; will retry",
			"issuer", l.cfg.Issuer, "attempt", attempt, "retry_in", wait.Round(time.Millisecond).String(), "error", err)
		delay *= 2 // capped above, before it can overflow
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// load makes one attempt to resolve the JWKS URL and fetch the key set. A
// discovered URL whose set cannot be loaded is discovered again at the next
// attempt: it may be the conventional fallback, taken while the IdP's
// discovery document was missing for a moment (a 404 from a proxy not yet
// routed), and the IdP's keys are elsewhere.
func (l *keyLoader) load(ctx context.Context) (err error) {
	if l.jwksURL == "" {
		u, derr := l.discover(ctx)
		if derr != nil {
			return derr
		}
		l.jwksURL = u
		defer func() {
			if err != nil {
				l.jwksURL = ""
			}
		}()
	}

	// The storage's context also ends its refresh goroutine, so a failed
	// attempt cancels it to leave nothing running behind.
	storeCtx, cancel := context.WithCancel(ctx)
	tracked := &trackedStorage{MemoryJWKSet: jwkset.NewMemoryStorage(), log: l.log, url: l.jwksURL}
	jwksURL := l.jwksURL
	store, err := jwkset.NewStorageFromHTTP(jwksURL, jwkset.HTTPClientStorageOptions{
		Client:          limitBodies(l.client, maxJWKSBody),
		Ctx:             storeCtx,
		HTTPTimeout:     l.timeout,
		RefreshInterval: l.cfg.RefreshInterval,
		RefreshErrorHandler: func(ctx context.Context, err error) {
			l.log.WarnContext(ctx, "auth: JWKS refresh failed, keeping the keys already loaded",
				"url", jwksURL, "error", err)
		},
		Storage: tracked,
	})
	if err != nil {
		cancel()
		return fmt.Errorf("fetch JWKS %s: %w", jwksURL, err)
	}
	if tracked.loaded.Load() == 0 {
		cancel()
		return fmt.Errorf("fetch JWKS %s: the set holds no usable signing key", jwksURL)
	}
	client, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs: map[string]jwkset.Storage{jwksURL: store},
		// jwkset waits on this limiter, then refreshes, within
		// RateLimitWaitMax. A burst of one lets the first unknown kid after
		// a quiet minute refresh at once; every other fails at once,
		// because the limiter knows the next token is further away than
		// the deadline. The deadline is the fetch's own, not RefreshWait:
		// the refresh runs apart from the request (see Verifier.key), so a
		// slow identity provider still delivers the new key.
		RateLimitWaitMax:  l.timeout,
		RefreshUnknownKID: rate.NewLimiter(rate.Every(l.cfg.RefreshRateLimit), 1),
	})
	if err != nil {
		cancel()
		return fmt.Errorf("build JWKS client for %s: %w", jwksURL, err)
	}
	kf, err := keyfunc.New(keyfunc.Options{
		Ctx:     storeCtx,
		Storage: client,
		// Keys published for encryption must not verify signatures; keys
		// without "use" are common and allowed.
		UseWhitelist: []jwkset.USE{jwkset.UseSig, ""},
	})
	if err != nil {
		cancel()
		return fmt.Errorf("build keyfunc for %s: %w", jwksURL, err)
	}
	l.set.Store(&keySet{keyfunc: kf, store: tracked, ctx: storeCtx, stop: cancel})
	l.log.InfoContext(ctx, "auth: JWKS loaded", "url", jwksURL, "keys", tracked.loaded.Load())
	return nil
}

// staticKeySet is a key set given whole (Config.JWKS): nothing fetches or
// refreshes it, so an unknown kid is simply unknown.
func staticKeySet(ctx context.Context, jwks []byte, log *slog.Logger) (*keySet, error) {
	var doc jwkset.JWKSMarshal
	if err := json.Unmarshal(jwks, &doc); err != nil {
		return nil, fmt.Errorf("auth: the given JWKS is not a JWK Set: %w", err)
	}
	keys := make([]jwkset.JWK, 0, len(doc.Keys))
	for i, m := range doc.Keys {
		k, err := jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{}, jwkset.JWKValidateOptions{})
		if err != nil {
			return nil, fmt.Errorf("auth: the given JWKS: key %d: %w", i, err)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, errors.New("auth: the given JWKS holds no key")
	}
	ctx, cancel := context.WithCancel(ctx)
	store := &trackedStorage{MemoryJWKSet: jwkset.NewMemoryStorage(), log: log, url: "(given)"}
	if err := store.KeyReplaceAll(ctx, keys); err != nil {
		cancel()
		return nil, fmt.Errorf("auth: the given JWKS: %w", err)
	}
	kf, err := keyfunc.New(keyfunc.Options{Ctx: ctx, Storage: store, UseWhitelist: []jwkset.USE{jwkset.UseSig, ""}})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("auth: the given JWKS: %w", err)
	}
	return &keySet{keyfunc: kf, store: store, ctx: ctx, stop: cancel}, nil
}

// discover finds the JWKS URL from the issuer's OpenID configuration. An
// issuer that has none (an answer other than 200 and not a server error)
// falls back to {issuer}/.well-known/jwks.json.
func (l *keyLoader) discover(ctx context.Context) (string, error) {
	base := strings.TrimSuffix(l.cfg.Issuer, "/")
	fallback := base + "/.well-known/jwks.json"
	docURL := base + "/.well-known/openid-configuration"

	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, docURL, nil)
	if err != nil {
		return "", fmt.Errorf("discover JWKS: build request for %s: %w", docURL, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := l.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("discover JWKS at %s: %w", docURL, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		// The IdP is down or overloaded: ask again later rather than settle
		// for the fallback URL, which may well be wrong for this IdP.
		return "", fmt.Errorf("discover JWKS at %s: status %d", docURL, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		l.log.InfoContext(ctx, "auth: no OpenID configuration, using the conventional JWKS URL",
			"url", docURL, "status", resp.StatusCode, "jwks_url", fallback)
		return fallback, nil
	}
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxDiscoveryBody)).Decode(&doc); err != nil {
		l.log.WarnContext(ctx, "auth: unreadable OpenID configuration, using the conventional JWKS URL",
			"url", docURL, "error", err, "jwks_url", fallback)
		return fallback, nil
	}
	u, err := url.Parse(doc.JWKSURI)
	// A document fetched over https that sends the keys over plain HTTP
	// would let whoever is on the path choose them.
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (strings.HasPrefix(docURL, "https:") && u.Scheme != "https") {
		l.log.WarnContext(ctx, "auth: OpenID configuration has no usable jwks_uri, using the conventional JWKS URL",
			"url", docURL, "jwks_uri", doc.JWKSURI, "jwks_url", fallback)
		return fallback, nil
	}
	if doc.Issuer != "" && doc.Issuer != l.cfg.Issuer {
		// Tokens carry the IdP's own spelling of the issuer; a mismatch here
		// (often a trailing slash) predicts that every token will fail.
		l.log.WarnContext(ctx, "auth: the OpenID configuration names another issuer; tokens must carry the configured one",
			"configured", l.cfg.Issuer, "discovered", doc.Issuer)
	}
	return doc.JWKSURI, nil
}

// trackedStorage is the in-memory key store behind jwkset's HTTP storage.
// jwkset calls KeyReplaceAll only after a successful fetch and parse, which
// makes it the one place that knows a load happened.
type trackedStorage struct {
	*jwkset.MemoryJWKSet
	log    *slog.Logger
	url    string
	loaded atomic.Int64 // keys in the last accepted set; 0 until one is
}

// KeyReplaceAll refuses to replace a non-empty set with an empty one: an
// emptied JWKS is far more likely a broken deployment at the IdP than the
// revocation of every key, and keeping the old keys keeps partners working.
// Removing some keys (rotation, revocation) is honoured.
func (s *trackedStorage) KeyReplaceAll(ctx context.Context, given []jwkset.JWK) error {
	if len(given) == 0 {
		if s.loaded.Load() > 0 {
			s.log.WarnContext(ctx, "auth: the JWKS is now empty, keeping the keys already loaded", "url", s.url)
		}
		return nil
	}
	if err := s.MemoryJWKSet.KeyReplaceAll(ctx, given); err != nil {
		return err
	}
	s.loaded.Store(int64(len(given)))
	return nil
}

// noDowngrade returns a copy of c that refuses a redirect from https to
// plain HTTP: the keys that decide which tokens are accepted would come in
// clear, from whoever is on the path.
func noDowngrade(c *http.Client) *http.Client {
	safe := *c
	next := c.CheckRedirect
	safe.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		for _, hop := range via {
			if hop.URL.Scheme == "https" && req.URL.Scheme != "https" {
				return fmt.Errorf("refused a redirect from %s to %s: the identity provider's keys would come in clear", hop.URL.Redacted(), req.URL.Redacted())
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &safe
}

// limitBodies returns a copy of c whose responses fail to read past max
// bytes. The limit sits in the transport because jwkset reads the body
// itself.
func limitBodies(c *http.Client, max int64) *http.Client {
	limited := *c
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	limited.Transport = limitedTransport{base: base, max: max}
	return &limited
}

type limitedTransport struct {
	base http.RoundTripper
	max  int64
}

func (t limitedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: t.max, max: t.max}
	return resp, nil
}

// limitedBody reads up to max bytes, then fails instead of reading on.
type limitedBody struct {
	io.ReadCloser
	left, max int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	if int64(n) > b.left {
		b.left = 0
		return 0, fmt.Errorf("the document is larger than %d bytes", b.max)
	}
	b.left -= int64(n)
	return n, err
}
