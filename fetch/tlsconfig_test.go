package fetch

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTLSConfigFiles(t *testing.T) {
	cfg, err := TLSConfig("", "", "")
	require.NoError(t, err)
	assert.Nil(t, cfg, "no file: Go's defaults")

	_, err = TLSConfig(filepath.Join(t.TempDir(), "missing.pem"), "", "")
	var te *TLSFileError
	require.True(t, errors.As(err, &te), "%v", err)
	assert.True(t, te.CA)
	assert.ErrorIs(t, err, os.ErrNotExist)

	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o644))
	_, err = TLSConfig(notPEM, "", "")
	assert.ErrorIs(t, err, ErrNoPEM)

	_, err = TLSConfig("", notPEM, notPEM)
	require.True(t, errors.As(err, &te), "%v", err)
	assert.False(t, te.CA, "the client pair's error")

	cfg, err = TLSConfig("", notPEM, "")
	require.NoError(t, err, "a certificate without its key is the caller's to refuse")
	assert.Empty(t, cfg.Certificates)
}
