package e2e

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/revcache"
	"rsfs/tests/sourcetest"
	"rsfs/tests/squid"
)

// Mounts behind a shared cache (issue 23, docs/caches.md): a real Debian
// squid, started by the test on 127.0.0.1 with the stock refresh rules.
// The Source is reached by a host name that resolves to 127.0.0.1 but is
// not localhost (the machine's host name, or another /etc/hosts name):
// Go's client never proxies a request to localhost or a loopback IP.

// startSharedCache starts squid and a Source behind it, and sets
// HTTP_PROXY for the mounts the test starts.
func startSharedCache(t *testing.T, cfg sourcetest.Config) (*sourcetest.Source, *squid.Proxy) {
	t.Helper()
	needFUSE(t)
	if squid.Binary() == "" {
		t.Skip("needs squid (Debian: apt-get install squid)")
	}
	host, err := squid.LoopbackName()
	if err != nil {
		t.Skipf("needs a host name for 127.0.0.1 other than localhost: %v", err)
	}
	proxy, err := squid.Start(squid.Options{})
	require.NoError(t, err)
	t.Cleanup(proxy.Stop)
	cfg.Host = host
	src := startSource(t, cfg)
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	return src, proxy
}

// readTree reads every file of the mount and checks it against the Source.
func readTree(t *testing.T, src *sourcetest.Source, m *mounted) {
	t.Helper()
	files := walkFiles(t, m.dir)
	for _, r := range src.Resources() {
		p, ok := files[r.URI]
		require.True(t, ok, "%s is in the tree", r.URI)
		got, err := os.ReadFile(p)
		require.NoError(t, err, r.URI)
		want, _ := src.Body(r.URI)
		require.True(t, bytes.Equal(want, got), "%s: the published bytes", r.URI)
	}
}

// A file of one block is a plain GET, which stock squid stores: a second
// mount's reads are answered by the cache, and reach the Source not at all.
func TestSharedCacheServesSmallFilesToTheSecondMount(t *testing.T) {
	const n = 200
	src, proxy := startSharedCache(t, sourcetest.Config{Resources: n, Hashes: []string{"sha-256"}})
	a := mount(t, src.URL(), "--poll-interval", "0")
	readTree(t, src, a)
	first := src.Counters()
	assert.Equal(t, int64(0), first.RangeGets, "no file of one block is asked by Range")
	assert.LessOrEqual(t, first.WholeGets, int64(n), "one plain GET per file")

	b := mount(t, src.URL(), "--poll-interval", "0")
	readTree(t, src, b)
	second := src.Counters()
	assert.LessOrEqual(t, second.ContentGets()-first.ContentGets(), int64(n/50),
		"the second mount's files come from the cache (Source content GETs: %d, then %d)", first.ContentGets(), second.ContentGets())
	a.unmount(t)
	b.unmount(t)
	counts, _, err := proxy.Log()
	require.NoError(t, err)
	t.Logf("squid: %v; Source: %+v", counts, second)
	assert.GreaterOrEqual(t, counts["TCP_MEM_HIT"]+counts["TCP_HIT"], n-n/50, "squid answered the second mount")
}

// A change at the Source, through squid: the mount's poll revalidates the
// Change List (the cache's copy is not served stale), the cache's old copy
// of the file disagrees with the catalog (its length, its date, its hash),
// rsfs asks once more with no-cache, and every mount reads the new bytes
// by the second poll after the change, with no EIO on the way.
func TestSharedCacheServesANewVersionAfterAPoll(t *testing.T) {
	src, proxy := startSharedCache(t, sourcetest.Config{Resources: 20, Hashes: []string{"sha-256"}})
	changeThroughCache(t, src)
	counts, _, err := proxy.Log()
	require.NoError(t, err)
	t.Logf("squid: %v", counts)
}

