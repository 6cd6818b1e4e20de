package cache

import (
	"context"
	"io"
	"testing"
)

// BenchmarkReReadVerified reads a streamed 64 MiB content with a published
// sha-256 whole, again and again, each time through a new File (as each
// open of it is), from the memory cache: after the first read that
// verified it, what a re-read costs (issue 42: a chain, chain.go, spares
// the re-reads the hash).
func BenchmarkReReadVerified(b *testing.B) {
	const size = 64 << 20
	data := randomBytes(size, 45)
	content := Content{ID: "v1", Name: "u", Size: size, Hashes: sha256Of(data)}
	fetcher := &memOrigin{data: data}
	c := New(Config{BlockSize: 1 << 20, MaxBytes: 2 * size, VerifyWholeBelow: -1})
	buf := make([]byte, 128<<10)
	readWhole := func() {
		f := c.Open(content, fetcher)
		defer f.Close()
		var total int64
		for off := int64(0); ; off += int64(len(buf)) {
			n, err := f.ReadAt(context.Background(), buf, off)
			total += int64(n)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if total != size {
			b.Fatalf("read %d bytes", total)
		}
	}
	readWhole() // fetches and verifies
	b.SetBytes(size)
	for b.Loop() {
		readWhole()
	}
}
