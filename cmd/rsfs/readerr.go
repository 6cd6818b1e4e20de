package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"

	"rsfs/fetch"
	"rsfs/origin"
)

// explainRead is fs.Config.ExplainRead: why a read of uri failed with
// err, in the words of its innermost causes (each layer of the cache and
// the fetch added the URL again), and the flag that would fix it.
func explainRead(uri string, err error) (cause, fix string) {
	var words []string
	for _, c := range causes(err) {
		w := strings.ReplaceAll(strings.TrimPrefix(c.Error(), "fetch: "), uri+": ", "")
		if len(words) == 0 || words[len(words)-1] != w {
			words = append(words, w)
		}
	}
	return strings.Join(words, "; "), remedy(uri, err)
}

// causes are the innermost errors of err: each of a joined error's (every
// copy that failed), and down a chain the first that says more than what
// it wraps ("integrity check failed: ..." wraps the bare sentinel) or is a
// network operation's ("dial tcp HOST: connect: connection refused"). An
// HTTP status is a cause of its own, without its URL.
func causes(err error) []error {
	for {
		var status *fetch.StatusError
		var op *net.OpError
		var off *fetch.OfflineError
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
		if errors.Is(err, fetch.ErrNotAllowed) {
			// The fetch error also names the flag, which the fix says.
			return []error{fetch.ErrNotAllowed}
		}
		next := errors.Unwrap(err)
		if next == nil || !strings.HasSuffix(err.Error(), next.Error()) {
			return []error{err}
		}
		err = next
	}
}

func statusText(e *fetch.StatusError) string {
	if e.Status != "" {
		return e.Status
	}
	return http.StatusText(e.Code)
}

// remedy is the flag that would let the read of uri succeed, or "".
func remedy(uri string, err error) string {
	var status *fetch.StatusError
	switch {
	case errors.Is(err, fetch.ErrNotAllowed):
		if o, oerr := origin.Of(uri); oerr == nil {
			return "mount with --allow-host " + o + " if that host is to be trusted"
		}
		return "mount with --allow-host for the resource's host"
	case errors.As(err, &status) && (status.Code == http.StatusUnauthorized || status.Code == http.StatusForbidden):
		return "pass credentials with --header or --bearer-token-env"
	case errors.As(err, &status) && (status.Code == http.StatusTooManyRequests || status.Code == http.StatusServiceUnavailable):
		return "the Source kept refusing it as too many requests after every retry: mount with a lower --max-rate (rsfs slowed down already; --max-rate starts lower), or try again"
	case errors.Is(err, fetch.ErrOffline):
		return "the Source does not answer: files on disk are still served, and the polls keep trying; 'rsfs warm' fetches files to disk ahead while the Source answers"
	case errors.Is(err, fetch.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return "the host did not answer within --timeout: raise it, or try again"
	}
	return ""
}
