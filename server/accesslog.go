package server

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// AccessLogPolicy chooses the requests the access log writes a line for
// (docs/OPERATIONS.md, Access log). A busy server answers tens of thousands
// of requests a second, and a line each is more than a small machine's
// journal takes: the operator writes every request, only the ones worth a
// look, a sample, or none. The requests of every route and status are
// counted in the metrics whatever the policy, and the lines not written in
// catalogd_access_log_lines_total{result="skipped"}.
type AccessLogPolicy struct {
	// Mode is which requests are written.
	Mode AccessLogMode
	// Every is, in AccessLogSample, how many requests one line stands
	// for: the others not worth a look, 1 in Every, are written.
	Every uint64
	// Slow is the duration from which a request is worth a look, in
	// AccessLogErrors and AccessLogSample; 0 means DefaultSlowRequest.
	Slow time.Duration
}

// AccessLogMode is the choice of AccessLogPolicy.
type AccessLogMode int

const (
	// AccessLogAll writes every request.
	AccessLogAll AccessLogMode = iota
	// AccessLogErrors writes the requests worth a look: answered 400 or
	// more, an answer not written whole, or slower than Slow.
	AccessLogErrors
	// AccessLogSample writes the requests worth a look, and 1 in Every of
	// the others.
	AccessLogSample
	// AccessLogNone writes no line.
	AccessLogNone
)

// DefaultSlowRequest is the duration from which a request is slow, when
// AccessLogPolicy leaves Slow 0: a hundred times a typical answer.
const DefaultSlowRequest = 500 * time.Millisecond

// ParseAccessLog reads the policy of the --access-log flag: "all",
// "errors", "sample:N" (N at least 1) or "none".
func ParseAccessLog(s string) (AccessLogPolicy, error) {
	switch s {
	case "all":
		return AccessLogPolicy{Mode: AccessLogAll}, nil
	case "errors":
		return AccessLogPolicy{Mode: AccessLogErrors}, nil
	case "none":
		return AccessLogPolicy{Mode: AccessLogNone}, nil
	}
	if n, ok := strings.CutPrefix(s, "sample:"); ok {
		every, err := strconv.ParseUint(n, 10, 32)
		if err == nil && every >= 1 {
			return AccessLogPolicy{Mode: AccessLogSample, Every: every}, nil
		}
	}
	return AccessLogPolicy{}, fmt.Errorf("%q: want all, errors, sample:N (a line for 1 request in N, N at least 1) or none", s)
}

// String gives the policy as ParseAccessLog reads it.
func (p AccessLogPolicy) String() string {
	switch p.Mode {
	case AccessLogErrors:
		return "errors"
	case AccessLogSample:
		return "sample:" + strconv.FormatUint(p.Every, 10)
	case AccessLogNone:
		return "none"
	}
	return "all"
}

// accessLogFilter applies a policy to each request.
type accessLogFilter struct {
	policy AccessLogPolicy
	slow   time.Duration
	seen   atomic.Uint64 // requests not worth a look, in AccessLogSample
}

func newAccessLogFilter(p AccessLogPolicy) *accessLogFilter {
	return &accessLogFilter{policy: p, slow: cmp.Or(p.Slow, DefaultSlowRequest)}
}

// writes reports whether the access log writes the line of a request
// answered with status in elapsed, whose answer was written whole unless
// incomplete.
func (f *accessLogFilter) writes(status int, elapsed time.Duration, incomplete bool) bool {
	switch f.policy.Mode {
	case AccessLogAll:
		return true
	case AccessLogNone:
		return false
	}
	if status >= 400 || incomplete || elapsed >= f.slow {
		return true
	}
	// The first of every Every, so that a sample of one request in a
	// thousand starts with a line.
	return f.policy.Mode == AccessLogSample && (f.seen.Add(1)-1)%f.policy.Every == 0
}
