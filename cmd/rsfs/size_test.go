package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "4096": 4096, "1K": 1 << 10, "256MiB": 256 << 20, "256M": 256 << 20,
		"10GiB": 10 << 30, "2g": 2 << 30, "1TB": 1 << 40, " 64 KiB ": 64 << 10,
	} {
		got, err := parseSize(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "MiB", "-1", "1.5G", "lots", "99999999999T", "9223372036854775808"} {
		_, err := parseSize(bad)
		assert.Error(t, err, bad)
	}
}
