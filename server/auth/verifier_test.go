package auth

import (
	"context"
	"crypto"
	"crypto/x509"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
)

func TestVerifyValid(t *testing.T) {
	keys := []*testKey{rsaKey(t), psKey(t), ecKey(t), edKey(t)}
	idp := newTestIdP(t, keys...)
	v := newVerifier(t, idp, nil)
	if !v.Ready() {
		t.Fatal("Ready() = false after NewVerifier with a healthy IdP")
	}
	for _, k := range keys {
		t.Run(k.method.Alg(), func(t *testing.T) {
			now := time.Now()
			c := idp.claims(now)
			token := sign(t, k, c)
			p, err := v.Verify(context.Background(), "Bearer "+token)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if got, want := p.ClientID, "partner-1"; got != want {
				t.Errorf("ClientID = %q, want %q", got, want)
			}
			if got, want := p.Subject, "partner-sub"; got != want {
				t.Errorf("Subject = %q, want %q", got, want)
			}
			if got, want := p.Scopes, []string{"openid", Scope}; !slices.Equal(got, want) {
				t.Errorf("Scopes = %q, want %q", got, want)
			}
			if got, want := p.ExpiresAt, time.Unix(now.Add(time.Hour).Unix(), 0); !got.Equal(want) {
				t.Errorf("ExpiresAt = %v, want %v", got, want)
			}
		})
	}
}

func TestVerifyAccepts(t *testing.T) {
	idp := newTestIdP(t, ecKey(t))
	v := newVerifier(t, idp, nil)
	cases := []struct {
		name   string
		header func(token string) string
		edit   func(jwt.MapClaims)
		client string
	}{
		{name: "LowerCaseScheme", header: func(s string) string { return "bearer " + s }},
		{name: "UpperCaseScheme", header: func(s string) string { return "BEARER " + s }},
		{name: "SpacesBeforeToken", header: func(s string) string { return "Bearer   " + s }},
		{name: "AudienceArray", edit: func(c jwt.MapClaims) { c["aud"] = []string{"https://other.example", testAudience} }},
		{name: "ScopeOnly", edit: func(c jwt.MapClaims) { c["scope"] = Scope }},
		{name: "ScpArray", edit: func(c jwt.MapClaims) { delete(c, "scope"); c["scp"] = []string{"x", Scope} }},
		{name: "ScpString", edit: func(c jwt.MapClaims) { delete(c, "scope"); c["scp"] = "x " + Scope }},
		{name: "Permissions", edit: func(c jwt.MapClaims) { delete(c, "scope"); c["permissions"] = []string{Scope} }},
		{name: "ClientIDClaim", client: "cid", edit: func(c jwt.MapClaims) { delete(c, "azp"); c["client_id"] = "cid" }},
		{name: "SubjectOnly", client: "partner-sub", edit: func(c jwt.MapClaims) { delete(c, "azp") }},
		{name: "NoNotBefore", edit: func(c jwt.MapClaims) { delete(c, "nbf") }},
		{name: "NoIssuedAt", edit: func(c jwt.MapClaims) { delete(c, "iat") }},
		{name: "NoKid", edit: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := idp.claims(time.Now())
			if tc.edit != nil {
				tc.edit(c)
			}
			var token string
			if tc.name == "NoKid" {
				// Without kid, every published key of its alg is tried.
				tok := jwt.NewWithClaims(jwt.SigningMethodES256, c)
				s, err := tok.SignedString(ecKey(t).signer)
				if err != nil {
					t.Fatal(err)
				}
				token = s
			} else {
				token = sign(t, ecKey(t), c)
			}
			header := "Bearer " + token
			if tc.header != nil {
				header = tc.header(token)
			}
			p, err := v.Verify(context.Background(), header)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			want := tc.client
			if want == "" {
				want = "partner-1"
			}
			if p.ClientID != want {
				t.Errorf("ClientID = %q, want %q", p.ClientID, want)
			}
			if !slices.Contains(p.Scopes, Scope) {
				t.Errorf("Scopes = %q, want %q in them", p.Scopes, Scope)
			}
		})
	}
}

