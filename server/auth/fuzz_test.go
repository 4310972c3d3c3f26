package auth

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// fuzzKeyPEM is an RSA key made for FuzzAuthorizationHeader alone. It is
// fixed, not generated, because the fuzzer runs the target in several
// processes that exchange inputs: a token signed in one must verify in
// another, so the key, the issuer and the clock are the same in all of them,
// and RS256 signatures are deterministic.
const fuzzKeyPEM = `
-----BEGIN PRIVATE KEY-----
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQC5S8B3kunavpEb
/kEzn39aQuGWNj/64u1LCUvFen9eDkp2ycxxfXI3uWqaFlpIdq8Pz08DytrMwbIN
1dj0gtGZvT0J4JWRNgCkPFteEi26C3gWujxf8zK81t/RnWXBH0ZwsZwiHy3YePje
skLaFuN6a3uKJvVcloh6sIbyH2CWyHgzH9YpItAxYf9zfNqeaze1y7YFaMXIFixV
XH9Qttksiy+GxRnpH3lSr6WEIRFOwKbAq4ndmSk2zyQAIcTQj17vW63eko3Qc9NV
p8ZNPbMZ37+MsXzOfbEJo8OjStMDLfaw/+1m8JoG+a8mxHrQ+DuT9xkk0Q7TUy7X
qxYDLQQdAgMBAAECggEABWuin/ml4/UB32W27qwECI+SNB5Dc8ZAwE28XNstdij1
wzDtWhJcIMBIqGTIGjx3xXJGtee9fx9mCZMS2dMPQoLSntZMmDCe+kiP6+Bp9e10
Q1Mj3uYWB7tDO8lk5GGGLz5Dp1jhP7OipISzWwtjEKrFWw0ZAOIgPT/EPTl8Dk6w
TQy30Prbecjsvnm13Vi65wQO8iGX3OEdYR1wDW4x4GJp2kh6DekS+wfRPzhGItNo
2vfbgv30b7LLRIskbvx2CFJZjk9eCaYoAzmjlRp+zEvGYMEUCcDgvoz2LXarj+Kc
mu8ChRsTh9gTveon6i6v0vZ9lphMEu2eG0+0B8uzgQKBgQDrcnSRD04SBVxv//d2
kF/X0p5a6ofKBw06ExaFPYsAVJgFxBHHx4gx6e83QaXZ6cB5z7yK93HDFU2bQKNV
ZvEKWjOfNikmgCbKyahMGxOWJK4RFPI2WsITWNB67+UQ5T0lkokLry9GhMQxKNJK
Yr2UkGMj8iY95d0kbDjpHE0JgQKBgQDJeJDtvq3iadjFH82IV1PGhufKgwIZm9Kc
dfzi0xprlYoONO7KcCuiOS5sc7mWk2q1o+5Pie9P2cg69EcOWfMDfAxYhP7+Ghuh
wAWJ5MJdlpV608UEoVGDGczkBymBYwbYHCixHDfYDKBwf+0LVksaRZLvptCfgRFo
G7aGTSYwnQKBgQDSx8mBX9FFotUJU38H/uI+xciMne/otn1p41LC/8CkEBd0+f3s
+z17afGFZ1kCCBkPNCGXy0RmIHk0px5SQ3FBElWqkAMw+4M/Al+PmqHjRX0rv7PD
Y2bhiR5DIObSRFeEfnYAJtpM6Gj3lZMFkvYjvUt0D8GaomFizRv53SM+gQKBgCXa
65BgVZfHP526XgoSLoGM85yPhSN+rdIMMVoFRF+Wl3wX4g5TiT9P8zMZg3ORe2lp
xetYBYlBaGf7YiaGLC0pb8BqLOddzHdV9zRzsTmYg7mydMBr9z7k6CSoW9od2zlc
ASFWJgAIT1UUFFwe+LmU/QjelTCDNdwT6PXPJS/ZAoGBAKIV2B8k/NuPI1XZlTd+
Io7SUe663KfPVkPPZuC2E0+RFF2WYpLtrGE7U4S+nds1ZykIIum24u6PwzVPQPOs
fy2BhA4oppKySAKxUI3bSntPq1XDXCCYn5oIHAafZ1T7P32Ppn5i5er6w7G+TU8j
D6FeaT+9njIUoY7XFHntofK+
-----END PRIVATE KEY-----
`

const fuzzIssuer = "https://idp.fuzz.example/"

// fuzzNow is the verifier's clock: the seed tokens are valid at this time
// whenever the fuzzer runs.
var fuzzNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

