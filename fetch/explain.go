package fetch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
)

// Cause says why a request for uri failed with err, in the words of its
// innermost causes (each layer of the cache and the fetch added the URL
// again), joined by "; ".
func Cause(uri string, err error) string {
	var words []string
	for _, c := range causes(err) {
		w := strings.ReplaceAll(strings.TrimPrefix(c.Error(), "fetch: "), uri+": ", "")
		if len(words) == 0 || words[len(words)-1] != w {
			words = append(words, w)
		}
	}
	return strings.Join(words, "; ")
}

// causes are the innermost errors of err: each of a joined error's (every
// copy that failed), and down a chain the first that says more than what
// it wraps ("integrity check failed: ..." wraps the bare sentinel) or is a
// network operation's ("dial tcp HOST: connect: connection refused"). An
// HTTP status is a cause of its own, without its URL.
func causes(err error) []error {
	for {
		var status *StatusError
		var op *net.OpError
		var off *OfflineError
		switch {
		case errors.As(err, &off) && err == error(off):
			return []error{err}
		case errors.As(err, &status) && errors.Unwrap(err) == nil:
			return []error{errors.New("HTTP " + statusText(status))}
		case errors.As(err, &op) && err == error(op):
			return []error{err}
		}
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			var out []error
			for _, e := range joined.Unwrap() {
				out = append(out, causes(e)...)
			}
			return out
		}
		if errors.Is(err, ErrNotAllowed) {
			// The fetch error also names what allows it, which the
			// remedy says.
			return []error{ErrNotAllowed}
		}
		next := errors.Unwrap(err)
		if next == nil || !strings.HasSuffix(err.Error(), next.Error()) {
			return []error{err}
		}
		err = next
	}
}

func statusText(e *StatusError) string {
	if e.Status != "" {
		return e.Status
	}
	return http.StatusText(e.Code)
}

// Remedy is what would let a failed request succeed; the command words it
// in its own terms (its flags).
type Remedy int

const (
	NoRemedy      Remedy = iota
	AllowHost            // the host is not allowed: allow it
	Credentials          // 401 or 403: send credentials
	SlowDown             // 429 or 503 after every retry: a lower request rate
	WhileOnline          // the Source is offline: what is on disk is served
	LongerTimeout        // no answer in time: a longer timeout, or later
)

// RemedyOf is the remedy for a request that failed with err.
func RemedyOf(err error) Remedy {
	var status *StatusError
	switch {
	case errors.Is(err, ErrNotAllowed):
		return AllowHost
	case errors.As(err, &status) && (status.Code == http.StatusUnauthorized || status.Code == http.StatusForbidden):
		return Credentials
	case errors.As(err, &status) && (status.Code == http.StatusTooManyRequests || status.Code == http.StatusServiceUnavailable):
		return SlowDown
	case errors.Is(err, ErrOffline):
		return WhileOnline
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return LongerTimeout
	}
	return NoRemedy
}
