package zipindex

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"rsfs/fetch"
)

// packageServer serves one package at /p.zip with an ETag, counting requests.
type packageServer struct {
	srv      *httptest.Server
	mu       sync.Mutex
	data     []byte
	etag     string
	requests atomic.Int64
	sent     atomic.Int64 // body bytes written
	noMulti  atomic.Bool  // answer a request for several ranges whole (200)
}

// countingWriter counts the body bytes written to a response.
type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n.Add(int64(n))
	return n, err
}

func newPackageServer(t testing.TB, data []byte) *packageServer {
	ps := &packageServer{data: data, etag: `"v1"`}
	ps.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.requests.Add(1)
		ps.mu.Lock()
		data, etag := ps.data, ps.etag
		ps.mu.Unlock()
		w.Header().Set("ETag", etag)
		if ps.noMulti.Load() && strings.Contains(r.Header.Get("Range"), ",") {
			r.Header.Del("Range")
		}
		http.ServeContent(countingWriter{w, &ps.sent}, r, "p.zip", time.Unix(0, 0), bytes.NewReader(data))
	}))
	t.Cleanup(ps.srv.Close)
	return ps
}

func (ps *packageServer) url() string { return ps.srv.URL + "/p.zip" }

// replace swaps the package for another version with a new ETag.
func (ps *packageServer) replace(data []byte, etag string) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.data, ps.etag = data, etag
}

// open opens the served package over fetch.ReaderAt.
func (ps *packageServer) open(t testing.TB, opts Options) (*Package, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	c := fetch.New(fetch.Options{CredentialOrigin: ps.srv.URL, Retries: -1, Timeout: 10 * time.Second})
	ps.mu.Lock()
	size, etag := int64(len(ps.data)), ps.etag
	ps.mu.Unlock()
	r := fetch.NewReaderAt(ctx, c, ps.url(), size, etag)
	return Open(ctx, r, size, ps.url(), opts)
}

// readMember reads [off, off+n) of the named member.
func readMember(t testing.TB, p *Package, name string, off, n int64) ([]byte, error) {
	m, ok := p.Lookup(name)
	require.True(t, ok, "member %s", name)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rc, err := p.Reader(ctx, m, off, n)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// textLike returns n compressible but not trivial bytes (about 3:1 deflate).
func textLike(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 2))
	words := []string{"resource", "sync", "dump", "manifest", "zip", "deflate", "block", "window", "the", "of", "and", "capability", "list"}
	b := make([]byte, 0, n+32)
	for len(b) < n {
		b = append(b, words[rng.IntN(len(words))]...)
		b = append(b, byte('a'+rng.IntN(26)), byte('0'+rng.IntN(10)), ' ')
		if rng.IntN(12) == 0 {
			b = append(b, '\n')
		}
	}
	return b[:n]
}

// entry describes a member to write.
type entry struct {
	name   string
	data   []byte
	method uint16
	raw    bool // written with sizes in the local header (no data descriptor)
}

// buildZip writes a package with archive/zip; zstd registered as method 93.
func buildZip(t testing.TB, entries []entry) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	w.RegisterCompressor(MethodZstd, func(out io.Writer) (io.WriteCloser, error) {
		return zstd.NewWriter(out, zstd.WithEncoderConcurrency(1))
	})
	mod := time.Date(2024, 3, 4, 5, 6, 8, 0, time.UTC)
	for _, e := range entries {
		if e.raw {
			writeRaw(t, w, e, mod)
			continue
		}
		fw, err := w.CreateHeader(&zip.FileHeader{Name: e.name, Method: e.method, Modified: mod})
		require.NoError(t, err)
		_, err = fw.Write(e.data)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// writeRaw writes e with CRC and sizes in its local header.
func writeRaw(t testing.TB, w *zip.Writer, e entry, mod time.Time) {
	comp := e.data
	if e.method == MethodDeflate {
		var cb bytes.Buffer
		fw, err := flate.NewWriter(&cb, flate.DefaultCompression)
		require.NoError(t, err)
		_, _ = fw.Write(e.data)
		require.NoError(t, fw.Close())
		comp = cb.Bytes()
	}
	fh := &zip.FileHeader{Name: e.name, Method: e.method, Modified: mod, CRC32: crc32.ChecksumIEEE(e.data),
		CompressedSize64: uint64(len(comp)), UncompressedSize64: uint64(len(e.data))}
	fw, err := w.CreateRaw(fh)
	require.NoError(t, err)
	_, err = fw.Write(comp)
	require.NoError(t, err)
}

// centralEntry returns the offset of name's central directory header.
func centralEntry(t testing.TB, data []byte, name string) int {
	for i := len(data) - 46; i >= 0; i-- {
		if binary.LittleEndian.Uint32(data[i:]) != 0x02014b50 {
			continue
		}
		n := int(binary.LittleEndian.Uint16(data[i+28:]))
		if i+46+n <= len(data) && string(data[i+46:i+46+n]) == name {
			return i
		}
	}
	t.Fatalf("no central entry for %s", name)
	return -1
}

// localEntry returns the offset of name's local header.
func localEntry(t testing.TB, data []byte, name string) int {
	c := centralEntry(t, data, name)
	return int(binary.LittleEndian.Uint32(data[c+42:]))
}

func put16(b []byte, v uint16) { binary.LittleEndian.PutUint16(b, v) }
func put32(b []byte, v uint32) { binary.LittleEndian.PutUint32(b, v) }

func clone(b []byte) []byte { return append([]byte(nil), b...) }

func memberName(i int) string { return fmt.Sprintf("resources/r%06d", i) }
