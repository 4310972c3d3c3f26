package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
)

// Scope is the scope every catalogue call requires.
const Scope = "catalog:read"

// leeway absorbs clock skew between the IdP and this server.
const leeway = 30 * time.Second

// maxTokenLen rejects absurd headers before hashing or parsing them; real
// access tokens, even with many claims, stay well below it.
const maxTokenLen = 16 << 10

// acceptedAlgs are the asymmetric JWS algorithms. HS* would let anyone who
// knows a public key forge tokens, and none needs no key at all.
var acceptedAlgs = []string{
	"RS256", "RS384", "RS512",
	"PS256", "PS384", "PS512",
	"ES256", "ES384", "ES512",
	"EdDSA",
}

// Config configures a Verifier. Issuer and Audience are required.
type Config struct {
	// Issuer is the expected iss claim, exactly as the IdP writes it.
	Issuer string
	// JWKSURL is where the signing keys are. If empty, it is discovered from
	// {Issuer}/.well-known/openid-configuration, falling back to
	// {Issuer}/.well-known/jwks.json when there is no such document.
	JWKSURL string
	// JWKS, when set, is the issuer's key set itself (a JWK Set document),
	// used as it is and never fetched or refreshed: serve --dev hands its
	// own key over this way. JWKSURL is then not read.
	JWKS []byte
	// Audience must be in the aud claim (a string or an array).
	Audience string
	// DenyClients are clients whose tokens are rejected. A token's client is
	// azp, else client_id, else sub.
	DenyClients []string
	// HTTPClient fetches discovery and JWKS documents. nil means a client
	// with a 10 s timeout.
	HTTPClient *http.Client
	// Logger receives load and refresh failures. nil discards them. Tokens
	// are never logged.
	Logger *slog.Logger
	// Now is the clock for token times and the cache. nil means time.Now.
	Now func() time.Time
	// RefreshInterval is how often the JWKS is refetched. Default 1 hour.
	RefreshInterval time.Duration
	// RefreshRateLimit is the least time between two refreshes caused by
	// tokens with an unknown kid, and the longest pause between retries
	// while the first load fails. Default 1 minute.
	RefreshRateLimit time.Duration
	// RefreshWait is the longest a request waits for a refresh caused by
	// its unknown kid. Default 1 second.
	RefreshWait time.Duration
}

// Principal is the authenticated caller.
type Principal struct {
	// ClientID is azp, else client_id, else sub.
	ClientID string
	Subject  string
	// Scopes are all scopes granted by scope, scp and permissions. The slice
	// is shared with the token cache: do not modify its elements.
	Scopes    []string
	ExpiresAt time.Time
}

// Verifier checks bearer tokens. It is safe for concurrent use.
type Verifier struct {
	cfg    Config
	now    func() time.Time
	parser *jwt.Parser
	deny   map[string]struct{}
	cache  *tokenCache
	keys   *keyLoader
	cancel context.CancelFunc
	done   chan struct{}
}