func TestVerifyRejects(t *testing.T) {
	rk, ek := rsaKey(t), ecKey(t)
	idp := newTestIdP(t, rk, ek)
	v := newVerifier(t, idp, func(c *Config) { c.DenyClients = []string{"banned"} })
	now := time.Now()
	valid := func(edit func(jwt.MapClaims)) string {
		c := idp.claims(now)
		if edit != nil {
			edit(c)
		}
		return "Bearer " + sign(t, ek, c)
	}
	hs256WithPublicKey := func() string {
		// The classic confusion attack: HMAC keyed with the RSA public key.
		der, err := x509.MarshalPKIXPublicKey(rsaSigner().Public())
		if err != nil {
			t.Fatal(err)
		}
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, idp.claims(now))
		tok.Header["kid"] = rk.kid
		s, err := tok.SignedString(der)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + s
	}
	algNone := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodNone, idp.claims(now))
		tok.Header["kid"] = ek.kid
		s, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + s
	}
	otherKeyWithKnownKid := func() string {
		other := ecKey2(t)
		other.kid = ek.kid
		return "Bearer " + sign(t, other, idp.claims(now))
	}
	ecSignatureUnderRSAKid := func() string {
		k := ecKey(t)
		k.kid = rk.kid
		return "Bearer " + sign(t, k, idp.claims(now))
	}
	tamperedPayload := func() string {
		parts := strings.Split(strings.TrimPrefix(valid(nil), "Bearer "), ".")
		other := strings.Split(strings.TrimPrefix(valid(func(c jwt.MapClaims) { c["azp"] = "someone-else" }), "Bearer "), ".")
		return "Bearer " + parts[0] + "." + other[1] + "." + parts[2]
	}

	cases := []struct {
		name   string
		header string
		code   string
		reason string
	}{
		{"NoHeader", "", "", ReasonMissing},
		{"BasicScheme", "Basic dXNlcjpwYXNz", "", ReasonScheme},
		{"BearerWithoutToken", "Bearer", CodeInvalidRequest, ReasonMalformed},
		{"BearerEmptyToken", "Bearer ", CodeInvalidRequest, ReasonMalformed},
		{"TwoTokens", "Bearer abc def", CodeInvalidRequest, ReasonMalformed},
		{"BadCharacters", "Bearer abc\"def", CodeInvalidRequest, ReasonMalformed},
		{"TabSeparator", "Bearer\tabc", "", ReasonScheme},
		{"TooLong", "Bearer " + strings.Repeat("a", maxTokenLen+1), CodeInvalidRequest, ReasonMalformed},
		{"NotAJWT", "Bearer abc.def", CodeInvalidToken, ReasonMalformed},
		{"GarbageSegments", "Bearer a.b.c", CodeInvalidToken, ReasonMalformed},
		{"BadSignature", otherKeyWithKnownKid(), CodeInvalidToken, ReasonSignature},
		{"TamperedPayload", tamperedPayload(), CodeInvalidToken, ReasonSignature},
		{"AlgNone", algNone(), CodeInvalidToken, ReasonAlgorithm},
		{"HS256WithPublicKey", hs256WithPublicKey(), CodeInvalidToken, ReasonAlgorithm},
		{"AlgOfOtherKey", ecSignatureUnderRSAKid(), CodeInvalidToken, ReasonAlgorithm},
		{"UnknownKid", func() string { k := ecKey(t); k.kid = "nope"; return "Bearer " + sign(t, k, idp.claims(now)) }(), CodeInvalidToken, ReasonUnknownKey},
		{"WrongIssuer", valid(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" }), CodeInvalidToken, ReasonIssuer},
		{"IssuerTrailingSlash", valid(func(c jwt.MapClaims) { c["iss"] = idp.url + "/" }), CodeInvalidToken, ReasonIssuer},
		{"NoIssuer", valid(func(c jwt.MapClaims) { delete(c, "iss") }), CodeInvalidToken, ReasonIssuer},
		{"WrongAudience", valid(func(c jwt.MapClaims) { c["aud"] = "https://other.example/mcp" }), CodeInvalidToken, ReasonAudience},
		{"AudienceArrayWithout", valid(func(c jwt.MapClaims) { c["aud"] = []string{"a", "b"} }), CodeInvalidToken, ReasonAudience},
		{"NoAudience", valid(func(c jwt.MapClaims) { delete(c, "aud") }), CodeInvalidToken, ReasonAudience},
		{"Expired", valid(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() }), CodeInvalidToken, ReasonExpired},
		{"MissingExp", valid(func(c jwt.MapClaims) { delete(c, "exp") }), CodeInvalidToken, ReasonExpMissing},
		{"NotYetValid", valid(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Minute).Unix() }), CodeInvalidToken, ReasonNotYetValid},
		{"IssuedInFuture", valid(func(c jwt.MapClaims) { c["iat"] = now.Add(time.Minute).Unix() }), CodeInvalidToken, ReasonIssuedAt},
		{"ExpNotANumber", valid(func(c jwt.MapClaims) { c["exp"] = "tomorrow" }), CodeInvalidToken, ReasonMalformed},
		{"MissingScope", valid(func(c jwt.MapClaims) { c["scope"] = "openid profile" }), CodeInsufficientScope, ReasonScope},
		{"NoScopeClaims", valid(func(c jwt.MapClaims) { delete(c, "scope") }), CodeInsufficientScope, ReasonScope},
		{"ScopePrefixOnly", valid(func(c jwt.MapClaims) { c["scope"] = "catalog:readx catalog" }), CodeInsufficientScope, ReasonScope},
		{"ScopeWrongType", valid(func(c jwt.MapClaims) { c["scope"] = 42 }), CodeInvalidToken, ReasonMalformed},
		{"NoClient", valid(func(c jwt.MapClaims) { delete(c, "azp"); delete(c, "sub") }), CodeInvalidToken, ReasonClient},
		{"DeniedAZP", valid(func(c jwt.MapClaims) { c["azp"] = "banned" }), CodeInvalidToken, ReasonDenied},
		{"DeniedClientID", valid(func(c jwt.MapClaims) { delete(c, "azp"); c["client_id"] = "banned" }), CodeInvalidToken, ReasonDenied},
		{"DeniedSub", valid(func(c jwt.MapClaims) { delete(c, "azp"); c["sub"] = "banned" }), CodeInvalidToken, ReasonDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), tc.header)
			e := authError(t, err, tc.code, tc.reason)
			if token, ok := strings.CutPrefix(tc.header, "Bearer "); ok && len(token) > 8 && strings.Contains(e.Description, token) {
				t.Errorf("description %q contains the token", e.Description)
			}
		})
	}
}

