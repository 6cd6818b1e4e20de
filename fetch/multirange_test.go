package fetch

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRangesInOneRequest(t *testing.T) {
	data := make([]byte, 100_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	var requests atomic.Int64
	ignore := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("ETag", `"v1"`)
		if ignore {
			w.Write(data)
			return
		}
		http.ServeContent(w, r, "p.zip", time.Unix(0, 0), bytes.NewReader(data))
	}))
	t.Cleanup(srv.Close)
	c := New(Options{CredentialOrigin: srv.URL, Retries: -1})
	ra := NewReaderAt(context.Background(), c, srv.URL+"/p.zip", int64(len(data)), `"v1"`)

	spans := [][2]int64{{0, 10}, {500, 1000}, {1500, 3}, {99_000, 1000}}
	got, err := ra.ReadRanges(context.Background(), spans)
	require.NoError(t, err)
	assert.Equal(t, int64(1), requests.Load())
	for i, s := range spans {
		assert.Equal(t, data[s[0]:s[0]+s[1]], got[i], "span %d", i)
	}

	got, err = ra.ReadRanges(context.Background(), spans[1:2])
	require.NoError(t, err, "one range: a plain 206")
	assert.Equal(t, data[500:1500], got[0])

	ignore = true
	_, err = ra.ReadRanges(context.Background(), spans)
	assert.ErrorIs(t, err, ErrNoMultiRange)

	_, err = ra.ReadRanges(context.Background(), [][2]int64{{10, 5}, {12, 5}})
	assert.Error(t, err, "overlapping")
}
