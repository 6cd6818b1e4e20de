package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// TestSequentialReadStreams: `cat` of a 64 MiB file never read before is
// served by a stream, not one request per 1 MiB block (issue 14), and every
// byte is the published one.
func TestSequentialReadStreams(t *testing.T) {
	const size = 64 << 20
	src := startSource(t, sourcetest.Config{Resources: 1, MinSize: size, MaxSize: size, Hashes: []string{"sha-256"}})
	m := mount(t, src.URL(), "--cache-dir", "none", "--poll-interval", "0")
	files := walkFiles(t, m.dir)
	require.Len(t, files, 1)
	r := src.Resources()[0]
	src.ResetCounters()

	h := sha256.New()
	cmd := exec.Command("cat", files[canonical(r.URI)])
	cmd.Stdout = h
	require.NoError(t, cmd.Run())

	assert.Equal(t, r.Hashes[0].Value, hex.EncodeToString(h.Sum(nil)), "the published bytes")
	c := src.Counters()
	assert.LessOrEqual(t, c.ContentGets(), int64(3), "content requests for 64 blocks: %+v", c)
	assert.Positive(t, c.ContentGets())
	t.Logf("content requests: %d", c.ContentGets())
}