// changeThroughCache is the change scenario of issue 23 behind a shared
// cache: two mounts read the tree; a file changes at the Source (another
// length, then the same length); both mounts read the new bytes by the
// second poll after the change, with no failed read on the way. It unmounts.
func changeThroughCache(t *testing.T, src *sourcetest.Source) {
	t.Helper()
	res := src.Resources()
	// A file of several blocks (read by Range: nginx stores its slices,
	// Varnish the whole object), besides the small ones.
	large := bytes.Repeat([]byte("0123456789abcdef"), (3<<20+1000)/16)
	require.NoError(t, src.Update(res[2].URI, large))
	a := mount(t, src.URL(), pollFlags...)
	b := mount(t, src.URL(), pollFlags...)
	readTree(t, src, a)
	readTree(t, src, b)
	files := walkFiles(t, a.dir)
	filesB := walkFiles(t, b.dir)
	sameLength := func(old []byte) []byte {
		nb := bytes.ToUpper(old)
		for i := 0; i < len(nb); i += 1 << 20 {
			nb[i] ^= 1 // every block differs
		}
		return nb
	}
	for _, tc := range []struct {
		name string
		i    int
		body func(old []byte) []byte
	}{
		{"another length", 0, func(old []byte) []byte { return append(append([]byte(nil), old...), "appended\n"...) }},
		{"the same length", 1, sameLength},
		{"a large file, the same length", 2, sameLength},
		{"a large file, another length", 2, func(old []byte) []byte { return append(append([]byte(nil), old...), "appended\n"...) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uri := res[tc.i].URI
			old, _ := src.Body(uri)
			nb := tc.body(old)
			require.False(t, bytes.Equal(old, nb))
			// Let the cache's copy age a little, as in the field, so that
			// a heuristic would call it fresh.
			time.Sleep(time.Second)
			before := src.Counters()
			require.NoError(t, src.Update(uri, nb))
			start := time.Now()
			var eio int
			// Each mount reads the new bytes by the second poll it ends
			// after the change (becomes): the first one begun after it
			// reads the Change List, past the cache.
			for _, mp := range []struct {
				m *mounted
				p string
			}{{a, files[uri]}, {b, filesB[uri]}} {
				becomes(t, mp.m, "the new bytes", func() bool {
					got, err := os.ReadFile(mp.p)
					if err != nil {
						eio++
						t.Logf("read %s: %v", mp.p, err)
					}
					return err == nil && bytes.Equal(got, nb)
				})
			}
			took := time.Since(start)
			assert.Zero(t, eio, "no read failed on the way")
			t.Logf("the new bytes on both mounts %v after the change (poll interval %v); Source content GETs meanwhile: %d; failed reads: %d",
				took.Round(10*time.Millisecond), pollInterval, src.Counters().ContentGets()-before.ContentGets(), eio)
		})
	}
	a.unmount(t)
	b.unmount(t)
}

// A version that failed through the cache (here: the origin served bad
// bytes, which squid stored) is not failed for the mount's life: once the
// origin is fixed, it reads again after a backoff (5 s), and at once after
// the next poll; the cache's bad copy is replaced by the no-cache request.
func TestSharedCacheAFailedVersionReadsAgainOnceFixed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		wait  time.Duration
	}{
		{"after a backoff", []string{"--poll-interval", "0"}, 5 * time.Second},
		{"after the next poll", []string{"--poll-interval", "2s"}, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, _ := startSharedCache(t, sourcetest.Config{Resources: 4, Hashes: []string{"sha-256"}})
			m := mount(t, src.URL(), tc.flags...)
			files := walkFiles(t, m.dir)
			uri := src.Resources()[0].URI
			good, _ := src.Body(uri)
			src.Corrupt(uri, bytes.Repeat([]byte("x"), len(good)))
			_, err := os.ReadFile(files[uri])
			require.Error(t, err, "bad bytes are not served")
			// That read warmed the other files of its directory: reading
			// them waits for those fetches, so the content GETs counted
			// below are this file's alone.
			for _, r := range src.Resources()[1:] {
				_, err := os.ReadFile(files[r.URI])
				require.NoError(t, err)
			}
			before := src.Counters().ContentGets()
			_, err = os.ReadFile(files[uri])
			require.Error(t, err)
			assert.Equal(t, before, src.Counters().ContentGets(), "within its backoff a bad version is not fetched")
			src.Corrupt(uri, nil)
			fixed := time.Now()
			waitFor(t, tc.wait+3*time.Second+within/2, "the fixed version to read", func() bool {
				got, err := os.ReadFile(files[uri])
				return err == nil && bytes.Equal(got, good)
			})
			t.Logf("read again %v after the fix", time.Since(fixed).Round(10*time.Millisecond))
			m.unmount(t)
		})
	}
}