// NewVerifier returns a verifier for cfg and starts loading the issuer's
// JWKS. It fails only on a bad configuration, never because the IdP is down:
// it waits at most a few seconds for the first load, then returns anyway and
// keeps retrying in the background until the keys load, ctx ends or Close is
// called. Until then Ready is false and every token is rejected.
func NewVerifier(ctx context.Context, cfg Config) (*Verifier, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg, timeout := cfg.withDefaults()
	// The URL the keys are fetched from: the JWKS URL, or the issuer's,
	// where discovery starts; none when they are given.
	what, fetched := "JWKS URL", cfg.JWKSURL
	if fetched == "" {
		what, fetched = "issuer", cfg.Issuer
	}
	if cfg.JWKS == nil && inClear(fetched) {
		cfg.Logger.Warn("auth: the "+what+" is plain HTTP: the identity provider's keys, which decide the tokens accepted, come in clear from whoever is on the path; use https",
			"url", fetched)
	}
	now := cfg.Now
	deny := make(map[string]struct{}, len(cfg.DenyClients))
	for _, c := range cfg.DenyClients {
		if c != "" {
			deny[c] = struct{}{}
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	v := &Verifier{
		cfg: cfg,
		now: now,
		parser: jwt.NewParser(
			jwt.WithValidMethods(acceptedAlgs),
			// One token, one spelling: without it, the unused low bits of
			// the last base64 character of the signature can be changed
			// and the token still verifies.
			jwt.WithStrictDecoding(),
			jwt.WithIssuer(cfg.Issuer),
			jwt.WithAudience(cfg.Audience),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
			jwt.WithLeeway(leeway),
			jwt.WithTimeFunc(now),
		),
		deny:  deny,
		cache: newTokenCache(defaultCacheSize),
		keys: &keyLoader{
			cfg:     cfg,
			log:     cfg.Logger,
			client:  noDowngrade(cfg.HTTPClient),
			timeout: timeout,
			jwksURL: cfg.JWKSURL,
		},
		cancel: cancel,
		done:   make(chan struct{}),
	}
	if cfg.JWKS != nil {
		set, err := staticKeySet(ctx, cfg.JWKS, cfg.Logger)
		if err != nil {
			cancel()
			return nil, err
		}
		v.keys.set.Store(set)
		close(v.done)
		return v, nil
	}
	first := make(chan struct{})
	go func() {
		defer close(v.done)
		v.keys.run(ctx, first)
	}()
	t := time.NewTimer(startupWait)
	defer t.Stop()
	select {
	case <-first:
	case <-t.C:
	case <-ctx.Done():
	}
	return v, nil
}

// check says what of cfg cannot work.
func (cfg Config) check() error {
	switch {
	case cfg.Issuer == "":
		return errors.New("auth: no issuer configured: set the iss value of the identity provider's tokens")
	case cfg.JWKS != nil:
	case cfg.JWKSURL != "":
		if err := checkURL("JWKS URL", cfg.JWKSURL); err != nil {
			return err
		}
	default:
		// The JWKS is discovered from the issuer, which must then be a URL.
		if err := checkURL("issuer", cfg.Issuer); err != nil {
			return err
		}
	}
	if cfg.Audience == "" {
		return errors.New("auth: no audience configured: set the audience tokens must carry (e.g. {base-url}/mcp)")
	}
	return nil
}

// withDefaults returns cfg with the defaults of what it leaves unset, and
// the timeout of a fetch from the identity provider.
func (cfg Config) withDefaults() (Config, time.Duration) {
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = time.Hour
	}
	if cfg.RefreshRateLimit <= 0 {
		cfg.RefreshRateLimit = time.Minute
	}
	if cfg.RefreshWait <= 0 {
		cfg.RefreshWait = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	timeout := defaultHTTPTimeout
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: defaultHTTPTimeout}
	} else if cfg.HTTPClient.Timeout > 0 {
		timeout = cfg.HTTPClient.Timeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return cfg, timeout
}

func checkURL(what, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("auth: %s %q is not an absolute http(s) URL", what, s)
	}
	return nil
}

// inClear reports whether u is a plain HTTP URL of a host other than a
// loopback one, where the dev issuer lives.
func inClear(u string) bool {
	p, err := url.Parse(u)
	return err == nil && p.Scheme == "http" && !LoopbackHost(p.Hostname())
}

// LoopbackHost reports whether host, without its port, names this machine
// alone: a loopback address, localhost, or a name under localhost, which
// resolves to loopback only (RFC 6761).
func LoopbackHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	ip := net.ParseIP(host)
	return (ip != nil && ip.IsLoopback()) || host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// Ready reports whether a JWKS has been loaded. It stays true afterwards,
// even while the IdP is unreachable, because the loaded keys keep working.
func (v *Verifier) Ready() bool {
	return v.keys.set.Load() != nil
}

// Close stops the background JWKS loading and refreshing.
func (v *Verifier) Close() {
	v.cancel()
	<-v.done
}

// Verify authenticates the value of an Authorization header. The error is
// always an *Error. ctx bounds the wait for a JWKS refresh when the token's
// key is unknown. A token verified before is found in the cache by its
// SHA-256, and its syntax is not checked again: it was checked then.
func (v *Verifier) Verify(ctx context.Context, authorizationHeader string) (Principal, error) {
	now := v.now()
	token, aerr := bearerToken(authorizationHeader)
	if aerr != nil {
		return Principal{}, aerr
	}
	key := hashToken(token)
	if p, _, ok := v.cache.get(key, now); ok {
		return v.allowed(p)
	}
	if !isB64Token(token) {
		return Principal{}, errMalformedHeader()
	}
	p, until, aerr := v.verify(ctx, token, now)
	if aerr != nil {
		return Principal{}, aerr
	}
	v.cache.put(key, p, until, now)
	return p, nil
}

// allowed checks a remembered verification against the deny list once
// more: verify refuses denied clients, so this only guards the invariant.
func (v *Verifier) allowed(p Principal) (Principal, error) {
	if _, denied := v.deny[p.ClientID]; denied {
		return Principal{}, errDenied()
	}
	return p, nil
}

// hashToken hashes the token without copying it: the copy a []byte
// conversion makes would be the only allocation of a cache hit. Sum256 only
// reads its input, so viewing the string's bytes is safe.
func hashToken(token string) tokenKey {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(token), len(token)))
}