var reasons = []string{
	ReasonMissing, ReasonScheme, ReasonMalformed, ReasonAlgorithm, ReasonUnknownKey, ReasonUnavailable,
	ReasonSignature, ReasonExpired, ReasonExpMissing, ReasonNotYetValid, ReasonIssuedAt, ReasonIssuer,
	ReasonAudience, ReasonClient, ReasonDenied, ReasonScope,
}

// FuzzAuthorizationHeader sends arbitrary Authorization headers through
// Verify, with a real JWKS served over HTTP. Seeds: valid RS256 tokens, the
// same tokens mangled in each segment, tokens with a valid signature and
// one claim wrong, and malformed headers. Properties: Verify never panics;
// it accepts a header exactly when it is "Bearer" (any case) and one of the
// valid tokens, untouched; every rejection is an *Error with status 401, a
// documented reason and the code that goes with it, and a description
// that never repeats the header or the token.
func FuzzAuthorizationHeader(f *testing.F) {
	block, _ := pem.Decode([]byte(fuzzKeyPEM))
	if block == nil {
		f.Fatal("no PEM block in fuzzKeyPEM")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		f.Fatal(err)
	}
	rsaKey := parsed.(*rsa.PrivateKey)
	key := newTestKey(f, "fuzz-rsa", rsaKey, jwt.SigningMethodRS256)
	idp := newTestIdP(f, key)
	v := newVerifier(f, idp, func(c *Config) {
		c.Issuer = fuzzIssuer
		c.JWKSURL = idp.url + "/keys"
		c.Now = func() time.Time { return fuzzNow }
		c.DenyClients = []string{"banned"}
		c.RefreshWait = 100 * time.Millisecond
	})
	if !v.Ready() {
		f.Fatal("the verifier did not load the JWKS")
	}

	claims := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{
			"iss":   fuzzIssuer,
			"sub":   "partner-sub",
			"azp":   "partner-1",
			"aud":   testAudience,
			"scope": "openid " + Scope,
			"iat":   fuzzNow.Add(-time.Minute).Unix(),
			"nbf":   fuzzNow.Add(-time.Minute).Unix(),
			"exp":   fuzzNow.Add(time.Hour).Unix(),
			"jti":   "fuzz",
		}
		if edit != nil {
			edit(c)
		}
		return c
	}
	noKid := func(c jwt.Claims) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodRS256, c).SignedString(rsaKey)
		if err != nil {
			f.Fatal(err)
		}
		return s
	}
	valid := []string{
		sign(f, key, claims(nil)),
		sign(f, key, claims(func(c jwt.MapClaims) {
			c["aud"] = []string{"https://other.example", testAudience}
			delete(c, "scope")
			c["scp"] = []string{Scope}
		})),
		noKid(claims(nil)), // without a kid, every published key is tried
	}
	isValid := func(header string) bool {
		scheme, rest, _ := strings.Cut(header, " ")
		return strings.EqualFold(scheme, "Bearer") && slices.Contains(valid, strings.TrimLeft(rest, " "))
	}

	signedButWrong := []string{
		sign(f, key, claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.example/" })),
		sign(f, key, claims(func(c jwt.MapClaims) { c["aud"] = "https://other.example" })),
		sign(f, key, claims(func(c jwt.MapClaims) { delete(c, "aud") })),
		sign(f, key, claims(func(c jwt.MapClaims) { c["exp"] = fuzzNow.Add(-time.Hour).Unix() })),
		sign(f, key, claims(func(c jwt.MapClaims) { delete(c, "exp") })),
		sign(f, key, claims(func(c jwt.MapClaims) { c["nbf"] = fuzzNow.Add(time.Hour).Unix() })),
		sign(f, key, claims(func(c jwt.MapClaims) { c["iat"] = fuzzNow.Add(time.Hour).Unix() })),
		sign(f, key, claims(func(c jwt.MapClaims) { c["scope"] = "openid" })),
		sign(f, key, claims(func(c jwt.MapClaims) { c["scope"] = 42 })),
		sign(f, key, claims(func(c jwt.MapClaims) { c["azp"] = "banned" })),
		sign(f, key, claims(func(c jwt.MapClaims) { delete(c, "azp"); delete(c, "sub") })),
		sign(f, &testKey{kid: "unknown", signer: rsaKey, method: jwt.SigningMethodRS256}, claims(nil)),
	}
	// alg "none", and HS256 keyed with the public key (algorithm confusion).
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims(nil)).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		f.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	if err != nil {
		f.Fatal(err)
	}
	hs := jwt.NewWithClaims(jwt.SigningMethodHS256, claims(nil))
	hs.Header["kid"] = key.kid
	hmac, err := hs.SignedString(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
	if err != nil {
		f.Fatal(err)
	}
	signedButWrong = append(signedButWrong, none, hmac)

	for _, tok := range valid {
		f.Add("Bearer " + tok)
		f.Add("bEaReR   " + tok)
		for _, m := range mangle(tok) {
			f.Add("Bearer " + m)
		}
	}
	for _, tok := range signedButWrong {
		f.Add("Bearer " + tok)
	}
	for _, h := range []string{
		"", "Bearer", "Bearer ", "Bearer  ", "Basic dXNlcjpwYXNz", "Bearer a b", "Bearer\t" + valid[0],
		"Bearer " + valid[0] + " ", "Bearer " + valid[0] + "\n", "Bearer ====", "Bearer a==", "Bearer " + strings.Repeat("a", maxTokenLen+1),
		"Bearer a.b.c", "Bearer ..", "Bearer " + valid[0] + "." + valid[1], "Bearer " + strings.ReplaceAll(valid[0], ".", ".."),
	} {
		f.Add(h)
	}

	f.Fuzz(func(t *testing.T, header string) {
		p, err := v.Verify(context.Background(), header)
		if err == nil {
			if !isValid(header) {
				t.Fatalf("Verify accepted %q, which is not one of the valid tokens", header)
			}
			if p.ClientID != "partner-1" || !slices.Contains(p.Scopes, Scope) {
				t.Fatalf("Verify(%q) = %+v, want the client partner-1 with %s", header, p, Scope)
			}
			return
		}
		if isValid(header) {
			t.Fatalf("Verify rejected the valid token in %q: %v", header, err)
		}
		var e *Error
		if !errors.As(err, &e) || err != error(e) {
			t.Fatalf("Verify(%q) returned %T %v, want an *Error", header, err, err)
		}
		if e.Status != http.StatusUnauthorized || !slices.Contains(reasons, e.Reason) {
			t.Fatalf("Verify(%q): status %d reason %q, want 401 and a documented reason", header, e.Status, e.Reason)
		}
		noCredentials := e.Reason == ReasonMissing || e.Reason == ReasonScheme
		switch {
		case (e.Code == "") != noCredentials,
			(e.Code == CodeInsufficientScope) != (e.Reason == ReasonScope),
			e.Code == CodeInvalidRequest && e.Reason != ReasonMalformed,
			!slices.Contains([]string{"", CodeInvalidRequest, CodeInvalidToken, CodeInsufficientScope}, e.Code):
			t.Fatalf("Verify(%q): code %q does not go with reason %q", header, e.Code, e.Reason)
		}
		if e.Description == "" || strings.ContainsFunc(e.Description, func(r rune) bool { return r < 0x20 || r >= 0x7f }) {
			t.Fatalf("Verify(%q): description %q is empty or not plain printable ASCII", header, e.Description)
		}
		_, token, _ := strings.Cut(header, " ")
		for _, echoed := range []string{header, strings.TrimSpace(token)} {
			if len(echoed) >= 12 && (strings.Contains(e.Description, echoed) || strings.Contains(e.Error(), echoed)) {
				t.Fatalf("Verify(%q): the error repeats what the client sent: %q", header, e.Error())
			}
		}
		if c := e.Challenge(testMetadataURL); strings.ContainsFunc(c, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("Verify(%q): challenge %q holds a control character", header, c)
		}
	})
}

