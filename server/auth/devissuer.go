package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
)

// maxTokenRequest bounds a token request body; a real one is a few hundred
// bytes.
const maxTokenRequest = 64 << 10

// DevIssuer is the identity provider of `serve --dev`: it issues
// client-credentials tokens for one client, signed with a local key, and
// publishes that key so that an ordinary Verifier accepts the tokens.
type DevIssuer struct {
	key      crypto.Signer
	method   jwt.SigningMethod
	kid      string
	jwks     []byte
	issuer   string
	audience string
	clientID string
	// clientSecret is handed to the API reference page of serve --dev,
	// which fetches its own token (Client).
	clientSecret string
	// The client id and secret are kept hashed so that comparing them takes
	// the same time whatever their length and content.
	clientIDHash [32]byte
	secretHash   [32]byte
	ttl          time.Duration
	// err is a key that cannot sign JWTs; every use reports it.
	err error
}

// NewDevIssuer returns an issuer whose tokens carry iss=issuer and
// aud=[audience], for the client clientID authenticated by clientSecret,
// valid for ttl (24 hours if ttl <= 0). An unsupported key is reported by
// Token and by the handlers, as a server error.
func NewDevIssuer(key crypto.Signer, issuer, audience, clientID, clientSecret string, ttl time.Duration) *DevIssuer {
	if ttl <= 0 {
		ttl = 24 * time.Hour
	}
	d := &DevIssuer{
		key:          key,
		issuer:       issuer,
		audience:     audience,
		clientID:     clientID,
		clientSecret: clientSecret,
		clientIDHash: sha256.Sum256([]byte(clientID)),
		secretHash:   sha256.Sum256([]byte(clientSecret)),
		ttl:          ttl,
	}
	d.method, d.kid, d.jwks, d.err = publishKey(key)
	if d.err == nil && (clientID == "" || clientSecret == "") {
		d.err = errors.New("dev issuer: the client id and secret must not be empty")
	}
	return d
}

// Client returns the id and secret of the one client the issuer serves.
func (d *DevIssuer) Client() (id, secret string) { return d.clientID, d.clientSecret }

// signingMethod is the JWS algorithm for a key.
func signingMethod(key crypto.Signer) (jwt.SigningMethod, error) {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return jwt.SigningMethodES256, nil
		case elliptic.P384():
			return jwt.SigningMethodES384, nil
		case elliptic.P521():
			return jwt.SigningMethodES512, nil
		}
		return nil, fmt.Errorf("unsupported ECDSA curve %s", k.Curve.Params().Name)
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, fmt.Errorf("RSA key of %d bits is too short (want at least 2048)", k.N.BitLen())
		}
		return jwt.SigningMethodRS256, nil
	case ed25519.PrivateKey:
		return jwt.SigningMethodEdDSA, nil
	}
	return nil, fmt.Errorf("unsupported key type %T (want ECDSA, RSA or Ed25519)", key)
}

// publishKey returns how key signs, its kid (the RFC 7638 thumbprint, so it
// is stable across restarts with the same key file) and its public JWKS.
func publishKey(key crypto.Signer) (jwt.SigningMethod, string, []byte, error) {
	if key == nil {
		return nil, "", nil, errors.New("dev issuer: no signing key")
	}
	method, err := signingMethod(key)
	if err != nil {
		return nil, "", nil, fmt.Errorf("dev issuer: %w", err)
	}
	pub := key.Public()
	bare, err := jwkset.NewJWKFromKey(pub, jwkset.JWKOptions{})
	if err != nil {
		return nil, "", nil, fmt.Errorf("dev issuer: public key as JWK: %w", err)
	}
	kid, err := thumbprint(bare.Marshal())
	if err != nil {
		return nil, "", nil, fmt.Errorf("dev issuer: %w", err)
	}
	jwk, err := jwkset.NewJWKFromKey(pub, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{
		ALG: jwkset.ALG(method.Alg()),
		KID: kid,
		USE: jwkset.UseSig,
	}})
	if err != nil {
		return nil, "", nil, fmt.Errorf("dev issuer: public key as JWK: %w", err)
	}
	jwks, err := json.Marshal(jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{jwk.Marshal()}})
	if err != nil {
		return nil, "", nil, fmt.Errorf("dev issuer: marshal JWKS: %w", err)
	}
	return method, kid, jwks, nil
}