// bearerToken extracts the token of "Bearer <token>". Only that form is
// accepted: a token in the query string or a body is never looked at.
func bearerToken(h string) (string, *Error) {
	if h == "" {
		return "", newError("", ReasonMissing, "no bearer token was presented")
	}
	scheme, rest, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		// RFC 6750 section 3.1: another scheme counts as no credentials,
		// so the challenge carries no error code.
		return "", newError("", ReasonScheme, "only the Bearer authorization scheme is accepted")
	}
	token := strings.TrimLeft(rest, " ")
	if token == "" || len(token) > maxTokenLen {
		return "", errMalformedHeader()
	}
	// Its syntax (isB64Token) is checked only when it is not in the cache.
	return token, nil
}

func errMalformedHeader() *Error {
	return newError(CodeInvalidRequest, ReasonMalformed,
		`the Authorization header must be "Bearer" followed by a single token`)
}

// b64TokenChars are the characters of an RFC 6750 b64token before its
// padding.
var b64TokenChars = func() (t [256]bool) {
	for _, c := range []byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/") {
		t[c] = true
	}
	return t
}()

// isB64Token reports whether s is an RFC 6750 b64token.
func isB64Token(s string) bool {
	i := 0
	for ; i < len(s) && b64TokenChars[s[i]]; i++ {
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}

// claims are the access token claims catalogd reads.
type claims struct {
	jwt.RegisteredClaims
	Scope       scopeList `json:"scope"`
	Scp         scopeList `json:"scp"`
	Permissions scopeList `json:"permissions"`
	AZP         string    `json:"azp"`
	ClientID    string    `json:"client_id"`
}

// scopeList reads a scope claim written either as a space-separated string
// (RFC 8693 scope) or as an array of strings (scp, permissions): IdPs differ
// and a token should not fail on the spelling alone.
type scopeList []string

func (s *scopeList) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = nil
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		*s = strings.Fields(str)
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("scope claim is neither a string nor an array of strings: %w", err)
	}
	*s = list
	return nil
}

var (
	// errIssuer stops a token from another issuer before its kid can cause
	// a JWKS refresh.
	errIssuer     = errors.New("token issuer is not the configured issuer")
	errUnknownKey = errors.New("token key id is not in the JWKS")
)

