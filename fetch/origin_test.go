package fetch

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The canonical form itself is tested in package origin; fetch adds that
// only http and https are origins requests may go to.
func TestHTTPOrigin(t *testing.T) {
	got, err := httpOrigin("HTTPS://Example.ORG:443/a")
	require.NoError(t, err)
	assert.Equal(t, "https://example.org", got)
	for _, bad := range []string{"ftp://example.org/", "/relative/path", "http://", "::not a url"} {
		_, err := httpOrigin(bad)
		assert.Error(t, err, bad)
	}
}

func TestHostPolicy(t *testing.T) {
	c := New(Options{CredentialOrigin: "HTTPS://Source.example", Headers: http.Header{"Authorization": {"x"}}, Logger: fastOptions().Logger})
	c.AllowOrigin("http://mirror.example:8080/some/path")
	c.AllowOrigin("ftp://ignored.example")
	c.AllowOrigin("Bare.example")
	c.AllowOrigin("ported.example:8443")
	c.AllowOrigin("bad host:x")

	assert.True(t, c.Allowed("https://source.example:443/a"))
	assert.True(t, c.Allowed("https://SOURCE.example/b"))
	assert.False(t, c.Allowed("http://source.example/b"), "other scheme is another origin")
	assert.True(t, c.Allowed("http://mirror.example:8080/c"))
	assert.False(t, c.Allowed("http://mirror.example/c"), "other port is another origin")
	assert.False(t, c.Allowed("ftp://ignored.example/"))
	assert.False(t, c.Allowed("https://evil.example/"))
	assert.True(t, c.Allowed("https://bare.example/x"))
	assert.True(t, c.Allowed("http://bare.example/x"))
	assert.False(t, c.Allowed("http://bare.example:8080/x"))
	assert.True(t, c.Allowed("https://ported.example:8443/x"))
	assert.False(t, c.Allowed("https://ported.example/x"))

	assert.True(t, sendsCredentials(c, "https://source.example/a"))
	assert.False(t, sendsCredentials(c, "http://mirror.example:8080/c"))

	c.AllowAnyOrigin()
	assert.True(t, c.Allowed("https://evil.example/"))
	assert.False(t, sendsCredentials(c, "https://evil.example/"))
}

// sendsCredentials reports whether the policy gives requests to rawURL
// the credential headers.
func sendsCredentials(c *Client, rawURL string) bool {
	creds, _ := c.policy.consult(rawURL)
	return len(creds) > 0
}

func TestParseContentRange(t *testing.T) {
	good := map[string]contentRange{
		"bytes 0-0/1234":  {0, 0, 1234},
		"bytes 100-199/*": {100, 199, -1},
		"bytes */0":       {-1, -1, 0},
		"Bytes 5-9/10":    {5, 9, 10},
		" bytes 0-9/10 ":  {0, 9, 10},
	}
	for in, want := range good {
		got, err := parseContentRange(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "bytes", "items 0-1/2", "bytes 0-9", "bytes 9-0/10", "bytes 0-10/10", "bytes */*", "bytes a-b/10"} {
		_, err := parseContentRange(bad)
		assert.Error(t, err, bad)
	}
}

func TestStatusErrorText(t *testing.T) {
	const advice = "--max-rate sets a lower request rate"
	err := error(&StatusError{URL: "https://s.example/x", Code: 503, SlowDown: advice})
	assert.True(t, strings.HasPrefix(err.Error(), "fetch https://s.example/x: HTTP 503 Service Unavailable"), err.Error())
	assert.Contains(t, err.Error(), "refusing requests as too many: --max-rate", "a refusal names the remedy")
	assert.Contains(t, (&StatusError{URL: "u", Code: 429, SlowDown: advice}).Error(), "after every retry: --max-rate")
	assert.Equal(t, "fetch u: HTTP 429 Too Many Requests (the Source refused it as too many requests, after every retry)", (&StatusError{URL: "u", Code: 429}).Error(),
		"without advice, what went wrong only")
	assert.NotContains(t, (&StatusError{URL: "u", Code: 404, SlowDown: advice}).Error(), "--max-rate")
	assert.True(t, strings.HasPrefix((&StatusError{URL: "u", Code: 404, Status: "404 Not Found"}).Error(), "fetch u: HTTP 404 Not Found"))
}

func TestBackoffFullJitterIsBounded(t *testing.T) {
	c := New(Options{BackoffBase: 10 * 1e6, BackoffMax: 40 * 1e6})
	ceilings := []int64{10e6, 20e6, 40e6, 40e6, 40e6}
	for attempt, ceiling := range ceilings {
		var maxSeen int64
		for range 200 {
			d := int64(c.backoff(attempt))
			require.GreaterOrEqual(t, d, int64(0))
			require.LessOrEqual(t, d, ceiling, "attempt %d", attempt)
			maxSeen = max(maxSeen, d)
		}
		assert.Greater(t, maxSeen, ceiling/2, "attempt %d never came near its ceiling", attempt)
	}
	assert.LessOrEqual(t, int64(c.backoff(80)), int64(40e6), "no overflow for big attempts")
}

// TestBackoffWaitsOfOneAttemptDiffer: many mounts whose origin failed at
// the same moment must not all retry at the same moment. The waits before
// one retry are drawn anew each time from the whole of [0, ceiling] (full
// jitter), so they differ, and both the bottom and the top quarter of the
// range are reached.
func TestBackoffWaitsOfOneAttemptDiffer(t *testing.T) {
	c := New(Options{BackoffBase: 10 * time.Millisecond, BackoffMax: 40 * time.Millisecond})
	for attempt, ceiling := range []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond} {
		seen := map[time.Duration]bool{}
		var low, high int
		for range 500 {
			d := c.backoff(attempt)
			require.GreaterOrEqual(t, d, time.Duration(0), "attempt %d", attempt)
			require.LessOrEqual(t, d, ceiling, "attempt %d", attempt)
			seen[d] = true
			if d < ceiling/4 {
				low++
			}
			if d > ceiling*3/4 {
				high++
			}
		}
		assert.Greater(t, len(seen), 100, "attempt %d: 500 waits, distinct", attempt)
		assert.NotZero(t, low, "attempt %d: no wait in the bottom quarter of [0, %v]", attempt, ceiling)
		assert.NotZero(t, high, "attempt %d: no wait in the top quarter of [0, %v]", attempt, ceiling)
	}
}
