package copies

import (
	"bytes"
	"context"
	"errors"
	"io"
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
	"rsfs/resourcesync"
)

// server serves bodies by path with Range and If-Range (http.ServeContent,
// with an ETag per body), or a status, and counts requests per path.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	bodies map[string]string
	status map[string]int
	hits   map[string]int
}

func newServer(t *testing.T) *server {
	s := &server{bodies: map[string]string{}, status: map[string]int{}, hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		body, ok := s.bodies[r.URL.Path]
		code := s.status[r.URL.Path]
		s.mu.Unlock()
		if code != 0 || !ok {
			http.Error(w, "no", max(code, http.StatusNotFound))
			return
		}
		w.Header().Set("ETag", `"`+body+`"`)
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(body))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) set(path, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bodies[path] = body
	delete(s.status, path)
}

func (s *server) fail(path string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status[path] = code
}

func (s *server) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func (s *server) client() *fetch.Client {
	c := fetch.New(fetch.Options{Retries: -1, Timeout: 5 * time.Second})
	c.AllowOrigin(s.URL)
	return c
}

// members are dump members from memory, by package!path, counted.
type members struct {
	mu     sync.Mutex
	bodies map[string]string
	opened []string
}

func (m *members) OpenMember(_ context.Context, l *resourcesync.Link, off, n int64) (io.ReadCloser, error) {
	key := l.Href + "!" + l.Path
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opened = append(m.opened, key)
	body, ok := m.bodies[key]
	if !ok {
		return nil, errors.New("no such member")
	}
	return io.NopCloser(strings.NewReader(body[off : off+n])), nil
}

func read(t *testing.T, f *Fetcher, off, n int64) (string, error) {
	t.Helper()
	rc, _, err := f.OpenRange(t.Context(), off, n)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	var b bytes.Buffer
	_, err = io.CopyN(&b, rc, n)
	return b.String(), err
}

func dumpLink(pkg, path string, pri int) resourcesync.Link {
	return resourcesync.Link{Rel: DumpRel, Href: pkg, Path: path, Pri: pri, Length: resourcesync.NoLength}
}

func TestCopiesAreTriedInTheirOrder(t *testing.T) {
	r := &catalog.Resource{URI: "http://s/a", Length: 5, Links: []resourcesync.Link{
		dumpLink("late.zip", "a", 0),
		{Rel: "duplicate", Href: "http://m2/a", Pri: 2},
		{Rel: "duplicate", Href: "http://m1/a", Pri: 1},
		{Rel: "duplicate", Href: "http://m9/a"}, // no pri: after those with one
		dumpLink("first.zip", "a", 1),
		{Rel: "describedby", Href: "http://s/a.meta"},
	}}
	var got []string
	for _, c := range candidates(r, true) {
		got = append(got, c.String())
	}
	assert.Equal(t, []string{"first.zip!a", "http://s/a", "http://m1/a", "http://m2/a", "http://m9/a", "late.zip!a"}, got,
		"a pri=1 dump copy, the URI, the mirrors by pri, the other dump copies; other relations are no copies")
	got = nil
	for _, c := range candidates(r, false) {
		got = append(got, c.String())
	}
	assert.Equal(t, []string{"http://s/a", "http://m1/a", "http://m2/a", "http://m9/a"}, got, "without Members, no dump copy")
}

func TestAFailingCopyPassesToTheNext(t *testing.T) {
	src, mirror := newServer(t), newServer(t)
	src.fail("/a", http.StatusServiceUnavailable)
	mirror.set("/a", "hello")
	c := src.client()
	c.AllowOrigin(mirror.URL)
	r := &catalog.Resource{URI: src.URL + "/a", Length: 5, Links: []resourcesync.Link{{Rel: "duplicate", Href: mirror.URL + "/a"}}}
	f := NewReader(c, ReaderOptions{}).Open(r)
	got, err := read(t, f, 1, 3)
	require.NoError(t, err)
	assert.Equal(t, "ell", got)
	assert.Equal(t, 1, src.count("/a"))
	assert.Equal(t, 1, mirror.count("/a"))

	mirror.fail("/a", http.StatusNotFound)
	_, err = read(t, f, 0, 5)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "every copy failed")
}