// thumbprint is the RFC 7638 SHA-256 thumbprint of a public JWK: the hash of
// its required members, in lexicographic order, without whitespace.
func thumbprint(m jwkset.JWKMarshal) (string, error) {
	var members any
	switch m.KTY {
	case jwkset.KtyEC:
		members = struct {
			CRV string `json:"crv"`
			KTY string `json:"kty"`
			X   string `json:"x"`
			Y   string `json:"y"`
		}{string(m.CRV), string(m.KTY), m.X, m.Y}
	case jwkset.KtyRSA:
		members = struct {
			E   string `json:"e"`
			KTY string `json:"kty"`
			N   string `json:"n"`
		}{m.E, string(m.KTY), m.N}
	case jwkset.KtyOKP:
		members = struct {
			CRV string `json:"crv"`
			KTY string `json:"kty"`
			X   string `json:"x"`
		}{string(m.CRV), string(m.KTY), m.X}
	default:
		return "", fmt.Errorf("no thumbprint for key type %q", m.KTY)
	}
	b, err := json.Marshal(members)
	if err != nil {
		return "", fmt.Errorf("thumbprint: %w", err)
	}
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// devClaims are the claims of a dev access token, shaped like those of the
// production IdP (RFC 9068 plus azp).
type devClaims struct {
	jwt.RegisteredClaims
	AZP      string `json:"azp"`
	ClientID string `json:"client_id"`
	Scope    string `json:"scope"`
}

// Token issues an access token valid from now for the issuer's TTL, and
// returns it with its expiry.
func (d *DevIssuer) Token(now time.Time) (string, time.Time, error) {
	if d.err != nil {
		return "", time.Time{}, d.err
	}
	now = now.Truncate(time.Second)
	exp := now.Add(d.ttl)
	var id [16]byte
	rand.Read(id[:])
	t := jwt.NewWithClaims(d.method, devClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    d.issuer,
			Subject:   d.clientID,
			Audience:  jwt.ClaimStrings{d.audience},
			ExpiresAt: jwt.NewNumericDate(exp),
			NotBefore: jwt.NewNumericDate(now),
			IssuedAt:  jwt.NewNumericDate(now),
			ID:        base64.RawURLEncoding.EncodeToString(id[:]),
		},
		AZP:      d.clientID,
		ClientID: d.clientID,
		Scope:    Scope,
	})
	t.Header["kid"] = d.kid
	t.Header["typ"] = "at+jwt"
	s, err := t.SignedString(d.key)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("dev issuer: sign token: %w", err)
	}
	return s, exp, nil
}

// JWKS returns the public signing key as a JWK Set document, for a
// Verifier in the same process (Config.JWKS).
func (d *DevIssuer) JWKS() ([]byte, error) {
	if d.err != nil {
		return nil, d.err
	}
	return d.jwks, nil
}

// JWKSHandler serves the public signing key as a JWK Set, for
// /.well-known/jwks.json.
func (d *DevIssuer) JWKSHandler() http.Handler {
	return jsonDocument(d.err, d.jwks)
}

