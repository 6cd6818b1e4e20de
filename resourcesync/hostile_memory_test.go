package resourcesync

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repeatReader streams head, then body repeated until n bytes of it, then
// tail, without holding the document in memory.
type repeatReader struct {
	parts [][]byte
	body  []byte
	n     int64 // body bytes still to send
	at    int   // position in body
	stage int
}

func newRepeatReader(head, body string, n int64, tail string) *repeatReader {
	return &repeatReader{parts: [][]byte{[]byte(head), []byte(tail)}, body: []byte(body), n: n}
}

func (r *repeatReader) Read(p []byte) (int, error) {
	switch {
	case r.stage == 0:
		k := copy(p, r.parts[0])
		if r.parts[0] = r.parts[0][k:]; len(r.parts[0]) == 0 {
			r.stage = 1
		}
		return k, nil
	case r.stage == 1 && r.n > 0:
		k := 0
		for k < len(p) && r.n > 0 {
			c := copy(p[k:min(len(p), k+int(min(r.n, int64(len(r.body)-r.at))))], r.body[r.at:])
			k += c
			r.n -= int64(c)
			r.at = (r.at + c) % len(r.body)
		}
		return k, nil
	case len(r.parts[1]) > 0:
		k := copy(p, r.parts[1])
		r.parts[1] = r.parts[1][k:]
		return k, nil
	}
	return 0, io.EOF
}

const (
	hostileHead = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="resourcelist"/>
`
	hostileSize = 200 << 20 // like the lists of issue 11
)

// hostileDocs are documents built to make a parser hold much: each is
// refused, and how much memory that costs is what is measured.
var hostileDocs = map[string]func() io.Reader{
	"loc text node": func() io.Reader {
		return newRepeatReader(hostileHead+"<url><loc>http://e.org/", "a", hostileSize, "</loc></url></urlset>")
	},
	"unknown element text": func() io.Reader {
		return newRepeatReader(hostileHead+`<url><loc>http://e.org/a</loc><x:big xmlns:x="urn:x">`, "abcdefgh", hostileSize, "</x:big></url></urlset>")
	},
	"text split by comments": func() io.Reader {
		return newRepeatReader(hostileHead+"<url><loc>http://e.org/", strings.Repeat("a", 1000)+"<!---->", hostileSize, "</loc></url></urlset>")
	},
	"comment": func() io.Reader {
		return newRepeatReader(hostileHead+"<!--", "abcdefgh", hostileSize, "--></urlset>")
	},
	"attribute value": func() io.Reader {
		return newRepeatReader(hostileHead+`<url><loc>http://e.org/a</loc><rs:md type="`, "abcdefgh", hostileSize, `"/></url></urlset>`)
	},
	"many attributes": func() io.Reader {
		return newRepeatReader(hostileHead+`<url><loc>http://e.org/a</loc><x:md xmlns:x="urn:x"`, ` a="" `, hostileSize, `/></url></urlset>`)
	},
	"deep nesting": func() io.Reader {
		return newRepeatReader(hostileHead+`<url><loc>http://e.org/a</loc>`, "<x>", hostileSize, "</url></urlset>")
	},
	"gzip bomb": func() io.Reader { return bytes.NewReader(gzipBomb()) },
}

// gzipBomb is a gzip stream of 256 MiB of small comments (about 1000:1).
var gzipBomb = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	_, _ = io.Copy(zw, newRepeatReader(hostileHead, "<!-- a small comment -->\n", 256<<20, "</urlset>"))
	_ = zw.Close()
	return buf.Bytes()
})

// parseAll reads a document to its end or first error.
func parseAll(r io.Reader) error {
	rd, err := NewReader(r, "http://e.org/list.xml", Options{})
	if err != nil {
		return err
	}
	for {
		if _, err := rd.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// allocatedBy returns the bytes allocated while fn runs: an upper bound on
// the memory it held at its peak, and deterministic.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestHostileDocumentsAreRefusedInLittleMemory(t *testing.T) {
	for name, doc := range hostileDocs {
		t.Run(name, func(t *testing.T) {
			if name == "gzip bomb" {
				gzipBomb() // built outside the measure
			}
			var err error
			alloc := allocatedBy(func() { err = parseAll(doc()) })
			require.Error(t, err)
			var pe *ParseError
			require.ErrorAs(t, err, &pe, "a ParseError names the document and the place")
			assert.Equal(t, "http://e.org/list.xml", pe.URL)
			assert.ErrorIs(t, err, ErrTooLarge)
			t.Logf("%s: %v; %.1f MiB allocated", name, err, float64(alloc)/(1<<20))
			assert.Less(t, alloc, uint64(8<<20), "bytes allocated while refusing it")
		})
	}
}

// BenchmarkHostileDocumentPeak reports, per hostile document, the bytes
// allocated while refusing it and the peak resident set of the process
// (VmHWM, reset before each run through /proc/self/clear_refs). Run one at
// a time for clean figures:
//
//	go test -run '^$' -bench 'HostileDocumentPeak/loc' -benchtime 1x ./resourcesync/
func BenchmarkHostileDocumentPeak(b *testing.B) {
	for name, doc := range hostileDocs {
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			gzipBomb()
			for b.Loop() {
				resetPeakRSS(b)
				alloc := allocatedBy(func() { _ = parseAll(doc()) })
				b.ReportMetric(float64(alloc)/(1<<20), "MiB-alloc/op")
				b.ReportMetric(float64(peakRSSKiB(b))/1024, "MiB-VmHWM")
			}
		})
	}
}

func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS: %v", err)
	}
}

func peakRSSKiB(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/status")
	require.NoError(b, err)
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			require.NoError(b, err)
			return n
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}

func TestStructuralLimits(t *testing.T) {
	var attrs strings.Builder
	for i := range maxAttributes + 1 {
		attrs.WriteString(` a` + strconv.Itoa(i) + `="x"`)
	}
	cases := map[string]struct {
		doc     string
		ok      bool
		message string
	}{
		"deepest allowed":             {doc: hostileHead + "<url><loc>http://e.org/a</loc>" + strings.Repeat("<x>", maxDepth-2) + strings.Repeat("</x>", maxDepth-2) + "</url></urlset>", ok: true},
		"one deeper":                  {doc: hostileHead + "<url><loc>http://e.org/a</loc>" + strings.Repeat("<x>", maxDepth-1) + strings.Repeat("</x>", maxDepth-1) + "</url></urlset>", message: "nested more than 256 deep"},
		"too many attributes":         {doc: hostileHead + `<url><loc>http://e.org/a</loc><x:y xmlns:x="urn:x"` + attrs.String() + "/></url></urlset>", message: "more than 256 attributes"},
		"a long loc within the limit": {doc: hostileHead + "<url><loc>http://e.org/" + strings.Repeat("a", DefaultMaxTokenBytes-100) + "</loc></url></urlset>", ok: true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			err := parseAll(strings.NewReader(c.doc))
			if c.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrTooLarge)
			assert.Contains(t, err.Error(), c.message)
			assert.Contains(t, err.Error(), "list.xml:4:")
		})
	}
}