// Reverse-proxy caches (docs/caches.md): nginx proxy_cache with slice, and
// Varnish, each with the documented configuration, started by the test on
// 127.0.0.1. The Source publishes its URIs under the cache's URL, so every
// request of the mounts (documents, files) goes through it, as a Source's
// host name resolved to the cache does in the field.
var revCaches = []revcache.Kind{revcache.Nginx, revcache.Varnish}

// startRevCache starts a Source and a cache of kind k in front of it.
func startRevCache(t *testing.T, k revcache.Kind, cfg sourcetest.Config) (*sourcetest.Source, *revcache.Cache) {
	t.Helper()
	needFUSE(t)
	if revcache.Binary(k) == "" {
		t.Skipf("needs %s (Debian: apt-get install %s)", k, k)
	}
	port, err := revcache.FreePort()
	require.NoError(t, err)
	cfg.Base = fmt.Sprintf("http://127.0.0.1:%d/", port)
	src := startSource(t, cfg)
	c, err := revcache.Start(k, port, src.Addr())
	require.NoError(t, err)
	t.Cleanup(c.Stop)
	return src, c
}

// A file of one block is a plain GET, which both caches store (nginx as
// its first slice, Varnish whole): a second mount's reads are answered by
// the cache, and reach the Source not at all.
func TestRevCacheServesSmallFilesToTheSecondMount(t *testing.T) {
	const n = 200
	for _, k := range revCaches {
		t.Run(string(k), func(t *testing.T) {
			src, c := startRevCache(t, k, sourcetest.Config{Resources: n, Hashes: []string{"sha-256"}})
			a := mount(t, src.URL(), "--poll-interval", "0")
			readTree(t, src, a)
			first := src.Counters()
			assert.LessOrEqual(t, first.ContentGets(), int64(n), "one GET per file")

			b := mount(t, src.URL(), "--poll-interval", "0")
			readTree(t, src, b)
			second := src.Counters()
			assert.LessOrEqual(t, second.ContentGets()-first.ContentGets(), int64(n/50),
				"the second mount's files come from the cache (Source content GETs: %d, then %d)", first.ContentGets(), second.ContentGets())
			a.unmount(t)
			b.unmount(t)
			stats, err := c.Stats()
			require.NoError(t, err)
			hits, err := c.Hits()
			require.NoError(t, err)
			t.Logf("%s: %v; Source: %+v", k, stats, second)
			assert.GreaterOrEqual(t, hits, n-n/50, "%s answered the second mount", k)
		})
	}
}

// A change at the Source, through nginx or Varnish: documents are asked
// with max-age=0 and go to the origin (proxy_cache_bypass,
// hash_always_miss); the cache's old copy of the file disagrees with the
// catalog and rsfs asks once more with no-cache, which refreshes the
// cache's copy. Both mounts read the new bytes by the second poll after
// the change, with no EIO.
func TestRevCacheServesANewVersionAfterAPoll(t *testing.T) {
	for _, k := range revCaches {
		t.Run(string(k), func(t *testing.T) {
			src, c := startRevCache(t, k, sourcetest.Config{Resources: 20, Hashes: []string{"sha-256"}})
			changeThroughCache(t, src)
			stats, err := c.Stats()
			require.NoError(t, err)
			t.Logf("%s: %v", k, stats)
		})
	}
}