// OpenIDConfigurationHandler serves the discovery document that a Verifier
// (or an MCP client) reads to find the JWKS and token endpoint, for
// /.well-known/openid-configuration. The same document is valid RFC 8414
// metadata for /.well-known/oauth-authorization-server.
func (d *DevIssuer) OpenIDConfigurationHandler() http.Handler {
	base := strings.TrimSuffix(d.issuer, "/")
	alg := ""
	if d.method != nil {
		alg = d.method.Alg()
	}
	doc, err := json.Marshal(struct {
		Issuer                   string   `json:"issuer"`
		JWKSURI                  string   `json:"jwks_uri"`
		TokenEndpoint            string   `json:"token_endpoint"`
		GrantTypesSupported      []string `json:"grant_types_supported"`
		TokenEndpointAuthMethods []string `json:"token_endpoint_auth_methods_supported"`
		ScopesSupported          []string `json:"scopes_supported"`
		AccessTokenSigningAlgs   []string `json:"access_token_signing_alg_values_supported,omitempty"`
	}{
		Issuer:                   d.issuer,
		JWKSURI:                  base + "/.well-known/jwks.json",
		TokenEndpoint:            base + "/oauth/token",
		GrantTypesSupported:      []string{"client_credentials"},
		TokenEndpointAuthMethods: []string{"client_secret_post", "client_secret_basic"},
		ScopesSupported:          []string{Scope},
		AccessTokenSigningAlgs:   nonEmpty(alg),
	})
	if err == nil {
		err = d.err
	}
	return jsonDocument(err, doc)
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// jsonDocument serves a fixed public JSON document, or a 500 if it could not
// be built.
func jsonDocument(buildErr error, body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readable(w, r) {
			return
		}
		if buildErr != nil {
			http.Error(w, "the dev issuer has no usable signing key", http.StatusInternalServerError)
			return
		}
		writeDocument(w, r, body, "public, max-age=300")
	})
}

