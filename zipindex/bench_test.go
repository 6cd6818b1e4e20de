package zipindex

import (
	"context"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"rsfs/fetch"
)

const benchMemberSize = 256 << 20

var bench256 struct {
	once sync.Once
	body []byte
	zip  []byte
}

// benchPackage is a package with one 256 MiB deflated member of
// compressible but not trivial text, built once.
func benchPackage(b *testing.B) ([]byte, []byte) {
	bench256.once.Do(func() {
		bench256.body, bench256.zip = bigPackage(b, benchMemberSize)
	})
	return bench256.body, bench256.zip
}

func benchRandomReads(b *testing.B, cache *CheckpointCache, firstPass bool) {
	body, data := benchPackage(b)
	ps := newPackageServer(b, data)
	p, err := ps.open(b, Options{Checkpoints: cache})
	require.NoError(b, err)
	defer p.Close()
	if firstPass {
		start := time.Now()
		whole, err := readMember(b, p, "big", 0, benchMemberSize)
		require.NoError(b, err)
		require.Equal(b, len(body), len(whole))
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "firstpass-ms")
		b.ReportMetric(float64(cache.Len()), "checkpoints")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for b.Loop() {
		off := rng.Int64N(benchMemberSize - 4096)
		got, err := readMember(b, p, "big", off, 4096)
		require.NoError(b, err)
		require.Equal(b, body[off:off+4096], got)
	}
}

// BenchmarkRandom4KiBCheckpointed: random 4 KiB reads in a 256 MiB deflated
// member after a first pass has recorded checkpoints.
func BenchmarkRandom4KiBCheckpointed(b *testing.B) {
	benchRandomReads(b, NewCheckpointCache(64<<20), true)
}

// BenchmarkRandom4KiBFromStart: the same reads with no room for checkpoints,
// so every read inflates from the member's start.
func BenchmarkRandom4KiBFromStart(b *testing.B) {
	benchRandomReads(b, NewCheckpointCache(0), false)
}

// BenchmarkOpen50kMembers: open a package of 50,000 members over HTTP and
// read the first member's bytes; reports requests per open.
func BenchmarkOpen50kMembers(b *testing.B) {
	entries := make([]entry, 50_000)
	for i := range entries {
		entries[i] = entry{name: memberName(i), data: textLike(200, uint64(i)), method: MethodDeflate}
	}
	ps := newPackageServer(b, buildZip(b, entries))
	b.ResetTimer()
	before := ps.requests.Load()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		c := fetch.New(fetch.Options{CredentialOrigin: ps.srv.URL, Retries: -1})
		r := fetch.NewReaderAt(ctx, c, ps.url(), int64(len(ps.data)), ps.etag)
		p, err := Open(ctx, r, int64(len(ps.data)), ps.url(), Options{})
		require.NoError(b, err)
		rc, err := p.Reader(ctx, &p.Members[0], 0, p.Members[0].Size)
		require.NoError(b, err)
		_, err = io.Copy(io.Discard, rc)
		require.NoError(b, err)
		rc.Close()
		c.CloseIdleConnections()
		cancel()
	}
	b.ReportMetric(float64(ps.requests.Load()-before)/float64(b.N), "requests/op")
}
