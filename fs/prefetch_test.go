package fs

import (
	"encoding/json"
	"fmt"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/prefetch"
	"rsfs/resourcesync"
	"rsfs/tests/cachetest"
	"rsfs/tests/wait"
)

// FS tells package prefetch of every read of a small file: a reader's
// first read in a directory warms the directory's other small files, in
// the background, before the reader asks for them.
func TestReadingASmallFileWarmsItsDirectory(t *testing.T) {
	cat := catalog.New(catalog.Options{Origin: testOrigin})
	var uris []string
	for i := range 20 {
		uri := fmt.Sprintf("%s/d/f%03d.txt", testOrigin, i)
		uris = append(uris, uri)
		require.NoError(t, cat.Add(&catalog.Resource{URI: uri, Length: int64(len(uri)),
			Hashes: []resourcesync.Hash{{Alg: "sha-256", Value: cachetest.SHA256Hex([]byte(uri))}}}))
	}
	require.NoError(t, cat.Seal())
	tf := newTestFSOver(t, cat)
	for _, uri := range uris {
		tf.origin.Set(uri, []byte(uri))
	}
	got, errno := tf.readAll(t, tf.file(t, "d", "f000.txt"), 4096)
	require.Zero(t, errno)
	assert.Equal(t, uris[0], string(got))
	wait.For(t, "d/f019.txt to be warmed", func() bool { return tf.origin.Count(uris[19]) == 1 })
	got, errno = tf.readAll(t, tf.file(t, "d", "f019.txt"), 4096)
	require.Zero(t, errno)
	assert.Equal(t, uris[19], string(got))
	assert.Equal(t, 1, tf.origin.Count(uris[19]), "read from memory")
}

// The warm xattrs are package prefetch's jobs: a bad job ID is EINVAL, and
// a job on a mount with no disk cache answers why it does nothing.
func TestWarmXattrAsksPrefetch(t *testing.T) {
	tf := newTestFS(t)
	_, _, errno := tf.getxattr(tf.dir(t, "data"), XattrWarmPrefix, 4096)
	assert.Equal(t, syscall.EINVAL, errno)
	v, _, errno := tf.getxattr(tf.dir(t, "data"), XattrWarmPrefix+"job1", 4096)
	require.Zero(t, errno)
	var j prefetch.Job
	require.NoError(t, json.Unmarshal([]byte(v), &j))
	assert.Equal(t, prefetch.Job{ID: "job1", Path: "data", Files: 3, Bytes: int64(len(aBody) + len(badBody) + len(cBody)),
		Error: cache.ErrNoDisk.Error(), Finished: true, Failed: []prefetch.Failure{}, Started: j.Started}, j)
	v, _, errno = tf.getxattr(tf.dir(t, "data"), XattrRelease, 4096)
	require.Zero(t, errno)
	assert.JSONEq(t, `{"path":"data","files":0,"bytes":0}`, v)
}
