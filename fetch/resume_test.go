package fetch

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveNoETag serves data without an ETag, with Last-Modified when mod is
// not zero.
func serveNoETag(data []byte, mod time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", mod, bytes.NewReader(data))
	}
}

func TestRangeBodyResumesWithoutETag(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mod     time.Time
		ifRange string
	}{
		{"last-modified", testModTime, testModTime.Format(http.TimeFormat)},
		{"no validator", time.Time{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := testContent(4000)
			var calls atomic.Int64
			srv, rec := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) == 1 {
					resetAfter(t, w, r, data, tc.mod, 700)
					return
				}
				serveNoETag(data, tc.mod)(w, r)
			}))
			c := newTestClient(t, fastOptions(), srv)
			rb, err := c.Range(testContext(t), srv.URL+"/f", 1000, 2000, "")
			require.NoError(t, err)
			assert.Equal(t, data[1000:3000], readAll(t, rb))
			require.Equal(t, int64(2), rec.count.Load())
			assert.Equal(t, "bytes=1700-2999", rec.header(1).Get("Range"))
			assert.Equal(t, tc.ifRange, rec.header(1).Get("If-Range"))
		})
	}
}

func TestRangeBodyResumeWithOtherLengthFails(t *testing.T) {
	data := testContent(4000)
	var calls atomic.Int64
	broken := breakMidBody(t, data, "", 700)
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			broken(w, r)
			return
		}
		serveNoETag(testContent(5000), time.Time{})(w, r)
	}))
	c := newTestClient(t, fastOptions(), srv)
	rb, err := c.Range(testContext(t), srv.URL+"/f", 1000, 2000, "")
	require.NoError(t, err)
	defer rb.Close()
	got, err := io.ReadAll(rb)
	assert.Equal(t, data[1000:1700], got)
	assert.ErrorIs(t, err, ErrChanged)
}

// resetAfter answers a range with a 206 without an ETag (with
// Last-Modified unless mod is zero), sends sent bytes and resets.
func resetAfter(t *testing.T, w http.ResponseWriter, r *http.Request, data []byte, mod time.Time, sent int) {
	var first, last int
	_, err := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &first, &last)
	require.NoError(t, err)
	conn, buf, err := http.NewResponseController(w).Hijack()
	require.NoError(t, err)
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes %d-%d/%d\r\n", first, last, len(data))
	if !mod.IsZero() {
		fmt.Fprintf(buf, "Last-Modified: %s\r\n", mod.Format(http.TimeFormat))
	}
	fmt.Fprintf(buf, "Content-Length: %d\r\n\r\n", last-first+1)
	_, _ = buf.Write(data[first : first+sent])
	_ = buf.Flush()
	hijackCloseConn(conn)
}

// drip serves a 206 of n bytes one byte per interval.
func drip(n int, interval time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		for range n {
			if _, err := w.Write([]byte{'x'}); err != nil {
				return
			}
			_ = rc.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(interval):
			}
		}
	}
}

func TestDripBelowMinRateTimesOut(t *testing.T) {
	srv, _ := newServer(t, drip(1000, 20*time.Millisecond))
	opts := fastOptions()
	opts.Timeout = 300 * time.Millisecond // each byte comes well within it
	opts.MinRate = 1000                   // 300 bytes per window; the drip gives ~15
	c := newTestClient(t, opts, srv)

	resp, err := c.Get(testContext(t), srv.URL+"/drip", nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	done := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, resp.Body); done <- err }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrTimeout)
		assert.Contains(t, err.Error(), "below the minimum")
	case <-time.After(10 * time.Second):
		t.Fatal("a drip was not bounded by the minimum rate")
	}
}

func TestNoMinRateLetsADripThrough(t *testing.T) {
	srv, _ := newServer(t, drip(20, 10*time.Millisecond))
	opts := fastOptions()
	opts.MinRate = -1
	c := newTestClient(t, opts, srv)
	resp, err := c.Get(testContext(t), srv.URL+"/drip", nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	assert.Len(t, got, 20, "every byte of the drip was read")
}