// mangle returns variants of a token that must all be rejected: one
// character changed in each segment, segments dropped, cut or added, and
// the last character of the signature changed in a bit that its base64
// encoding does not use.
func mangle(tok string) []string {
	parts := strings.Split(tok, ".")
	var out []string
	for i, p := range parts {
		if p == "" {
			continue
		}
		for _, at := range []int{0, len(p) / 2, len(p) - 1} {
			b := []byte(p)
			if b[at] == 'A' {
				b[at] = 'B'
			} else {
				b[at] = 'A'
			}
			q := slices.Clone(parts)
			q[i] = string(b)
			out = append(out, strings.Join(q, "."))
		}
	}
	sig := parts[2]
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, sig[len(sig)-1])
	if (len(sig)*6)%8 != 0 {
		loose := sig[:len(sig)-1] + string(alphabet[last^1])
		if b1, err1 := base64.RawURLEncoding.DecodeString(sig); err1 == nil {
			if b2, err2 := base64.RawURLEncoding.DecodeString(loose); err2 == nil && string(b1) == string(b2) {
				out = append(out, parts[0]+"."+parts[1]+"."+loose)
			}
		}
	}
	return append(out,
		parts[0]+"."+parts[1],
		parts[0]+"."+parts[1]+".",
		tok[:len(tok)-1],
		tok+"=",
		tok+".",
		parts[1]+"."+parts[0]+"."+parts[2],
		"."+parts[1]+"."+parts[2],
	)
}
