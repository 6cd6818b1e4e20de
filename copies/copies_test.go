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
	// As a package does, a range past the member's end is cut at it.
	return io.NopCloser(strings.NewReader(body[min(off, int64(len(body))):min(off+n, int64(len(body)))])), nil
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

// A listed resource that answers 404 was most likely deleted since: the
// read fails, and the Reader's Changed hears of it, for an early poll.
func TestAGoneResourceAsksForAnEarlyPoll(t *testing.T) {
	src := newServer(t)
	var changed []*catalog.Resource
	r := &catalog.Resource{URI: src.URL + "/deleted", Length: 5, Set: 3}
	f := NewReader(src.client(), ReaderOptions{Changed: func(r *catalog.Resource) { changed = append(changed, r) }}).Open(r)
	_, err := read(t, f, 0, 5)
	require.Error(t, err)
	require.Len(t, changed, 1)
	assert.Equal(t, uint16(3), changed[0].Set)
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
	require.True(t, f.SkipCopy(), "the bytes failed their check: the URI is asked once more, past any cache")
	got, err = read(t, f, 0, 5)
	require.NoError(t, err)
	assert.Equal(t, "bad!!", got)
	require.True(t, f.SkipCopy(), "the bytes failed their check again: the mirror is next")
	got, err = read(t, f, 0, 5)
	require.NoError(t, err)
	assert.Equal(t, "good!", got)
	assert.False(t, f.SkipCopy(), "no copy after the last")
	got, err = read(t, f, 0, 5)
	require.NoError(t, err)
	assert.Equal(t, "good!", got, "never back to a skipped copy")
}

// changedLog counts what a Reader's Changed is told.
type changedLog struct {
	mu   sync.Mutex
	sets []uint16
}

func (c *changedLog) changed(r *catalog.Resource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sets = append(c.sets, r.Set)
}

func (c *changedLog) told() []uint16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]uint16(nil), c.sets...)
}

// A dump copy that disagrees with the listed version means the Source
// changed: the early poll of the resource's set is asked for (once per open
// file), the copy is not served, and the URI serves the listed version.
func TestADumpCopyOfAnotherVersionAsksForAnEarlyPoll(t *testing.T) {
	for _, tc := range []struct {
		name   string
		member string
		link   func(*resourcesync.Link)
		opened int // times the member is opened over the two reads
	}{
		{"the member's length is not the listed one", "hello", func(l *resourcesync.Link) { l.Length = 7 }, 0},
		{"the manifest's hash is not the listed one", "hello", func(l *resourcesync.Link) {
			l.Hashes = []resourcesync.Hash{{Alg: "md5", Value: "00000000000000000000000000000000"}}
		}, 0},
		{"the member ends short of the listed length", "hell", nil, 1},
		{"the member goes on past the listed length", "hello, world", nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := newServer(t)
			src.set("/a", "hello")
			m := &members{bodies: map[string]string{"p.zip!a": tc.member}}
			l := dumpLink("p.zip", "a", 1)
			if tc.link != nil {
				tc.link(&l)
			}
			r := &catalog.Resource{URI: src.URL + "/a", Length: 5, Set: 3, Links: []resourcesync.Link{l},
				Hashes: []resourcesync.Hash{{Alg: "md5", Value: "5d41402abc4b2a76b9719d911017c592"}}}
			var ch changedLog
			f := NewReader(src.client(), ReaderOptions{Members: m, Changed: ch.changed}).Open(r)
			got, err := read(t, f, 0, 5)
			if tc.opened == 0 {
				// Known from the link: the URI serves this very read.
				require.NoError(t, err)
				assert.Equal(t, "hello", got)
			} else {
				// Found in the bytes: this read fails, the next goes on.
				require.ErrorIs(t, err, ErrVersionChanged)
				got, err = read(t, f, 0, 5)
				require.NoError(t, err)
				assert.Equal(t, "hello", got)
			}
			got, err = read(t, f, 1, 4)
			require.NoError(t, err)
			assert.Equal(t, "ello", got)
			assert.Equal(t, []uint16{3}, ch.told(), "one early poll, of the resource's set")
			assert.Len(t, m.opened, tc.opened, "the member of another version is not tried again")
			assert.Equal(t, 2, src.count("/a"), "the URI serves the listed version")
		})
	}
}

func TestADumpCopyOfTheListedVersionAsksForNothing(t *testing.T) {
	src := newServer(t)
	m := &members{bodies: map[string]string{"p.zip!a": "hello"}}
	l := dumpLink("p.zip", "a", 1)
	l.Length = 5
	l.Hashes = []resourcesync.Hash{{Alg: "md5", Value: "5D41402ABC4B2A76B9719D911017C592"}}
	r := &catalog.Resource{URI: src.URL + "/a", Length: 5, Links: []resourcesync.Link{l},
		Hashes: []resourcesync.Hash{{Alg: "md5", Value: "5d41402abc4b2a76b9719d911017c592"}, {Alg: "sha-256", Value: "x"}}}
	var ch changedLog
	f := NewReader(src.client(), ReaderOptions{Members: m, Changed: ch.changed}).Open(r)
	for _, rg := range [][2]int64{{0, 5}, {3, 2}, {0, 2}} {
		got, err := read(t, f, rg[0], rg[1])
		require.NoError(t, err)
		assert.Equal(t, "hello"[rg[0]:rg[0]+rg[1]], got)
	}
	assert.Empty(t, ch.told())
	assert.Equal(t, 0, src.count("/a"))
}

func TestADumpCopyThatFailsVerificationAsksForAnEarlyPoll(t *testing.T) {
	src := newServer(t)
	src.set("/a", "hello")
	m := &members{bodies: map[string]string{"p.zip!a": "HELLO"}}
	r := &catalog.Resource{URI: src.URL + "/a", Length: 5, Set: 4, Links: []resourcesync.Link{dumpLink("p.zip", "a", 1)}}
	var ch changedLog
	f := NewReader(src.client(), ReaderOptions{Members: m, Changed: ch.changed}).Open(r)
	got, err := read(t, f, 0, 5)
	require.NoError(t, err)
	assert.Equal(t, "HELLO", got)
	require.True(t, f.SkipCopy(), "the cache found the hash wrong")
	assert.Equal(t, []uint16{4}, ch.told())
	got, err = read(t, f, 0, 5)
	require.NoError(t, err)
	assert.Equal(t, "hello", got)
}
