package notify

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartDefaultsAndOptionErrors(t *testing.T) {
	s, err := Start(Options{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	defer s.Close(context.Background())
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+$`, s.URL())
	assert.Equal(t, DefaultLease, s.opts.Lease)
	assert.Len(t, s.opts.Secret, 48, "random 24-byte secret in hex")
	assert.Equal(t, int64(DefaultMaxPayload), s.opts.MaxPayload)
	assert.Equal(t, DefaultBuffer, cap(s.Notifications()))

	p, err := Start(Options{Addr: "127.0.0.1:0", PublicURL: "https://rsfs.example.net/hooks/"})
	require.NoError(t, err)
	defer p.Close(context.Background())
	assert.Equal(t, "https://rsfs.example.net/hooks", p.URL())

	_, err = Start(Options{Addr: "127.0.0.1:0", Lease: 500 * time.Millisecond})
	assert.ErrorContains(t, err, "shorter than one second")
	_, err = Start(Options{Addr: "127.0.0.1:0", Secret: strings.Repeat("k", 200)})
	assert.ErrorContains(t, err, "fewer than 200")
}

func TestSignAndCheckSignature(t *testing.T) {
	body := []byte("payload")
	sig, err := Sign("sha256", "key", body)
	require.NoError(t, err)
	// HMAC-SHA256("key", "payload"), computed independently with openssl.
	assert.Equal(t, "sha256=5d98b45c90a207fa998ce639fea6f02ecc8cc3f36fef81d694fb856b4d0a28ca", sig)
	assert.NoError(t, checkSignature(sig, "key", body))
	assert.NoError(t, checkSignature(strings.Replace(sig, "sha256", "SHA256", 1), "key", body))
	assert.ErrorIs(t, checkSignature(sig, "other", body), errBadSignature)
	assert.ErrorContains(t, checkSignature("md5=00", "key", body), "unknown signature method")
	assert.ErrorContains(t, checkSignature("sha256", "key", body), "malformed")
	assert.ErrorContains(t, checkSignature("sha256=zz", "key", body), "malformed")
	assert.ErrorContains(t, checkSignature("", "key", body), "no X-Hub-Signature")
	_, err = Sign("md5", "key", body)
	assert.Error(t, err)
}
