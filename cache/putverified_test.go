package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/resourcesync"
)

func TestPutVerified(t *testing.T) {
	c := New(Config{MaxBytes: 1 << 20, BlockSize: 4096})
	data := []byte("verified bytes")
	sum := sha256.Sum256(data)
	content := Content{ID: "v1", Name: "http://x/a", Size: int64(len(data)),
		Hashes: []resourcesync.Hash{{Alg: "sha-256", Value: hex.EncodeToString(sum[:])}}}

	require.NoError(t, c.PutVerified(content, data))
	got, ok := c.peek(blockKey{"v1", 0})
	require.True(t, ok)
	assert.Equal(t, data, got)

	bad := content
	bad.ID = "v2"
	assert.ErrorIs(t, c.PutVerified(bad, []byte("verified bytez")), ErrIntegrity, "hash mismatch")
	assert.ErrorIs(t, c.PutVerified(bad, []byte("short")), ErrIntegrity, "length mismatch")
	_, ok = c.peek(blockKey{"v2", 0})
	assert.False(t, ok, "nothing stored for bad bytes")

	big := Content{ID: "v3", Size: 5000}
	assert.Error(t, c.PutVerified(big, make([]byte, 5000)))
}