// TestVerifyTimeEdges pins the 30 s leeway on exp and nbf with a fixed clock.
func TestVerifyTimeEdges(t *testing.T) {
	k := ecKey(t)
	idp := newTestIdP(t, k)
	now := time.Unix(1_900_000_000, 0)
	v := newVerifier(t, idp, func(c *Config) { c.Now = func() time.Time { return now } })
	cases := []struct {
		name   string
		claim  string
		offset time.Duration
		reason string // "" for accepted
	}{
		{"ExpIn1s", "exp", time.Second, ""},
		{"Exp29sAgo", "exp", -29 * time.Second, ""},
		{"Exp30sAgo", "exp", -30 * time.Second, ReasonExpired},
		{"Exp31sAgo", "exp", -31 * time.Second, ReasonExpired},
		{"Nbf29sAhead", "nbf", 29 * time.Second, ""},
		{"Nbf31sAhead", "nbf", 31 * time.Second, ReasonNotYetValid},
		{"Iat29sAhead", "iat", 29 * time.Second, ""},
		{"Iat31sAhead", "iat", 31 * time.Second, ReasonIssuedAt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := idp.claims(now)
			c[tc.claim] = now.Add(tc.offset).Unix()
			_, err := v.Verify(context.Background(), "Bearer "+sign(t, k, c))
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			authError(t, err, CodeInvalidToken, tc.reason)
		})
	}
}

// TestVerifyCache shows the cache from outside: a cached verification lapses
// at exp; once the IdP drops a key, a token verified before is still accepted
// from the cache while a new one is not, for five minutes at most.
func TestVerifyCache(t *testing.T) {
	t.Run("Cache", func(t *testing.T) { testVerifyCache(t, context.Background()) })
}

func testVerifyCache(t *testing.T, ctx context.Context) {
	old, next := ecKey(t), ecKey2(t)
	idp := newTestIdP(t, old)
	clk := newClock(time.Now())
	v := newVerifier(t, idp, func(c *Config) {
		c.Now = clk.now
		c.RefreshInterval = 10 * time.Millisecond
	})
	seen := "Bearer " + sign(t, old, idp.claims(clk.now()))
	shortLived := idp.claims(clk.now())
	shortLived["exp"] = clk.now().Add(2 * time.Minute).Unix()
	seenShort := "Bearer " + sign(t, old, shortLived)
	for _, h := range []string{seen, seenShort} {
		if _, err := v.Verify(ctx, h); err != nil {
			t.Fatalf("first Verify: %v", err)
		}
	}

	clk.add(2*time.Minute + 31*time.Second)
	_, err := v.Verify(ctx, seenShort)
	authError(t, err, CodeInvalidToken, ReasonExpired)

	idp.setKeys(next)
	waitFor(t, "the periodic refresh to drop the old key", func() bool {
		_, err := v.Verify(ctx, "Bearer "+sign(t, old, idp.claims(clk.now())))
		return err != nil && err.(*Error).Reason == ReasonUnknownKey
	})
	p, err := v.Verify(ctx, seen)
	if err != nil {
		t.Fatalf("cached token rejected: %v", err)
	}
	if p.ClientID != "partner-1" || !slices.Contains(p.Scopes, Scope) {
		t.Fatalf("cached principal = %+v", p)
	}

	clk.add(2*time.Minute + 30*time.Second)
	_, err = v.Verify(ctx, seen)
	authError(t, err, CodeInvalidToken, ReasonUnknownKey)
}

