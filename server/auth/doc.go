// Package auth authenticates catalogd's partners: it verifies the bearer JWTs
// of the identity provider against its JWKS, answers the RFC 9728 protected
// resource metadata, and, for `serve --dev`, issues tokens of its own that the
// same verifier accepts.
//
// Decisions that docs/CONTRACT.md, Authentication, leaves open, taken here:
//
//   - Every rejection is a 401 *Error. A missing header, and an Authorization
//     scheme other than Bearer, get no error code (RFC 6750 section 3.1 treats
//     both as "no credentials"); a Bearer header without exactly one b64token
//     is invalid_request; everything wrong with the token itself is
//     invalid_token; a valid token without catalog:read is insufficient_scope.
//   - A token must name a client (azp, client_id or sub); without one the
//     deny list could not apply, so it is rejected.
//   - A verification is cached for five minutes at most and never past exp,
//     so a key the IdP withdraws keeps working for tokens already seen for up
//     to five minutes. Clients on the deny list are refused even from the
//     cache. The cache is keyed by the token's SHA-256 and never holds a
//     usable token.
//   - An issuer's JWKS that becomes empty does not wipe the keys already
//     loaded: that is more likely a broken IdP deployment than the revocation
//     of every key. Withdrawing some keys takes effect at the next refresh.
//   - Until the first JWKS load succeeds, the loader retries with backoff from
//     half a second up to RefreshRateLimit (one minute by default), so a down
//     IdP sees at most one request a minute from each replica.
//   - The dev signing key file is used whatever its permissions (see
//     LoadOrCreateDevKey).
package auth
