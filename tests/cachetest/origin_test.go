package cachetest

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each range is served from the body set for its URI and counted as a
// request of that URI; a URI not served and an offset past the end are
// errors, and count too.
func TestOriginServesAndCounts(t *testing.T) {
	o := NewOrigin(map[string][]byte{"http://h/a": []byte("hello world")})
	o.Set("http://h/b", []byte("b"))
	read := func(uri string, off, n int64) (string, error) {
		rc, toEnd, err := o.Of(uri).OpenRange(context.Background(), off, n)
		if err != nil {
			return "", err
		}
		defer rc.Close()
		assert.False(t, toEnd)
		b, err := io.ReadAll(rc)
		return string(b), err
	}
	got, err := read("http://h/a", 6, 100)
	require.NoError(t, err)
	assert.Equal(t, "world", got)
	got, err = read("http://h/a", 0, 5)
	require.NoError(t, err)
	assert.Equal(t, "hello", got)
	got, err = read("http://h/b", 0, 5)
	require.NoError(t, err)
	assert.Equal(t, "b", got)
	_, err = read("http://h/a", 12, 1)
	assert.ErrorContains(t, err, "http://h/a: no bytes at 12")
	_, err = read("http://h/c", 0, 1)
	assert.Error(t, err)

	assert.Equal(t, 3, o.Count("http://h/a"))
	assert.Equal(t, 0, o.Count("http://h/none"))
	assert.Equal(t, map[string]int{"http://h/a": 3, "http://h/b": 1, "http://h/c": 1}, o.Requests())
	assert.Equal(t, "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9", SHA256Hex([]byte("hello world")))
}
