package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

	"rsfs/fetch"
)

// A failed read is said in the words of its cause, the URL not repeated,
// with the flag that would fix it.
func TestExplainRead(t *testing.T) {
	const uri = "http://localhost:8080/awkward/otherhost.txt"
	wrap := func(err error) error {
		err = fmt.Errorf("fetch %s: every copy failed: %w", uri, errors.Join(fmt.Errorf("fetch %s: %w", uri, err)))
		err = fmt.Errorf("cache: open %s bytes [0,391): %w", uri, err)
		return fmt.Errorf("cache: read %s block 0: %w", uri, err)
	}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, c := range []struct {
		err        error
		cause, fix string
	}{
		{fetch.ErrNotAllowed, "host not allowed", "mount with --allow-host http://localhost:8080 if that host is to be trusted"},
		{&fetch.StatusError{URL: uri, Code: 403, Status: "403 Forbidden"}, "HTTP 403 Forbidden", "pass credentials with --header or --bearer-token-env"},
		{&fetch.StatusError{URL: uri, Code: 404, Status: "404 Not Found"}, "HTTP 404 Not Found", ""},
		{&fetch.StatusError{URL: uri, Code: 429, Status: "429 Too Many Requests"}, "HTTP 429 Too Many Requests",
			"the Source kept refusing it as too many requests after every retry: mount with a lower --max-rate (rsfs slowed down already; --max-rate starts lower), or try again"},
		{refused, "dial tcp: connect: connection refused", ""},
		{fmt.Errorf("%w: %s: sha-256 mismatch", errors.New("integrity check failed"), uri), "integrity check failed: sha-256 mismatch", ""},
	} {
		cause, fix := explainRead(uri, wrap(c.err))
		assert.Equal(t, c.cause, cause)
		assert.Equal(t, c.fix, fix)
	}
}
