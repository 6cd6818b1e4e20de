package e2e

import (
	"crypto/sha256"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// getxattr reads an attribute, asking again after EINTR as package os
// does for its own calls: a lookup that waits on the network (a length
// learned by HEAD) is interrupted by the Go runtime's preemption signal,
// and the file system honours interrupts.
func getxattr(t *testing.T, path, name string) string {
	t.Helper()
	buf := make([]byte, 4096)
	for {
		n, err := syscall.Getxattr(path, name, buf)
		if err == syscall.EINTR {
			continue
		}
		require.NoError(t, err, "getxattr %s %s", path, name)
		return string(buf[:n])
	}
}

// walkFiles returns every regular file below dir by its URI xattr.
func walkFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	byURI := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.Type().IsRegular() {
			uri := getxattr(t, p, "user.resourcesync.uri")
			prev, dup := byURI[uri]
			require.False(t, dup, "URI %s at two paths: %s and %s", uri, prev, p)
			byURI[uri] = p
		}
		return nil
	})
	require.NoError(t, err)
	return byURI
}

// canonical resolves dot segments, as rsfs does when it reads a <loc>.
func canonical(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	return u.ResolveReference(&url.URL{}).String()
}

// checkTree asserts the mount holds exactly the Source's resources, each
// with its bytes, size and mtime.
func checkTree(t *testing.T, src *sourcetest.Source, m *mounted) {
	t.Helper()
	files := walkFiles(t, m.dir)
	want := src.Resources()
	require.Len(t, files, len(want), "one file per resource")
	for _, r := range want {
		p, ok := files[canonical(r.URI)]
		if !assert.True(t, ok, "resource %s has no file", r.URI) {
			continue
		}
		st, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, r.Size, st.Size(), "size of %s", p)
		assert.Equal(t, r.Lastmod.Unix(), st.ModTime().Unix(), "mtime of %s", p)
		assert.Equal(t, os.FileMode(0o444), st.Mode().Perm(), "mode of %s", p)
		got, err := os.ReadFile(p)
		require.NoError(t, err, "read %s", p)
		body, _ := src.Body(r.URI)
		assert.Equal(t, sha256.Sum256(body), sha256.Sum256(got), "bytes of %s (%s)", p, r.URI)
	}
}

func TestTreeLayout11Index(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 3000, PerList: 700, Awkward: true, Mirror: true, Hashes: []string{"md5", "sha-256"}})
	m := mount(t, src.URL(), allowOtherHost(src)...)
	checkTree(t, src, m)

	out, _, err := run(t, time.Minute, "sh", "-c", "find "+m.dir+" -type f | wc -l")
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(src.Len()), strings.TrimSpace(out))

	st, err := os.Stat(m.dir)
	require.NoError(t, err)
	assert.True(t, st.IsDir())
	assert.Equal(t, os.FileMode(0o555), st.Mode().Perm())
}

func TestTreeLayout10Gzip(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 1500, PerList: 500, Layout: sourcetest.Layout10, Gzip: true, Awkward: true})
	m := mount(t, src.URL(), allowOtherHost(src)...)
	checkTree(t, src, m)
}

func TestSeveralResourceSets(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 900, ResourceSets: 3})
	m := mount(t, src.URL())
	checkTree(t, src, m)
}

// TestAwkwardPaths pins the path mapping rules of docs/paths.md.
func TestAwkwardPaths(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 10, Awkward: true})
	m := mount(t, src.URL(), allowOtherHost(src)...)
	files := walkFiles(t, m.dir)
	port := strings.TrimSuffix(strings.TrimPrefix(src.URL(), "http://127.0.0.1:"), "/")
	cases := map[string]string{
		// Rule 6: a 300-byte name is cut to 244 bytes + "~" + 10 hex digits.
		// printf '%s.txt' $(printf 'L%.0s' $(seq 296)) | sha256sum | cut -c1-10
		"long":     "awkward/" + strings.Repeat("L", 244) + "~94d39b4431",
		"space":    "awkward/with space.txt",
		"nonascii": "awkward/café.txt",
		"slash":    "awkward/a%2Fb.txt",
		"query1":   "awkward/q.cgi?id=1&x=2",
		"query2":   "awkward/q.cgi?id=2",
		"trailing": "awkward/dir/_index",
		"both":     "awkward/both/_index",
		"child":    "awkward/both/child.txt",
		"upper":    "awkward/Case.txt",
		"lower":    "awkward/case.txt",
		"dots":     "awkward/dotted.txt",
		"other":    "@localhost:" + port + "/awkward/otherhost.txt",
	}
	paths := map[string]bool{}
	for _, p := range files {
		rel, err := filepath.Rel(m.dir, p)
		require.NoError(t, err)
		paths[rel] = true
	}
	for name, rel := range cases {
		assert.True(t, paths[rel], "%s: no file at %q", name, rel)
	}
	for _, uri := range src.AwkwardURIs() {
		p, ok := files[canonical(uri)]
		require.True(t, ok, "awkward resource %s has a file", uri)
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		body, _ := src.Body(uri)
		assert.Equal(t, body, got, "bytes of %s", uri)
	}
}

