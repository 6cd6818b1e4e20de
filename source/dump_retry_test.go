package source

import (
	"archive/zip"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/fetch"
)

// flakyPackage serves a small ZIP at /p.zip, answering 503 while down is
// set, and counts the requests that reached it.
func flakyPackage(t *testing.T) (url string, down *atomic.Bool, hits *atomic.Int64) {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	f, err := w.Create("resources/a.txt")
	require.NoError(t, err)
	_, _ = f.Write([]byte("hello\n"))
	require.NoError(t, w.Close())
	data := buf.Bytes()
	down, hits = &atomic.Bool{}, &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("ETag", `"p1"`)
		http.ServeContent(w, r, "p.zip", time.Unix(0, 0), bytes.NewReader(data))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/p.zip", down, hits
}

func testPackages(t *testing.T, url string) (*packages, *time.Time) {
	s := newSource(url, fetch.ReasonGiven, testOptions())
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.pkgs.retryBase, s.pkgs.retryMax = time.Minute, 4*time.Minute
	s.pkgs.now = func() time.Time { return now }
	return &s.pkgs, &now
}

func TestPackageOpenFailureIsRetriedWithBackoff(t *testing.T) {
	url, down, hits := flakyPackage(t)
	pkgs, now := testPackages(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	down.Store(true)
	_, err := pkgs.open(ctx, url)
	require.Error(t, err)
	failed := hits.Load()
	require.Positive(t, failed)

	_, err = pkgs.open(ctx, url)
	require.Error(t, err, "within the backoff the failure is answered from memory")
	assert.Equal(t, failed, hits.Load(), "no request within the backoff")

	down.Store(false)
	*now = now.Add(59 * time.Second)
	_, err = pkgs.open(ctx, url)
	require.Error(t, err, "still within the first backoff (1 minute)")
	assert.Equal(t, failed, hits.Load())

	*now = now.Add(2 * time.Second)
	pkg, err := pkgs.open(ctx, url)
	require.NoError(t, err, "tried again once the backoff passed")
	_, ok := pkg.Lookup("resources/a.txt")
	assert.True(t, ok)

	opened := hits.Load()
	down.Store(true)
	_, err = pkgs.open(ctx, url)
	require.NoError(t, err, "an open package is kept")
	assert.Equal(t, opened, hits.Load())
}

func TestPackageBackoffDoublesUpToItsMaximum(t *testing.T) {
	p := &packages{retryBase: time.Minute, retryMax: 4 * time.Minute}
	var got []time.Duration
	for f := 1; f <= 5; f++ {
		got = append(got, p.backoff(f))
	}
	assert.Equal(t, []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 4 * time.Minute, 4 * time.Minute}, got)
}

func TestPackageOpenCancelledByItsCallerIsNotRemembered(t *testing.T) {
	url, _, hits := flakyPackage(t)
	pkgs, _ := testPackages(t, url)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := pkgs.open(gone, url)
	require.ErrorIs(t, err, context.Canceled)

	ctx, cancel2 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel2()
	before := hits.Load()
	pkg, err := pkgs.open(ctx, url)
	require.NoError(t, err, "the next reader opens it at once: no backoff for a reader that went away")
	assert.Greater(t, hits.Load(), before)
	_, ok := pkg.Lookup("resources/a.txt")
	assert.True(t, ok)
}
