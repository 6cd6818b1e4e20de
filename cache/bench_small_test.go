package cache

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const (
	smallFiles   = 2000
	smallLatency = 200 * time.Microsecond
	warmAhead    = 16
)

// BenchmarkSmallFilesSequential reads 2,000 contents of 1-4 KiB, one after
// another (open, read whole, close), from a server adding 200 µs to every
// request: without Warm, and with Warm of the next 16 siblings at each open.
func BenchmarkSmallFilesSequential(b *testing.B) {
	datas := make([][]byte, smallFiles)
	for i := range datas {
		datas[i] = randomBytes(1024+(i*977)%3073, uint64(i))
	}
	srv, client := smallFilesServer(b, datas)
	items := make([]WarmItem, smallFiles)
	for i, data := range datas {
		url := fmt.Sprintf("%s/%d", srv.URL, i)
		items[i] = WarmItem{
			Content: Content{ID: strconv.Itoa(i), Name: url, Size: int64(len(data)), Hashes: sha256Of(data)},
			Fetcher: httpOrigin{client: client, url: url},
		}
	}
	for _, warm := range []bool{false, true} {
		b.Run(fmt.Sprintf("warm=%v", warm), func(b *testing.B) {
			var hits uint64
			addedLatency.total.Store(0)
			addedLatency.requests.Store(0)
			for b.Loop() {
				c := New(Config{})
				readSmallFiles(b, c, items, datas, warm)
				hits += c.Stats().Hits
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*smallFiles), "µs/file")
			b.ReportMetric(100*float64(hits)/float64(b.N*smallFiles), "hit%")
			if n := addedLatency.requests.Load(); n > 0 {
				b.ReportMetric(float64(addedLatency.total.Load()/n)/1e3, "added-µs/req")
			}
		})
	}
}

func readSmallFiles(b *testing.B, c *Cache, items []WarmItem, datas [][]byte, warm bool) {
	ctx := context.Background()
	buf := make([]byte, 4096)
	for i, it := range items {
		if warm {
			c.Warm(items[i+1 : min(i+1+warmAhead, len(items))])
		}
		f := c.Open(it.Content, it.Fetcher)
		n, err := f.ReadAt(ctx, buf, 0)
		f.Close()
		if err != io.EOF || !bytes.Equal(buf[:n], datas[i]) {
			b.Fatalf("file %d: read %d bytes: %v", i, n, err)
		}
	}
}

// addedLatency sums the delays the server really added (time.Sleep rounds
// short sleeps up to about a millisecond on Linux), for the report.
var addedLatency struct {
	total, requests atomic.Int64
}

// addLatency sleeps d and records how long it took.
func addLatency(d time.Duration) {
	start := time.Now()
	time.Sleep(d)
	addedLatency.total.Add(int64(time.Since(start)))
	addedLatency.requests.Add(1)
}

// smallFilesServer serves datas[i] at /i on 127.0.0.1 after a fixed delay.
func smallFilesServer(b *testing.B, datas [][]byte) (*httptest.Server, *http.Client) {
	b.Helper()
	return startBenchServer(b, func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		if err != nil || i < 0 || i >= len(datas) {
			http.NotFound(w, r)
			return
		}
		addLatency(smallLatency)
		http.ServeContent(w, r, "content", time.Time{}, bytes.NewReader(datas[i]))
	})
}