func TestXattrs(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 20, Hashes: []string{"md5", "sha-256"}})
	m := mount(t, src.URL())
	files := walkFiles(t, m.dir)
	r := src.Resources()[3]
	p := files[r.URI]
	assert.Equal(t, r.URI, getxattr(t, p, "user.resourcesync.uri"))
	var hashes []string
	for _, h := range r.Hashes {
		hashes = append(hashes, h.String())
	}
	assert.Equal(t, strings.Join(hashes, " "), getxattr(t, p, "user.resourcesync.hash"))
	assert.Equal(t, r.Type, getxattr(t, p, "user.resourcesync.type"))
	assert.Equal(t, r.Lastmod.UTC().Format(time.RFC3339Nano), getxattr(t, p, "user.resourcesync.lastmod"))

	out, stderr, err := run(t, 30*time.Second, "getfattr", "-d", p)
	require.NoError(t, err, stderr)
	for _, name := range []string{"uri", "hash", "type", "lastmod"} {
		assert.Contains(t, out, "user.resourcesync."+name+"=")
	}
	buf := make([]byte, 4096)
	n, err := syscall.Listxattr(p, buf)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"user.resourcesync.uri", "user.resourcesync.hash", "user.resourcesync.type", "user.resourcesync.lastmod"},
		strings.Split(strings.TrimSuffix(string(buf[:n]), "\x00"), "\x00"))
	_, err = syscall.Getxattr(p, "user.nothing", buf)
	assert.ErrorIs(t, err, syscall.ENODATA)
}

func TestLengthLearnedByHead(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 200, OmitLength: true})
	m := mount(t, src.URL())
	checkTree(t, src, m)
	assert.GreaterOrEqual(t, src.Counters().Heads, int64(200))
}

func TestLengthLearnedWithoutHead(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 50, OmitLength: true, NoHEAD: true})
	m := mount(t, src.URL())
	checkTree(t, src, m)
}

func TestServerIgnoringRange(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 30, MinSize: 3 << 20, MaxSize: 5 << 20, IgnoreRange: true})
	m := mount(t, src.URL())
	checkTree(t, src, m)
}

func TestLargeFilesAcrossBlocks(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 6, MinSize: 1, MaxSize: 9 << 20, Hashes: []string{"sha-256"}})
	m := mount(t, src.URL())
	checkTree(t, src, m)
	// Random access: a slice from the middle of the largest file.
	var big sourcetest.Resource
	for _, r := range src.Resources() {
		if r.Size > big.Size {
			big = r
		}
	}
	files := walkFiles(t, m.dir)
	f, err := os.Open(files[big.URI])
	require.NoError(t, err)
	defer f.Close()
	buf := make([]byte, 10000)
	off := big.Size / 2
	n, err := f.ReadAt(buf, off)
	require.NoError(t, err)
	body, _ := src.Body(big.URI)
	assert.Equal(t, body[off:off+int64(n)], buf[:n])
}

func TestOtherHostNeedsAllowHost(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 5, Awkward: true})
	m := mount(t, src.URL())
	files := walkFiles(t, m.dir)
	var other string
	for uri, p := range files {
		if strings.Contains(uri, "//localhost:") {
			other = p
		}
	}
	require.NotEmpty(t, other, "the resource on another origin is in the tree")
	_, err := os.ReadFile(other)
	assert.ErrorIs(t, err, syscall.EIO)
	log, _ := os.ReadFile(m.logFile)
	assert.Contains(t, string(log), "--allow-host")
	assert.Contains(t, string(log), "host not allowed")
}
