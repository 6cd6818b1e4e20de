package e2e

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// A Resource List without lengths (Hyrax, WEKO, many small sites) costs
// the Source no request per resource before the mount is ready: every
// resource is in the tree, a listing asks nothing, and a file's length is
// learned when a process looks it up, once (here only then:
// --learn-lengths=false).
func TestNoLengthsNoRequestBeforeReady(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 200, OmitLength: true})
	m := mount(t, src.URL(), "--learn-lengths=false")
	c := src.Counters()
	assert.Zero(t, c.Heads, "HEADs before the mount was ready")
	assert.Zero(t, c.ContentGets(), "content GETs before the mount was ready")

	names := 0
	require.NoError(t, filepath.WalkDir(m.dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.Type().IsRegular() {
			names++
		}
		return nil
	}))
	assert.Equal(t, 200, names, "every resource is in the tree")
	c = src.Counters()
	assert.Zero(t, c.Heads+c.ContentGets(), "a listing asks nothing of the resources")

	r := src.Resources()[7]
	st, err := os.Stat(m.path(pathOf(src, r.URI)))
	require.NoError(t, err)
	assert.Equal(t, r.Size, st.Size(), "stat learns the length")
	assert.Equal(t, int64(1), src.Counters().Heads)
	_, err = os.Stat(m.path(pathOf(src, r.URI)))
	require.NoError(t, err)
	assert.Equal(t, int64(1), src.Counters().Heads, "a learned length is kept")

	checkTree(t, src, m) // every size and every byte
	assert.Equal(t, int64(200), src.Counters().Heads, "one HEAD per file, when it is looked up")
}

// A HEAD that fails (here refused with 403) fails that stat, and nothing
// else: the file stays in the tree, and the next stat asks again.
func TestAFailedHeadKeepsTheFile(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 20, OmitLength: true})
	r := src.Resources()[3]
	src.FailPrimary(r.URI, 403)
	m := mount(t, src.URL(), "--learn-lengths=false")
	p := m.path(pathOf(src, r.URI))
	_, err := os.Stat(p)
	assert.True(t, errors.Is(err, syscall.EIO), "stat while the Source refuses: %v", err)
	entries, err := os.ReadDir(filepath.Dir(p))
	require.NoError(t, err)
	var listed bool
	for _, e := range entries {
		listed = listed || e.Name() == filepath.Base(p)
	}
	assert.True(t, listed, "the file is still in the tree")
	src.FailPrimary(r.URI, 0)
	st, err := os.Stat(p)
	require.NoError(t, err, "the next stat asks again")
	assert.Equal(t, r.Size, st.Size())
	body, err := os.ReadFile(p)
	require.NoError(t, err)
	want, _ := src.Body(r.URI)
	assert.Equal(t, want, body)
}

// By default the lengths are learned in the background once the mount is
// ready, each once: a tree walk then stats every file with no request.
func TestLengthsLearnedInTheBackground(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 300, OmitLength: true})
	m := mount(t, src.URL())
	eventually(t, "every length learned in the background", func() bool {
		log, _ := os.ReadFile(m.logFile)
		return strings.Contains(string(log), "learned in the background the lengths the lists did not give")
	})
	heads := src.Counters().Heads
	assert.Equal(t, int64(300), heads, "one HEAD per file")
	for _, r := range src.Resources() {
		st, err := os.Stat(m.path(pathOf(src, r.URI)))
		require.NoError(t, err)
		assert.Equal(t, r.Size, st.Size(), r.URI)
	}
	assert.Equal(t, heads, src.Counters().Heads, "a stat after the background learned asks nothing")
	checkTree(t, src, m)
}
