package resourcesync

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	testURL  = "http://example.com/dir/list.xml"
	docStart = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
`
)

// parseErr parses doc and returns its *ParseError, failing if there is none.
func parseErr(t *testing.T, doc string, opts Options) *ParseError {
	t.Helper()
	_, err := Parse(strings.NewReader(doc), testURL, opts)
	require.Error(t, err)
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, testURL, pe.URL)
	return pe
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name      string
		doc       string
		opts      Options
		cause     error
		line, col int
		msg       string
	}{
		{"malformed end tag", docStart + "<url><loc>http://a/</loc></urk></urlset>", Options{}, ErrNotXML, 3, 26, "does not match"},
		{"not XML at all", "{\"json\": true}", Options{}, ErrNotXML, 1, 1, "text outside the root"},
		{"truncated", docStart + "<url><loc>http://a/</loc>", Options{}, ErrNotXML, 3, 26, "unexpected end"},
		{"external entity not expanded",
			`<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY x SYSTEM "file:///etc/passwd">]>` + "\n" +
				`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>&x;</loc></url></urlset>`,
			Options{}, ErrNotXML, 2, 71, "unknown entity"},
		{"wrong root namespace", `<urlset xmlns="http://www.google.com/schemas/sitemap/0.84"><url><loc>http://a/</loc></url></urlset>`,
			Options{}, ErrNamespace, 1, 1, "want namespace http://www.sitemaps.org/schemas/sitemap/0.9"},
		{"root without namespace", "<urlset>\n</urlset>", Options{}, ErrNamespace, 1, 1, "no namespace"},
		{"wrong root element", `<feed xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>`, Options{}, ErrStructure, 1, 1, "neither urlset nor sitemapindex"},
		{"rs namespace without slash", strings.Replace(docStart, "rs/terms/", "rs/terms", 1) + `<rs:md capability="resourcelist"/></urlset>`,
			Options{}, ErrNamespace, 3, 1, "want namespace http://www.openarchives.org/rs/terms/"},
		{"md in the sitemap namespace", docStart + `<md capability="resourcelist"/></urlset>`, Options{}, ErrNamespace, 3, 1, "<md> in http://www.sitemaps.org"},
		{"undeclared prefix", docStart + `<url><loc>http://a/</loc><x:y/></url></urlset>`, Options{}, ErrNamespace, 3, 26, `undeclared namespace prefix "x"`},
		{"entry without loc", docStart + "<url>\n  <lastmod>2013-01-01</lastmod>\n</url></urlset>", Options{}, ErrStructure, 3, 1, "<url> without <loc>"},
		{"url in a sitemapindex", `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://a/</loc></url></sitemapindex>`,
			Options{}, ErrStructure, 1, 67, "<url> inside <sitemapindex>"},
		{"bad length", docStart + `<url><loc>http://a/</loc><rs:md length="12a"/></url></urlset>`, Options{}, ErrValue, 3, 26, `bad length "12a"`},
		{"negative length", docStart + `<url><loc>http://a/</loc><rs:md length="-1"/></url></urlset>`, Options{}, ErrValue, 3, 26, `bad length "-1"`},
		{"length overflow", docStart + `<url><loc>http://a/</loc><rs:md length="9223372036854775808"/></url></urlset>`, Options{}, ErrValue, 3, 26, "bad length"},
		{"bad pri", docStart + `<url><loc>http://a/</loc><rs:ln rel="duplicate" href="http://b/" pri="x"/></url></urlset>`, Options{}, ErrValue, 3, 26, `bad pri "x"`},
		{"bad lastmod", docStart + "<url><loc>http://a/</loc>\n<lastmod>2013-13-01</lastmod></url></urlset>", Options{}, ErrValue, 4, 1, `bad datetime lastmod="2013-13-01"`},
		{"bad md datetime", docStart + `<rs:md capability="changelist" from="yesterday"/></urlset>`, Options{}, ErrValue, 3, 1, `bad datetime from="yesterday"`},
		{"bad hash", docStart + `<url><loc>http://a/</loc><rs:md hash="md5"/></url></urlset>`, Options{}, ErrValue, 3, 26, "bad hash"},
		{"unsupported encoding", `<?xml version="1.0" encoding="ISO-8859-1"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>`,
			Options{}, ErrNotXML, 1, 1, "unsupported encoding"},
		{"too many entries", docStart + strings.Repeat("<url><loc>http://a/</loc></url>\n", 3) + "</urlset>",
			Options{MaxEntries: 2}, ErrTooManyEntries, 5, 1, "more than 2 entries"},
		{"too large", docStart + strings.Repeat("<url><loc>http://a/</loc></url>\n", 100) + "</urlset>",
			Options{MaxBytes: 1000}, ErrTooLarge, 1, 1, "document larger than 1000 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pe := parseErr(t, c.doc, c.opts)
			assert.ErrorIs(t, pe, c.cause)
			assert.Contains(t, pe.Msg, c.msg)
			if c.cause != ErrTooLarge { // the position there is wherever the limit struck
				assert.Equal(t, c.line, pe.Line, "line")
				assert.Equal(t, c.col, pe.Column, "column")
			} else {
				assert.Greater(t, pe.Line, 3)
			}
		})
	}
}

