package resourcesync

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// resourceList50k builds a Resource List of n entries shaped like a real
// one: a ~60-character loc, a lastmod and an rs:md with md5, length and type.
func resourceList(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcelist" at="2013-01-03T09:00:00Z" completed="2013-01-03T09:01:00Z"/>
`)
	for i := range n {
		fmt.Fprintf(&b, "  <url>\n    <loc>http://example.com/collection/items/2024/%08d/document.pdf</loc>\n"+
			"    <lastmod>2013-01-02T13:%02d:%02dZ</lastmod>\n"+
			"    <rs:md hash=\"md5:%032x\"\n           length=\"%d\"\n           type=\"application/pdf\"/>\n  </url>\n",
			i, i/60%60, i%60, i*7919, i*7)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// countEntries reads a whole document and returns its number of entries.
func countEntries(doc []byte) (int, error) {
	rd, err := NewReader(bytes.NewReader(doc), "http://example.com/resourcelist.xml", Options{})
	if err != nil {
		return 0, err
	}
	count := 0
	for {
		_, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return count, nil
		}
		if err != nil {
			return count, err
		}
		count++
	}
}

func BenchmarkParseResourceList50k(b *testing.B) {
	const n = 50_000
	doc := resourceList(n)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		count, err := countEntries(doc)
		if err != nil {
			b.Fatal(err)
		}
		if count != n {
			b.Fatalf("parsed %d entries, want %d", count, n)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkParseParallel20x50k parses 20 lists of 50,000 entries per
// iteration on GOMAXPROCS goroutines, as the loader does, and reports the
// aggregate rate.
func BenchmarkParseParallel20x50k(b *testing.B) {
	const n, lists = 50_000, 20
	doc := resourceList(n)
	b.SetBytes(int64(lists * len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		var next, parsed atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, runtime.GOMAXPROCS(0))
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				for next.Add(1) <= lists {
					count, err := countEntries(doc)
					if err != nil {
						errs <- err
						return
					}
					parsed.Add(int64(count))
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		if got := parsed.Load(); got != n*lists {
			b.Fatalf("parsed %d entries, want %d", got, n*lists)
		}
	}
	b.ReportMetric(float64(n*lists*b.N)/b.Elapsed().Seconds(), "entries/s")
}