// tokenRequest holds the parameters of RFC 6749 section 4.4.2, plus
// audience as docs/CONTRACT.md, Authentication, requires.
type tokenRequest struct {
	GrantType    string `json:"grant_type"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	Audience     string `json:"audience"`
	Scope        string `json:"scope"`
}

// tokenError is an RFC 6749 section 5.2 error.
type tokenError struct {
	status int
	code   string
	desc   string
}

// TokenHandler serves the client-credentials grant at /oauth/token. The
// request is JSON (as docs/CONTRACT.md, Authentication, shows) or a form (as RFC 6749
// specifies); the client authenticates in the body or with HTTP Basic.
//
// Errors follow RFC 6749 section 5.2: invalid_request (400) for a missing or
// repeated parameter or an unreadable body, unsupported_grant_type (400),
// invalid_client (401, with a Basic challenge) for a missing or wrong client
// id or secret, invalid_scope (400) for a scope other than catalog:read, and
// invalid_target (400, RFC 8707) for an audience other than the configured
// one. A body over 64 KiB is refused with 413.
func (d *DevIssuer) TokenHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeTokenError(w, tokenError{http.StatusMethodNotAllowed, "invalid_request", "use POST"})
			return
		}
		req, terr := readTokenRequest(w, r)
		if terr == nil {
			terr = d.check(req)
		}
		if terr != nil {
			writeTokenError(w, *terr)
			return
		}
		token, _, err := d.Token(time.Now())
		if err != nil {
			writeTokenError(w, tokenError{http.StatusInternalServerError, "server_error", "the dev issuer cannot sign tokens"})
			return
		}
		body, _ := json.Marshal(struct {
			AccessToken string `json:"access_token"`
			TokenType   string `json:"token_type"`
			ExpiresIn   int64  `json:"expires_in"`
			Scope       string `json:"scope"`
		}{token, "Bearer", int64(d.ttl / time.Second), Scope})
		if body == nil {
			writeTokenError(w, tokenError{http.StatusInternalServerError, "server_error", "the token response could not be encoded"})
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		h.Set("Pragma", "no-cache")
		w.Write(body)
	})
}

func readTokenRequest(w http.ResponseWriter, r *http.Request) (tokenRequest, *tokenError) {
	var req tokenRequest
	bad := func(desc string) *tokenError { return &tokenError{http.StatusBadRequest, "invalid_request", desc} }
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "application/json" && mt != "application/x-www-form-urlencoded") {
		return req, bad("the body must be application/json or application/x-www-form-urlencoded")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxTokenRequest))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return req, &tokenError{http.StatusRequestEntityTooLarge, "invalid_request", "the body is larger than 64 KiB"}
		}
		return req, bad("the body could not be read")
	}
	if mt == "application/json" {
		if err := json.Unmarshal(body, &req); err != nil {
			return req, bad("the body must be a JSON object whose fields are strings")
		}
	} else {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return req, bad("the form body is not valid")
		}
		for k, v := range form {
			if len(v) > 1 {
				// RFC 6749 section 3.2: parameters must not repeat.
				return req, bad("the parameter " + strconv.Quote(k) + " is repeated")
			}
		}
		req = tokenRequest{
			GrantType:    form.Get("grant_type"),
			ClientID:     form.Get("client_id"),
			ClientSecret: form.Get("client_secret"),
			Audience:     form.Get("audience"),
			Scope:        form.Get("scope"),
		}
	}
	if id, secret, ok := basicCredentials(r); ok {
		if req.ClientSecret != "" {
			// RFC 6749 section 2.3: one authentication method per request.
			return req, bad("authenticate the client with HTTP Basic or in the body, not both")
		}
		if req.ClientID != "" && req.ClientID != id {
			return req, bad("the client_id in the body differs from the one in the Authorization header")
		}
		req.ClientID, req.ClientSecret = id, secret
	}
	return req, nil
}

// basicCredentials reads client_secret_basic credentials, which RFC 6749
// section 2.3.1 form-encodes before the Basic encoding.
func basicCredentials(r *http.Request) (id, secret string, ok bool) {
	rawID, rawSecret, ok := r.BasicAuth()
	if !ok {
		return "", "", false
	}
	id, err1 := url.QueryUnescape(rawID)
	secret, err2 := url.QueryUnescape(rawSecret)
	if err1 != nil || err2 != nil {
		return rawID, rawSecret, true
	}
	return id, secret, true
}

func (d *DevIssuer) check(req tokenRequest) *tokenError {
	switch req.GrantType {
	case "":
		return &tokenError{http.StatusBadRequest, "invalid_request", "grant_type is required"}
	case "client_credentials":
	default:
		return &tokenError{http.StatusBadRequest, "unsupported_grant_type", "only the client_credentials grant is supported"}
	}
	if req.ClientID == "" || req.ClientSecret == "" {
		return &tokenError{http.StatusUnauthorized, "invalid_client", "client_id and client_secret are required"}
	}
	idHash := sha256.Sum256([]byte(req.ClientID))
	secretHash := sha256.Sum256([]byte(req.ClientSecret))
	// Both comparisons always run, so timing reveals neither which one failed.
	idOK := subtle.ConstantTimeCompare(idHash[:], d.clientIDHash[:])
	secretOK := subtle.ConstantTimeCompare(secretHash[:], d.secretHash[:])
	if idOK&secretOK != 1 {
		return &tokenError{http.StatusUnauthorized, "invalid_client", "client authentication failed"}
	}
	if req.Audience == "" {
		return &tokenError{http.StatusBadRequest, "invalid_request", "audience is required"}
	}
	if req.Audience != d.audience {
		return &tokenError{http.StatusBadRequest, "invalid_target", "the audience must be " + d.audience}
	}
	for _, s := range strings.Fields(req.Scope) {
		if s != Scope {
			return &tokenError{http.StatusBadRequest, "invalid_scope", "the only scope available is " + Scope}
		}
	}
	return nil
}

func writeTokenError(w http.ResponseWriter, e tokenError) {
	h := w.Header()
	if e.status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Basic realm="catalogd", charset="UTF-8"`)
	}
	body, _ := json.Marshal(struct {
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}{e.code, e.desc})
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(e.status)
	w.Write(body)
}
