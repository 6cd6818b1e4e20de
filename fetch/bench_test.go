package fetch

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkRangeRead measures 1 MiB range reads from a local server.
func BenchmarkRangeRead(b *testing.B) {
	data := testContent(8 << 20)
	srv, _ := newServer(b, serveBytes(`"v1"`, data))
	c := New(fastOptions())
	c.AllowOrigin(srv.URL)
	b.Cleanup(c.CloseIdleConnections)
	const chunk = 1 << 20
	b.SetBytes(chunk)
	b.ResetTimer()
	for i := range b.N {
		off := int64(i%8) * chunk
		rb, err := c.Range(b.Context(), srv.URL+"/f", off, chunk, `"v1"`)
		require.NoError(b, err)
		n, err := io.Copy(io.Discard, rb)
		require.NoError(b, err)
		require.Equal(b, int64(chunk), n)
		require.NoError(b, rb.Close())
	}
}

// BenchmarkPacerUnpaced is what the pacer costs a request to an origin
// that never said "slow down": a turn taken and given back.
func BenchmarkPacerUnpaced(b *testing.B) {
	var ps pacers
	ps.limitOf = func(string) int { return DefaultMaxConnsPerHost }
	p := ps.of("http://127.0.0.1:1")
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		t, err := p.acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		t.finish(signalOK, 200, 0)
	}
}
