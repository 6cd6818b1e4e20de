package resourcesync

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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

func BenchmarkParseResourceList50k(b *testing.B) {
	const n = 50_000
	doc := resourceList(n)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		rd, err := NewReader(bytes.NewReader(doc), "http://example.com/resourcelist.xml", Options{})
		if err != nil {
			b.Fatal(err)
		}
		count := 0
		for {
			_, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			count++
		}
		if count != n {
			b.Fatalf("parsed %d entries, want %d", count, n)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
}
