package resourcesync

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSWARNeverMissesASpecialByte checks the word tests against the byte
// tables: a word they call plain holds no byte the table marks.
func TestSWARNeverMissesASpecialByte(t *testing.T) {
	checks := []struct {
		name  string
		plain func(uint64) bool
		table func(byte) bool
	}{
		{"text", plainTextWord, func(c byte) bool { return charDataSpecial[c] }},
		{"attr", plainAttrWord, func(c byte) bool { return !plainAttrByte[c] }},
		{"tag", plainTagWord, func(c byte) bool { return tagSpecial[c] }},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, check := range checks {
		plainSeen := 0
		for c := range 256 {
			for pos := range 8 {
				var b [8]byte
				for k := range b {
					b[k] = 'a' + byte(rng.IntN(26))
				}
				b[pos] = byte(c)
				if check.table(byte(c)) {
					require.False(t, check.plain(binary.LittleEndian.Uint64(b[:])), "%s: byte %#x at %d", check.name, c, pos)
				}
			}
		}
		for range 200_000 {
			var b [8]byte
			for k := range b {
				b[k] = byte(rng.IntN(256))
				if rng.IntN(2) == 0 {
					b[k] = byte(0x20 + rng.IntN(0x60))
				}
			}
			if !check.plain(binary.LittleEndian.Uint64(b[:])) {
				continue
			}
			plainSeen++
			for _, c := range b {
				require.False(t, check.table(c), "%s: %q called plain", check.name, b)
			}
		}
		require.Positive(t, plainSeen, check.name)
	}
}

// TestStopIndexes checks textStop and attrStop: every byte before the index
// is plain, and a special byte is never passed.
func TestStopIndexes(t *testing.T) {
	textSpecialByte := func(c byte) bool { return charDataSpecial[c] || c == '\t' || c == '\n' }
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300_000 {
		var b [8]byte
		for k := range b {
			b[k] = 'a' + byte(rng.IntN(26))
			if rng.IntN(6) == 0 {
				b[k] = byte(rng.IntN(256))
			}
		}
		w := binary.LittleEndian.Uint64(b[:])
		wantText, wantAttr := 8, 8
		for k := 7; k >= 0; k-- {
			if textSpecialByte(b[k]) {
				wantText = k
			}
			if !plainAttrByte[b[k]] || b[k] == '"' {
				wantAttr = k
			}
		}
		require.Equal(t, wantText, textStop(w), "text %q", b)
		require.Equal(t, wantAttr, attrStop(w, '"'), "attr %q", b)
	}
}
