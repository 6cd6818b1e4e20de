package report

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "4096": 4096, "1K": 1 << 10, "256MiB": 256 << 20, "256M": 256 << 20,
		"10GiB": 10 << 30, "2g": 2 << 30, "1TB": 1 << 40, " 64 KiB ": 64 << 10,
	} {
		got, err := ParseSize(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "MiB", "-1", "1.5G", "lots", "99999999999T", "9223372036854775808"} {
		_, err := ParseSize(bad)
		assert.Error(t, err, bad)
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "12h": 12 * time.Hour, "1.5d": 36 * time.Hour} {
		got, err := ParseAge(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "x", "-1d", "3y"} {
		_, err := ParseAge(bad)
		assert.Error(t, err, bad)
	}
}
