package copies

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/fetch"
)

// staleCache stands for a shared cache that holds an old version of /a:
// it answers from it unless asked with Cache-Control: no-cache, which
// fetches (and stores) the origin's current one.
type staleCache struct {
	*httptest.Server
	mu              sync.Mutex
	cached, current string
	cachedDate      time.Time
	currentDate     time.Time
	requests        []http.Header
}

func newStaleCache(t *testing.T, cached, current string) *staleCache {
	s := &staleCache{cached: cached, current: current,
		cachedDate: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), currentDate: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Header.Clone())
		if r.Header.Get("Cache-Control") == "no-cache" {
			s.cached, s.cachedDate = s.current, s.currentDate
		}
		body, date := s.cached, s.cachedDate
		s.mu.Unlock()
		w.Header().Set("ETag", `"`+body+`"`)
		http.ServeContent(w, r, "", date, strings.NewReader(body))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *staleCache) sent() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.requests...)
}

func (s *staleCache) client() *fetch.Client {
	c := fetch.New(fetch.Options{Retries: -1, Timeout: 5 * time.Second})
	c.AllowOrigin(s.URL)
	return c
}

// A whole content is a plain GET (which a shared cache stores), with no
// Range and no Cache-Control; a part of one is a Range request.
func TestAWholeContentIsAPlainGet(t *testing.T) {
	s := newStaleCache(t, "hello", "hello")
	r := &catalog.Resource{URI: s.URL + "/a", Length: 5}
	f := NewReader(s.client(), ReaderOptions{}).Open(r)
	got, err := read(t, f, 0, 5)
	require.NoError(t, err)
	assert.Equal(t, "hello", got)
	got, err = read(t, f, 1, 3)
	require.NoError(t, err)
	assert.Equal(t, "ell", got)
	sent := s.sent()
	require.Len(t, sent, 2)
	assert.Empty(t, sent[0].Get("Range"))
	assert.Empty(t, sent[0].Get("Cache-Control"), "a content may be answered by a cache")
	assert.Equal(t, "bytes=1-3", sent[1].Get("Range"))
	assert.Empty(t, sent[1].Get("Cache-Control"))
}

// A cache that answers with the old version's length is asked once more
// with Cache-Control: no-cache and Pragma: no-cache, and the new bytes
// are served; so are the later requests of the open file.
func TestAnOldLengthIsAskedAgainPastTheCache(t *testing.T) {
	for _, whole := range []bool{true, false} {
		s := newStaleCache(t, "old", "newer")
		r := &catalog.Resource{URI: s.URL + "/a", Length: 5}
		var told changedLog
		f := NewReader(s.client(), ReaderOptions{Changed: told.changed}).Open(r)
		off, n := int64(0), int64(5)
		if !whole {
			off, n = 1, 3
		}
		got, err := read(t, f, off, n)
		require.NoError(t, err)
		assert.Equal(t, "newer"[off:off+n], got)
		sent := s.sent()
		require.Len(t, sent, 2)
		assert.Empty(t, sent[0].Get("Cache-Control"))
		assert.Equal(t, "no-cache", sent[1].Get("Cache-Control"))
		assert.Equal(t, "no-cache", sent[1].Get("Pragma"))
		assert.Empty(t, told.told(), "the origin serves the listed version: no early poll")
		_, err = read(t, f, 0, 2)
		require.NoError(t, err)
		assert.Equal(t, "no-cache", s.sent()[2].Get("Cache-Control"), "the open file asks past the caches from then on")
	}
}

// Where the origin too serves another version, the read fails as before
// (the version is gone), after one request past the caches.
func TestAnotherVersionAtTheOriginStillFails(t *testing.T) {
	s := newStaleCache(t, "old", "older")
	r := &catalog.Resource{URI: s.URL + "/a", Length: 4}
	var told changedLog
	f := NewReader(s.client(), ReaderOptions{Changed: told.changed}).Open(r)
	_, err := read(t, f, 0, 4)
	require.ErrorIs(t, err, ErrVersionChanged)
	assert.Len(t, s.sent(), 2)
	assert.Len(t, told.told(), 1)
}

// A Last-Modified older than the listed lastmod (same length) is asked
// again past the caches; where the origin's own answer is older too, its
// dates are not its lastmods and are not compared again.
func TestAnOlderLastModifiedIsAskedAgain(t *testing.T) {
	s := newStaleCache(t, "old!!", "new!!")
	rd := NewReader(s.client(), ReaderOptions{})
	r := &catalog.Resource{URI: s.URL + "/a", Length: 5, Lastmod: s.currentDate}
	got, err := read(t, rd.Open(r), 0, 5)
	require.NoError(t, err)
	assert.Equal(t, "new!!", got)
	assert.Len(t, s.sent(), 2)
	assert.False(t, rd.datesDiffer.Load())

	later := &catalog.Resource{URI: s.URL + "/a", Length: 5, Lastmod: s.currentDate.Add(time.Hour)}
	_, err = read(t, rd.Open(later), 0, 5)
	require.NoError(t, err)
	assert.Len(t, s.sent(), 4, "asked again once")
	assert.True(t, rd.datesDiffer.Load())
	_, err = read(t, rd.Open(later), 0, 5)
	require.NoError(t, err)
	assert.Len(t, s.sent(), 5, "dates no longer compared")
}

// Bytes that fail the hash are asked for once more past the caches
// before the next copy.
func TestAHashMismatchIsAskedAgainPastTheCache(t *testing.T) {
	s := newStaleCache(t, "old!!", "new!!")
	f := NewReader(s.client(), ReaderOptions{}).Open(&catalog.Resource{URI: s.URL + "/a", Length: 5})
	got, err := read(t, f, 0, 5)
	require.NoError(t, err)
	assert.Equal(t, "old!!", got)
	require.True(t, f.SkipCopy())
	got, err = read(t, f, 0, 5)
	require.NoError(t, err)
	assert.Equal(t, "new!!", got)
	assert.Equal(t, "no-cache", s.sent()[1].Get("Cache-Control"))
	assert.False(t, f.SkipCopy(), "asked once: no copy left")
}
