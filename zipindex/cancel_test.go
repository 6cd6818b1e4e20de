package zipindex

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"rsfs/fetch"
)

// stallingServer serves data until stall is set; from then on every request
// hangs until its client goes away (or the test ends).
func stallingServer(t *testing.T, data []byte) (url string, stall *atomic.Bool, hung *atomic.Int64) {
	stall, hung = &atomic.Bool{}, &atomic.Int64{}
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stall.Load() {
			hung.Add(1)
			select {
			case <-r.Context().Done():
			case <-done:
			}
			return
		}
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "p.zip", time.Unix(0, 0), bytes.NewReader(data))
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv.URL + "/p.zip", stall, hung
}

// The reader's own context is Background, as a mount's long-lived package
// reader's is: only the caller's ctx can end a hung directory or
// local-header read, and it must (an unmount waits on these reads).
func TestCallersContextEndsHungReads(t *testing.T) {
	data := hostileBase(t)
	url, stall, hung := stallingServer(t, data)
	c := fetch.New(fetch.Options{CredentialOrigin: url, Retries: -1, Timeout: 10 * time.Minute})
	ra := fetch.NewReaderAt(context.Background(), c, url, int64(len(data)), `"v1"`)

	cancelSoon := func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for hung.Load() == 0 {
				time.Sleep(5 * time.Millisecond)
			}
			cancel()
		}()
		t.Cleanup(cancel)
		return ctx
	}

	t.Run("central directory", func(t *testing.T) {
		stall.Store(true)
		hung.Store(0)
		res := make(chan error, 1)
		go func() {
			_, err := Open(cancelSoon(), ra, int64(len(data)), url, Options{})
			res <- err
		}()
		select {
		case err := <-res:
			require.ErrorIs(t, err, context.Canceled)
		case <-time.After(30 * time.Second):
			t.Fatal("Open did not return after its context was cancelled")
		}
	})

	t.Run("local header", func(t *testing.T) {
		stall.Store(false)
		p, err := Open(context.Background(), ra, int64(len(data)), url, Options{})
		require.NoError(t, err)
		m, ok := p.Lookup("b")
		require.True(t, ok)
		stall.Store(true)
		hung.Store(0)
		res := make(chan error, 1)
		go func() {
			rc, err := p.Reader(cancelSoon(), m, 0, m.Size)
			if rc != nil {
				rc.Close()
			}
			res <- err
		}()
		select {
		case err := <-res:
			require.ErrorIs(t, err, context.Canceled)
		case <-time.After(30 * time.Second):
			t.Fatal("Reader did not return after its context was cancelled")
		}
	})
}
