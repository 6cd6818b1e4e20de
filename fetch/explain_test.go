package fetch

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A failed read is said in the words of its cause, the URL not repeated,
// with the kind of remedy that would fix it.
func TestCauseAndRemedy(t *testing.T) {
	const uri = "http://localhost:8080/awkward/otherhost.txt"
	wrap := func(err error) error {
		err = fmt.Errorf("fetch %s: every copy failed: %w", uri, errors.Join(fmt.Errorf("fetch %s: %w", uri, err)))
		err = fmt.Errorf("cache: open %s bytes [0,391): %w", uri, err)
		return fmt.Errorf("cache: read %s block 0: %w", uri, err)
	}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, c := range []struct {
		err    error
		cause  string
		remedy Remedy
	}{
		{ErrNotAllowed, "host not allowed", AllowHost},
		{&StatusError{URL: uri, Code: 403, Status: "403 Forbidden"}, "HTTP 403 Forbidden", Credentials},
		{&StatusError{URL: uri, Code: 404, Status: "404 Not Found"}, "HTTP 404 Not Found", NoRemedy},
		{&StatusError{URL: uri, Code: 429, Status: "429 Too Many Requests"}, "HTTP 429 Too Many Requests", SlowDown},
		{refused, "dial tcp: connect: connection refused", NoRemedy},
		{fmt.Errorf("%w: %s: sha-256 mismatch", errors.New("integrity check failed"), uri), "integrity check failed: sha-256 mismatch", NoRemedy},
		{fmt.Errorf("fetch GET %s: no response within 1s: %w", uri, ErrTimeout), "timeout", LongerTimeout},
	} {
		err := wrap(c.err)
		assert.Equal(t, c.cause, Cause(uri, err))
		assert.Equal(t, c.remedy, RemedyOf(err), c.cause)
	}
}
