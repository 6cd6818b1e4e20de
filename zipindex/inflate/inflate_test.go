package inflate

import (
	"bufio"
	"bytes"
	"compress/flate"
	"io"
	"math/rand/v2"
	"testing"

	kflate "github.com/klauspost/compress/flate"
	"github.com/stretchr/testify/require"
)

// textLike returns n compressible but not trivial bytes.
func textLike(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	words := []string{"resource", "sync", "dump", "manifest", "zip", "deflate", "block", "window", "the", "of", "and"}
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(byte('a' + rng.IntN(26)))
		b.WriteByte(' ')
	}
	return b.Bytes()[:n]
}

func deflate(t *testing.T, data []byte, level int) []byte {
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, level)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

type saved struct {
	in, out int64
	window  []byte
}

func TestResumeAtEveryBoundary(t *testing.T) {
	data := textLike(3<<20, 7)
	for _, level := range []int{flate.NoCompression, flate.BestSpeed, flate.DefaultCompression, flate.HuffmanOnly} {
		comp := deflate(t, data, level)
		var points []saved
		d := NewDecoder(bytes.NewReader(comp), Options{OnBlock: func(b Boundary) {
			points = append(points, saved{b.InBits, b.Out, b.Window(nil)})
		}})
		got, err := io.ReadAll(d)
		require.NoError(t, err)
		require.Equal(t, data, got)
		require.Greater(t, len(points), 2, "level %d", level)
		require.Equal(t, int64(0), points[0].out)
		for _, p := range points[1:] {
			r := bufio.NewReader(bytes.NewReader(comp[p.in/8:]))
			rd := NewResumed(r, p.in, p.out, p.window, Options{})
			rest, err := io.ReadAll(rd)
			require.NoError(t, err, "level %d resume at bit %d", level, p.in)
			require.Equal(t, data[p.out:], rest, "level %d resume at bit %d out %d", level, p.in, p.out)
		}
	}
}

// TestResumeKlauspostStream: klauspost/compress continues blocks across
// writes, so its boundaries are sparse, but resuming at them must work.
func TestResumeKlauspostStream(t *testing.T) {
	data := textLike(2<<20, 9)
	var buf bytes.Buffer
	w, err := kflate.NewWriter(&buf, 5)
	require.NoError(t, err)
	for i := 0; i < len(data); i += 100_000 {
		_, err = w.Write(data[i:min(i+100_000, len(data))])
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	var points []saved
	got, err := io.ReadAll(NewDecoder(bytes.NewReader(buf.Bytes()), Options{OnBlock: func(b Boundary) {
		points = append(points, saved{b.InBits, b.Out, b.Window(nil)})
	}}))
	require.NoError(t, err)
	require.Equal(t, data, got)
	for _, p := range points {
		rest, err := io.ReadAll(NewResumed(bytes.NewReader(buf.Bytes()[p.in/8:]), p.in, p.out, p.window, Options{}))
		require.NoError(t, err)
		require.Equal(t, data[p.out:], rest)
	}
}

func TestCorruptInputFails(t *testing.T) {
	comp := deflate(t, textLike(1<<16, 3), flate.BestSpeed)
	_, err := io.ReadAll(NewDecoder(bytes.NewReader(comp[:len(comp)/2]), Options{}))
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
}
