package atompmh

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// benchDoc is an archive document of n entries, two representations each,
// hrefs relative to an xml:base, as a producer with many records writes.
func benchDoc(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:fh="http://purl.org/syndication/history/1.0" xml:base="http://repo.example.org/records/">
<link rel="current" href="http://repo.example.org/feed"/>
<link rel="prev-archive" href="http://repo.example.org/archive/41"/>
<updated>2024-05-01T12:00:00Z</updated>
<id>urn:uuid:3ce05531-b9c0-4a7d-8966-4d9a9a3a0695</id>
<title>Benchmark</title>
<fh:archive/>
`)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `<entry>
<title>Data collection %d</title>
<id>urn:uuid:00000000-0000-4000-8000-%012d</id>
<updated>2024-04-30T%02d:%02d:%02dZ</updated>
<link rel="alternate" type="application/atom+xml" href="%d.atom"/>
<link type="application/rdf+xml" href="%d.rdf"/>
</entry>
`, i, i, i/3600%24, i/60%60, i%60, i, i)
	}
	b.WriteString("</feed>\n")
	return b.Bytes()
}

func BenchmarkParseArchiveDocument(b *testing.B) {
	const n = 1000
	doc := benchDoc(n)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(doc), "http://repo.example.org/archive/42", Options{})
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			got++
		}
		if got != n {
			b.Fatalf("%d entries", got)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
}
