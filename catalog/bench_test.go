package catalog

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"rsfs/resourcesync"
)

const benchOrigin = "http://127.0.0.1:8080"

// benchURI is http://127.0.0.1:8080/data/dNNNNN/rNNNNNNN.txt, 1000 per directory.
func benchURI(buf []byte, i int) []byte {
	buf = append(buf[:0], "http://127.0.0.1:8080/data/d"...)
	buf = appendPadded(buf, i/1000, 5)
	buf = append(buf, "/r"...)
	buf = appendPadded(buf, i, 7)
	return append(buf, ".txt"...)
}

func appendPadded(buf []byte, n, width int) []byte {
	s := strconv.Itoa(n)
	for i := len(s); i < width; i++ {
		buf = append(buf, '0')
	}
	return append(buf, s...)
}

// benchInput yields n realistic resources, reusing one Resource.
func benchInput(n int, fn func(*Resource)) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var uri []byte
	var digest [16]byte
	r := &Resource{Type: "text/plain", Hashes: make([]resourcesync.Hash, 1)}
	for i := range n {
		uri = benchURI(uri, i)
		for j := 0; j < 16; j += 8 {
			v := rng.Uint64()
			for k := range 8 {
				digest[j+k] = byte(v >> (8 * k))
			}
		}
		r.URI = string(uri)
		r.Length = int64(rng.IntN(1 << 20))
		r.Lastmod = base.Add(time.Duration(i) * time.Second)
		r.Hashes[0] = resourcesync.Hash{Alg: "md5", Value: hex.EncodeToString(digest[:])}
		fn(r)
	}
}

// buildBench adds n realistic resources and seals.
func buildBench(n int) *Catalog {
	c := New(Options{Origin: benchOrigin})
	benchInput(n, func(r *Resource) { _ = c.Add(r) })
	c.Seal()
	return c
}

func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func vmRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:"))
		}
	}
	return "?"
}

// BenchmarkBuild1M adds 1,000,000 resources and seals; run with
// -benchtime=1x. It reports ns and heap bytes per resource.
func BenchmarkBuild1M(b *testing.B) { benchmarkBuild(b, 1_000_000) }

// BenchmarkBuild200k is BenchmarkBuild1M at 200,000 resources, the count
// issue 42's bytes per resource are measured at.
func BenchmarkBuild200k(b *testing.B) { benchmarkBuild(b, 200_000) }

func benchmarkBuild(b *testing.B, n int) {
	for b.Loop() {
		start := time.Now()
		benchInput(n, func(*Resource) {})
		gen := time.Since(start)
		before := heapInuse()
		start = time.Now()
		c := buildBench(n)
		elapsed := time.Since(start)
		after := heapInuse()
		b.ReportMetric(float64(elapsed.Nanoseconds())/float64(n), "ns/resource")
		b.ReportMetric(float64(gen.Nanoseconds())/float64(n), "input-ns/resource")
		b.ReportMetric(float64(after-before)/float64(n), "heapB/resource")
		s := c.Stats()
		b.ReportMetric(float64(s.ArenaUsed)/float64(n), "arenaB/resource")
		debug.FreeOSMemory()
		b.Logf("build %v (making the input alone %v), heap %d MB, RSS after FreeOSMemory %s, stats %+v", elapsed, gen,
			(after-before)>>20, vmRSS(), s)
		require.Equal(b, n, c.Len())
		runtime.KeepAlive(c)
	}
}

func BenchmarkLookup(b *testing.B) {
	const n = 1_000_000
	c := buildBench(n)
	data, _, ok := c.Lookup(RootID, "data")
	require.True(b, ok)
	type probe struct {
		dir  NodeID
		name string
	}
	rng := rand.New(rand.NewPCG(3, 4))
	probes := make([]probe, 4096)
	for i := range probes {
		k := rng.IntN(n)
		d, _, ok := c.Lookup(data, fmt.Sprintf("d%05d", k/1000))
		require.True(b, ok)
		probes[i] = probe{d, fmt.Sprintf("r%07d.txt", k)}
	}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		p := probes[i&4095]
		if _, _, ok := c.Lookup(p.dir, p.name); !ok {
			b.Fatal("lookup failed", p.name)
		}
		i++
	}
}

func BenchmarkLookupParallel(b *testing.B) {
	c := buildBench(100_000)
	data, _, _ := c.Lookup(RootID, "data")
	d, _, _ := c.Lookup(data, "d00042")
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, ok := c.Lookup(d, "r0042123.txt"); !ok {
				b.Fatal("lookup failed")
			}
		}
	})
}

// BenchmarkBuildDirPerResource is the worst shape: every resource in a
// directory of its own (…/item/N/index.html).
func BenchmarkBuildDirPerResource(b *testing.B) {
	const n = 200_000
	for b.Loop() {
		before := heapInuse()
		start := time.Now()
		c := New(Options{Origin: benchOrigin})
		r := &Resource{Length: 1, Lastmod: time.Unix(1, 0)}
		for i := range n {
			r.URI = "http://127.0.0.1:8080/item/" + strconv.Itoa(i) + "/index.html"
			c.Add(r)
		}
		c.Seal()
		elapsed := time.Since(start)
		after := heapInuse()
		b.ReportMetric(float64(elapsed.Nanoseconds())/n, "ns/resource")
		b.ReportMetric(float64(after-before)/n, "heapB/resource")
		require.Equal(b, n, c.Len())
		runtime.KeepAlive(c)
	}
}

// BenchmarkBuild1MLinks is BenchmarkBuild1M with one resource in ten
// carrying a memento (with its time) and a timegate link; run with
// -benchtime=1x. heapB/resource is per resource of the million.
func BenchmarkBuild1MLinks(b *testing.B) {
	const n = 1_000_000
	for b.Loop() {
		before := heapInuse()
		start := time.Now()
		c := New(Options{Origin: benchOrigin})
		benchInput(n, func(r *Resource) {
			r.Links = nil
			if i := len(r.URI); r.URI[i-5] == '0' { // one in ten
				r.Links = []resourcesync.Link{
					{Rel: "memento", Href: "http://127.0.0.1:8080/2024" + r.URI[len(benchOrigin):], Modified: r.Lastmod, Length: resourcesync.NoLength},
					{Rel: "timegate", Href: "http://127.0.0.1:8080/timegate/" + r.URI, Length: resourcesync.NoLength},
				}
			}
			_ = c.Add(r)
		})
		c.Seal()
		elapsed := time.Since(start)
		after := heapInuse()
		s := c.Stats()
		b.ReportMetric(float64(elapsed.Nanoseconds())/n, "ns/resource")
		b.ReportMetric(float64(after-before)/n, "heapB/resource")
		b.ReportMetric(float64(s.ArenaUsed)/n, "arenaB/resource")
		b.Logf("build %v, heap %d MB, stats %+v", elapsed, (after-before)>>20, s)
		require.Equal(b, n/10, s.WithLinks)
		runtime.KeepAlive(c)
	}
}