func TestVerifyCacheRechecksDenyList(t *testing.T) {
	idp := newTestIdP(t, ecKey(t))
	v := newVerifier(t, idp, func(c *Config) { c.DenyClients = []string{"banned"} })
	c := idp.claims(time.Now())
	c["azp"] = "banned"
	token := sign(t, ecKey(t), c)
	v.cache.put(hashToken(token), Principal{ClientID: "banned", Scopes: []string{Scope}},
		time.Now().Add(time.Minute), time.Now())
	_, err := v.Verify(context.Background(), "Bearer "+token)
	authError(t, err, CodeInvalidToken, ReasonDenied)
}

// TestVerifyConcurrent: many goroutines each get the principal of the token
// they sent.
func TestVerifyConcurrent(t *testing.T) {
	rk, ek := rsaKey(t), ecKey(t)
	idp := newTestIdP(t, rk, ek)
	v := newVerifier(t, idp, nil)
	var tokens []string
	for i := range 8 {
		k := rk
		if i%2 == 0 {
			k = ek
		}
		c := idp.claims(time.Now())
		c["azp"] = fmt.Sprintf("partner-%d", i)
		tokens = append(tokens, "Bearer "+sign(t, k, c))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		ctx := context.Background()
		wg.Go(func() {
			for i := range 50 {
				n := (g + i) % len(tokens)
				p, err := v.Verify(ctx, tokens[n])
				if err == nil && p.ClientID != fmt.Sprintf("partner-%d", n) {
					err = fmt.Errorf("client %q, want partner-%d", p.ClientID, n)
				}
				if err != nil {
					errs <- fmt.Errorf("goroutine %d call %d: %w", g, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestNewVerifierConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"NoIssuer", Config{Audience: testAudience}, "no issuer"},
		{"RelativeIssuer", Config{Issuer: "idp.example", Audience: testAudience}, "not an absolute"},
		{"BadJWKSURL", Config{Issuer: "https://idp.example", JWKSURL: "/keys", Audience: testAudience}, "JWKS URL"},
		{"NoIssuerWithJWKSURL", Config{JWKSURL: "https://idp.example/keys", Audience: testAudience}, "no issuer"},
		{"NoAudience", Config{Issuer: "https://idp.example"}, "no audience"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := NewVerifier(context.Background(), tc.cfg)
			if err == nil {
				v.Close()
				t.Fatal("NewVerifier succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func BenchmarkVerifyCached(b *testing.B) {
	idp := newTestIdP(b, rsaKey(b))
	v := newVerifier(b, idp, nil)
	header := "Bearer " + sign(b, rsaKey(b), idp.claims(time.Now()))
	ctx := context.Background()
	if _, err := v.Verify(ctx, header); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, header); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyUncached(b *testing.B) {
	idp := newTestIdP(b, rsaKey(b))
	v := newVerifier(b, idp, nil)
	token := sign(b, rsaKey(b), idp.claims(time.Now()))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		// The cache is bypassed: this is the cost a new token pays once.
		if _, _, err := v.verify(ctx, token, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestVerifyTokensNamingNoKey: a token without a kid, or with an empty
// one, is checked against the published keys for signatures of its alg
// only, as a token naming its key is, and never refreshes the set from
// the request.
func TestVerifyTokensNamingNoKey(t *testing.T) {
	enc := newTestKey(t, "ec-enc", ecSigners()[1], jwt.SigningMethodES256)
	enc.jwk.USE = jwkset.UseEnc
	idp := newTestIdP(t, rsaKey(t), enc, ecKey(t))
	v := newVerifier(t, idp, nil)
	fetches := idp.jwksHits.Load()
	signed := func(method jwt.SigningMethod, signer crypto.Signer, kid any) string {
		tok := jwt.NewWithClaims(method, idp.claims(time.Now()))
		if kid != nil {
			tok.Header["kid"] = kid
		}
		s, err := tok.SignedString(signer)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + s
	}
	for _, c := range []struct {
		name   string
		header string
		reason string // "" when accepted
	}{
		{"RS256", signed(jwt.SigningMethodRS256, rsaSigner(), nil), ""},
		{"ES256", signed(jwt.SigningMethodES256, ecSigners()[0], nil), ""},
		{"EmptyKid", signed(jwt.SigningMethodES256, ecSigners()[0], ""), ""},
		{"KeyPublishedForEncryption", signed(jwt.SigningMethodES256, ecSigners()[1], nil), ReasonSignature},
		{"PS256UnderAnRS256Key", signed(jwt.SigningMethodPS256, rsaSigner(), nil), ReasonUnknownKey},
		{"EmptyKidOfNoKey", signed(jwt.SigningMethodEdDSA, edSigner(), ""), ReasonUnknownKey},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), c.header)
			if c.reason == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			authError(t, err, CodeInvalidToken, c.reason)
		})
	}
	if n := idp.jwksHits.Load(); n != fetches {
		t.Errorf("the JWKS was fetched %d times more, want none", n-fetches)
	}
}