// key returns the verification key of t. A known kid is a lookup; an
// unknown one joins the JWKS refresh in flight, or starts one. The refresh
// runs apart from the requests, so that each waits at most RefreshWait
// while the refresh, once started, completes within the fetch timeout and
// lands for the requests that follow, however slow the identity provider
// or impatient the client. Sharing it means that when a new key appears,
// every request that names it during the refresh gets it, not only the
// one whose unknown kid won the refresh rate limit.
func (v *Verifier) key(ctx context.Context, set *keySet, t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	if kid == "" {
		return signingKeys(ctx, set.store, t.Method.Alg())
	}
	if _, err := set.store.KeyRead(ctx, kid); err == nil {
		return set.keyfunc.KeyfuncCtx(ctx)(t)
	}
	refreshed := set.refresh(t, v.keys.timeout)
	wait := time.NewTimer(v.cfg.RefreshWait)
	defer wait.Stop()
	select {
	case <-refreshed:
	case <-wait.C:
		return nil, fmt.Errorf("%w: key %q: the JWKS refresh is still running", errUnknownKey, kid)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if _, err := set.store.KeyRead(ctx, kid); err != nil {
		return nil, fmt.Errorf("%w: key %q", errUnknownKey, kid)
	}
	return set.keyfunc.KeyfuncCtx(ctx)(t)
}

// signingKeys returns the keys a token that names none (no kid, or an
// empty one) may be signed with: the set's keys for signatures, of the
// type alg signs with, and of alg itself when the key says. keyfunc would
// give jwt every key of the set, whatever its use and alg, and look an
// empty kid up as an unknown one, refreshing the set inside the request.
func signingKeys(ctx context.Context, store jwkset.Storage, alg string) (any, error) {
	all, err := store.KeyReadAll(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the JWKS: %w", err)
	}
	var keys jwt.VerificationKeySet
	for _, k := range all {
		m := k.Marshal()
		if (m.USE != jwkset.UseSig && m.USE != "") || (m.ALG != "" && m.ALG.String() != alg) {
			continue
		}
		key := k.Key()
		if pk, ok := key.(interface{ Public() crypto.PublicKey }); ok {
			key = pk.Public()
		}
		if signsWith(key, alg) {
			keys.Keys = append(keys.Keys, key)
		}
	}
	if len(keys.Keys) == 0 {
		return nil, fmt.Errorf("%w: the token names no key, and no key of the JWKS signs %s", errUnknownKey, alg)
	}
	return keys, nil
}

// signsWith reports whether key is of the type alg, one of acceptedAlgs,
// signs with.
func signsWith(key any, alg string) bool {
	switch key.(type) {
	case *rsa.PublicKey:
		return alg[0] == 'R' || alg[0] == 'P'
	case *ecdsa.PublicKey:
		return alg[0] == 'E' && alg != "EdDSA"
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

// verify checks the signature and claims of a token not in the cache and
// returns its principal and how long the result may be cached.
func (v *Verifier) verify(ctx context.Context, token string, now time.Time) (Principal, time.Time, *Error) {
	set := v.keys.set.Load()
	if set == nil {
		return Principal{}, time.Time{}, newError(CodeInvalidToken, ReasonUnavailable,
			"the signing keys of the identity provider are not loaded yet; retry later")
	}
	var c claims
	tok, err := v.parser.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		// The claims are decoded but not verified yet: they may only
		// reject here, never accept.
		if c.Issuer != v.cfg.Issuer {
			return nil, errIssuer
		}
		key, err := v.key(ctx, set, t)
		if err != nil {
			// jwkset reports a kid still unknown after a refresh, and one
			// whose refresh was refused by the rate limit, differently;
			// both mean the same to the client.
			kid, _ := t.Header["kid"].(string)
			if _, rerr := set.store.KeyRead(ctx, kid); errors.Is(rerr, jwkset.ErrKeyNotFound) {
				return nil, fmt.Errorf("%w: %w", errUnknownKey, err)
			}
		}
		return key, err
	})
	if err != nil {
		if tok != nil && tok.Method != nil && !slices.Contains(acceptedAlgs, tok.Method.Alg()) {
			return Principal{}, time.Time{}, newError(CodeInvalidToken, ReasonAlgorithm,
				"the token's signing algorithm is not accepted; use an asymmetric algorithm (RS, PS, ES or EdDSA)")
		}
		return Principal{}, time.Time{}, classify(err, &c)
	}

	p := Principal{
		ClientID:  firstNonEmpty(c.AZP, c.ClientID, c.Subject),
		Subject:   c.Subject,
		Scopes:    mergeScopes(c.Scope, c.Scp, c.Permissions),
		ExpiresAt: c.ExpiresAt.Time,
	}
	if p.ClientID == "" {
		return Principal{}, time.Time{}, newError(CodeInvalidToken, ReasonClient,
			"the token names no client (azp, client_id or sub)")
	}
	if _, denied := v.deny[p.ClientID]; denied {
		return Principal{}, time.Time{}, errDenied()
	}
	if !slices.Contains(p.Scopes, Scope) {
		return Principal{}, time.Time{}, newError(CodeInsufficientScope, ReasonScope,
			"the token does not grant the "+Scope+" scope")
	}
	until := now.Add(cacheTTL)
	if p.ExpiresAt.Before(until) {
		until = p.ExpiresAt
	}
	return p, until, nil
}

func errDenied() *Error {
	return newError(CodeInvalidToken, ReasonDenied, "the client is not allowed to use this service")
}

// classify turns a jwt/keyfunc error into an *Error. Claim errors come
// joined; the order below picks the one most useful to the client. c is
// what was decoded of the claims, to tell which required claim is missing.
func classify(err error, c *claims) *Error {
	invalid := func(reason, desc string) *Error { return newError(CodeInvalidToken, reason, desc) }
	switch {
	case errors.Is(err, errIssuer):
		return invalid(ReasonIssuer, "the token was issued by another issuer")
	case errors.Is(err, jwt.ErrTokenMalformed):
		return invalid(ReasonMalformed, "the token is not a well-formed JWT")
	case errors.Is(err, errUnknownKey):
		return invalid(ReasonUnknownKey, "the token is signed with a key the identity provider does not publish")
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		// Unknown or missing alg, or a key whose alg or use does not fit.
		return invalid(ReasonAlgorithm, "the token's signing algorithm is not accepted for its key")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return invalid(ReasonSignature, "the token signature is invalid")
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing) && c.ExpiresAt == nil:
		return invalid(ReasonExpMissing, "the token has no expiry (exp)")
	case errors.Is(err, jwt.ErrTokenExpired):
		return invalid(ReasonExpired, "the token has expired")
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return invalid(ReasonNotYetValid, "the token is not valid yet (nbf)")
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return invalid(ReasonIssuedAt, "the token is issued in the future (iat)")
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return invalid(ReasonIssuer, "the token was issued by another issuer")
	case errors.Is(err, jwt.ErrTokenInvalidAudience), errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		// exp and iss are present by now, so the missing claim is aud.
		return invalid(ReasonAudience, "the token is not issued for this resource (aud)")
	}
	return invalid(ReasonMalformed, "the token is not valid")
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// mergeScopes returns the union of the scope lists, in order of appearance.
func mergeScopes(lists ...scopeList) []string {
	var out []string
	for _, l := range lists {
		for _, s := range l {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return slices.Clip(out)
}
