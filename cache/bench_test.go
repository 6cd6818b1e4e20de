package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// httpOrigin reads a URL by Range requests, as the fetch package does.
type httpOrigin struct {
	client *http.Client
	url    string
}

func (o httpOrigin) OpenRange(ctx context.Context, off, n int64) (io.ReadCloser, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.url, nil)
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+n-1))
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, false, err
	}
	switch resp.StatusCode {
	case http.StatusPartialContent:
		return resp.Body, false, nil
	case http.StatusOK:
		if _, err := io.CopyN(io.Discard, resp.Body, off); err != nil {
			resp.Body.Close()
			return nil, false, err
		}
		return resp.Body, true, nil
	}
	resp.Body.Close()
	return nil, false, fmt.Errorf("GET %s: %s", o.url, resp.Status)
}

// benchServer serves content with http.ServeContent on 127.0.0.1.
func benchServer(b *testing.B, content []byte) (*httptest.Server, *http.Client) {
	b.Helper()
	return startBenchServer(b, func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "content", time.Time{}, bytes.NewReader(content))
	})
}

// startBenchServer runs handler on 127.0.0.1 and returns a client that
// keeps enough idle connections for parallel fills.
func startBenchServer(b *testing.B, handler http.HandlerFunc) (*httptest.Server, *http.Client) {
	b.Helper()
	srv := httptest.NewUnstartedServer(handler)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv.Listener = ln
	srv.Start()
	b.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
	b.Cleanup(client.CloseIdleConnections)
	return srv, client
}

const benchSize = 256 << 20

// BenchmarkRead compares reading a 256 MiB content sequentially through a
// File (cold cache each time, default ReadAhead and MaxBytes) with a single
// streamed GET of the whole body.
func BenchmarkRead(b *testing.B) {
	content := randomBytes(benchSize, 42)
	srv, client := benchServer(b, content)

	b.Run("single-stream/sha256=false", func(b *testing.B) { benchStream(b, client, srv.URL, io.Discard) })
	b.Run("single-stream/sha256=true", func(b *testing.B) { benchStream(b, client, srv.URL, sha256.New()) })
	for _, hashed := range []bool{false, true} {
		for _, bs := range []int{256 << 10, 1 << 20, 4 << 20} {
			for _, chunk := range []int{128 << 10, 1 << 20} {
				name := fmt.Sprintf("file/bs=%dK/read=%dK/sha256=%v", bs>>10, chunk>>10, hashed)
				b.Run(name, func(b *testing.B) {
					benchFile(b, client, srv.URL, content, bs, chunk, hashed)
				})
			}
		}
	}
}

// benchStream copies the whole body in one GET, as curl would, into w.
func benchStream(b *testing.B, client *http.Client, url string, w io.Writer) {
	b.SetBytes(benchSize)
	for b.Loop() {
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(w, resp.Body)
		resp.Body.Close()
		if err != nil || n != benchSize {
			b.Fatalf("copied %d bytes: %v", n, err)
		}
	}
}

func benchFile(b *testing.B, client *http.Client, url string, content []byte, bs, chunk int, hashed bool) {
	c := Content{ID: "bench", Name: url, Size: benchSize}
	if hashed {
		c.Hashes = sha256Of(content)
	}
	fetcher := httpOrigin{client: client, url: url}
	buf := make([]byte, chunk)
	ctx := context.Background()
	b.SetBytes(benchSize)
	for b.Loop() {
		cache := New(Config{BlockSize: bs})
		f := cache.Open(c, fetcher)
		var total int64
		for off := int64(0); ; off += int64(chunk) {
			n, err := f.ReadAt(ctx, buf, off)
			total += int64(n)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
		if total != benchSize {
			b.Fatalf("read %d bytes", total)
		}
	}
}

// BenchmarkGetHitParallel measures cache hits under contention, as from many
// FUSE threads.
func BenchmarkGetHitParallel(b *testing.B) {
	c := New(Config{BlockSize: 1 << 20})
	for i := range int64(64) {
		c.Put("v1", i, make([]byte, 16))
	}
	fill := func(context.Context) ([]byte, error) { return nil, fmt.Errorf("miss") }
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		var i int64
		for pb.Next() {
			if _, err := c.Get(ctx, "v1", i%64, fill); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}
