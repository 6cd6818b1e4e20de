package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteReplacesTheFileWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	require.NoError(t, WriteBytes(path, []byte("one")))
	require.NoError(t, WriteBytes(path, []byte("two, longer")))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "two, longer", string(got))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left")
}

func TestAFailedWriteLeavesTheOldFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	require.NoError(t, WriteBytes(path, []byte("old")))
	boom := errors.New("disk full")
	err := Write(path, func(w io.Writer) error {
		_, _ = w.Write([]byte("half of the new"))
		return boom
	})
	require.ErrorIs(t, err, boom)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old", string(got))
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "the temporary file is removed")
}

func TestWriteIntoAMissingDirectoryFails(t *testing.T) {
	err := WriteBytes(filepath.Join(t.TempDir(), "no", "such", "state"), []byte("x"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