func TestADumpCopyIsReadThroughMembers(t *testing.T) {
	src := newServer(t)
	m := &members{bodies: map[string]string{"p.zip!a": "from the dump"}}
	r := &catalog.Resource{URI: src.URL + "/a", Length: 13, Links: []resourcesync.Link{dumpLink("p.zip", "a", 1)}}
	got, err := read(t, NewReader(src.client(), ReaderOptions{Members: m}).Open(r), 5, 3)
	require.NoError(t, err)
	assert.Equal(t, "the", got)
	assert.Equal(t, []string{"p.zip!a"}, m.opened)
	assert.Equal(t, 0, src.count("/a"), "the URI is not asked while the dump serves")
}

func TestURIOnlyReadsNoMirrorAndNoDump(t *testing.T) {
	src, mirror := newServer(t), newServer(t)
	src.fail("/a", http.StatusServiceUnavailable)
	mirror.set("/a", "hello")
	m := &members{bodies: map[string]string{"p.zip!a": "hello"}}
	c := src.client()
	c.AllowOrigin(mirror.URL)
	r := &catalog.Resource{URI: src.URL + "/a", Length: 5, Links: []resourcesync.Link{
		{Rel: "duplicate", Href: mirror.URL + "/a"}, dumpLink("p.zip", "a", 1)}}
	_, err := read(t, NewReader(c, ReaderOptions{Members: m, URIOnly: true}).Open(r), 0, 5)
	require.Error(t, err)
	assert.Equal(t, 0, mirror.count("/a"))
	assert.Empty(t, m.opened)
}

// A copy whose length is not the listed one serves another version: the
// read fails with ErrVersionChanged, marked gone for the open file, and
// the Reader's Changed hears of the resource.
func TestAnotherLengthIsAnotherVersion(t *testing.T) {
	src := newServer(t)
	src.set("/a", "longer than listed")
	var changed []*catalog.Resource
	r := &catalog.Resource{URI: src.URL + "/a", Length: 5, Set: 2}
	f := NewReader(src.client(), ReaderOptions{Changed: func(r *catalog.Resource) { changed = append(changed, r) }}).Open(r)
	_, err := read(t, f, 0, 5)
	require.ErrorIs(t, err, ErrVersionChanged)
	var gone interface{ VersionGone() bool }
	require.ErrorAs(t, err, &gone)
	assert.True(t, gone.VersionGone())
	require.Len(t, changed, 1)
	assert.Equal(t, uint16(2), changed[0].Set, "the early poll asks for the resource's set")
}

// An open file keeps the version it was first answered with: once the
// resource changes (another ETag), a later range fails instead of mixing
// versions.
func TestAChangeWhileOpenFailsInsteadOfMixingVersions(t *testing.T) {
	src := newServer(t)
	src.set("/a", "hello")
	r := &catalog.Resource{URI: src.URL + "/a", Length: 5}
	f := NewReader(src.client(), ReaderOptions{}).Open(r)
	got, err := read(t, f, 0, 2)
	require.NoError(t, err)
	assert.Equal(t, "he", got)
	src.set("/a", "HELLO")
	_, err = read(t, f, 2, 3)
	require.ErrorIs(t, err, ErrVersionChanged)
	fresh := NewReader(src.client(), ReaderOptions{}).Open(r)
	got, err = read(t, fresh, 2, 3)
	require.NoError(t, err)
	assert.Equal(t, "LLO", got, "a file opened after the change reads the new bytes")
}

func TestSkipCopyMovesOnAndNeverBack(t *testing.T) {
	src, mirror := newServer(t), newServer(t)
	src.set("/a", "bad!!")
	mirror.set("/a", "good!")
	c := src.client()
	c.AllowOrigin(mirror.URL)
	r := &catalog.Resource{URI: src.URL + "/a", Length: 5, Links: []resourcesync.Link{{Rel: "duplicate", Href: mirror.URL + "/a"}}}
	f := NewReader(c, ReaderOptions{}).Open(r)
	got, err := read(t, f, 0, 5)
	require.NoError(t, err)
	assert.Equal(t, "bad!!", got)
	require.True(t, f.SkipCopy(), "the bytes failed their check: the mirror is next")
	got, err = read(t, f, 0, 5)
	require.NoError(t, err)
	assert.Equal(t, "good!", got)
	assert.False(t, f.SkipCopy(), "no copy after the last")
	got, err = read(t, f, 0, 5)
	require.NoError(t, err)
	assert.Equal(t, "good!", got, "never back to a skipped copy")
}
