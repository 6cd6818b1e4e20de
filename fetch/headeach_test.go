package fetch

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each item gets its own answer; a failing one is handed over, not fatal.
func TestHeadEach(t *testing.T) {
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(n))
	}))
	c := newTestClient(t, fastOptions(), srv)
	items := []string{"/1", "/22", "/333", "/missing", "/4444", "/55555"}
	var mu sync.Mutex
	got := map[string]int64{}
	err := HeadEach(testContext(t), c, items, 3, func(p string) string { return srv.URL + p },
		func(p string, m *Meta, err error) error {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				got[p] = -1
				return nil
			}
			got[p] = m.Length
			return nil
		})
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"/1": 1, "/22": 22, "/333": 333, "/missing": -1, "/4444": 4444, "/55555": 55555}, got)
}

// An error from each stops the work and is returned.
func TestHeadEachStops(t *testing.T) {
	srv, rec := newServer(t, serveBytes(`"v"`, testContent(10)))
	c := newTestClient(t, fastOptions(), srv)
	items := make([]int, 1000)
	stop := errors.New("full")
	err := HeadEach(testContext(t), c, items, 2, func(int) string { return srv.URL + "/f" },
		func(int, *Meta, error) error { return fmt.Errorf("catalog: %w", stop) })
	require.ErrorIs(t, err, stop)
	assert.Less(t, rec.count.Load(), int64(10), "the rest were not asked")
}