func TestMaxBytesAllowsExactSize(t *testing.T) {
	doc := docStart + "<url><loc>http://a/</loc></url></urlset>"
	d, err := Parse(strings.NewReader(doc), testURL, Options{MaxBytes: int64(len(doc))})
	require.NoError(t, err)
	assert.Len(t, d.Entries, 1)
	_, err = Parse(strings.NewReader(doc), testURL, Options{MaxBytes: int64(len(doc) - 1)})
	assert.ErrorIs(t, err, ErrTooLarge)
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, err := zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return b.Bytes()
}

func TestGzipDocument(t *testing.T) {
	plain, err := os.ReadFile(filepath.Join(conformanceDir, "spec-1.1-examples/resourcesync_ex_14.xml"))
	require.NoError(t, err)
	want, err := Parse(bytes.NewReader(plain), testURL, Options{})
	require.NoError(t, err)
	got, err := Parse(bytes.NewReader(gzipped(t, plain)), testURL, Options{})
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Len(t, got.Entries, 2)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestGzipBombBounded(t *testing.T) {
	// 256 MiB of whitespace inside the root: about 250 KiB compressed.
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write([]byte(docStart))
	require.NoError(t, err)
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for range 256 {
		_, err = zw.Write(chunk)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	compressed := b.Len()

	src := &countingReader{r: &b}
	start := time.Now()
	_, err = Parse(src, testURL, Options{MaxBytes: 4 << 20})
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.ErrorIs(t, err, ErrTooLarge)
	assert.Less(t, src.n, int64(compressed)/8, "stopped long before the end of the compressed stream")
	assert.Less(t, time.Since(start), 30*time.Second, "it did not hang (the byte count shows it stopped early)")
}

func TestCorruptGzip(t *testing.T) {
	data := gzipped(t, []byte(docStart+"<url><loc>http://a/</loc></url></urlset>"))
	data[len(data)-8] ^= 0xff // the CRC-32 in the trailer
	_, err := Parse(bytes.NewReader(data), testURL, Options{})
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.ErrorIs(t, err, gzip.ErrChecksum)
	assert.Equal(t, "reading document", pe.Msg)
	_, err = Parse(bytes.NewReader([]byte{0x1f, 0x8b, 0, 0}), testURL, Options{})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "bad gzip stream", pe.Msg)
}

func TestReadErrorIsWrapped(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader(docStart+"<url><loc>http://a/</loc></url>"), iotestErrReader{boom})
	_, err := Parse(r, testURL, Options{})
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.ErrorIs(t, err, boom)
}

type iotestErrReader struct{ err error }

func (e iotestErrReader) Read([]byte) (int, error) { return 0, e.err }
