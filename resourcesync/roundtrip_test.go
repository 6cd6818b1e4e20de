package resourcesync

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRoundTripWithWriter(t *testing.T) {
	doc := &Document{
		Header: Header{
			URL:  testURL,
			Root: URLSet,
			MD:   MD{Capability: CapChangeList, From: utc("2013-01-03T00:00:00Z"), Until: utc("2013-01-04T00:00:00Z"), Length: NoLength},
			Links: []Link{{Rel: "up", Href: "http://example.com/capabilitylist.xml", Length: NoLength},
				{Rel: "index", Href: "http://example.com/dir/index.xml", Length: NoLength}},
		},
		Entries: []Entry{
			{
				Loc: "http://example.com/res1?a=1&b=<2>", Lastmod: utc("2013-01-03T18:00:00.5Z"), ChangeFreq: "daily",
				MD: MD{Change: ChangeUpdated, Datetime: utc("2013-01-03T18:00:00Z"), Length: 9788456778, Type: "text/html",
					Hashes: []Hash{{"md5", md5Res1}, {"sha-256", sha256R}, {"x-custom", "Q&A"}}, Path: "/resources/r\"1\"", Encoding: "gzip"},
				Links: []Link{{Rel: "duplicate", Href: "http://mirror.example.com/res1", Pri: 2, Length: 8876,
					Hashes: []Hash{{"sha-1", "da39a3ee5e6b4b0d3255bfef95601890afd80709"}}, Modified: utc("2013-01-03T18:00:00Z"),
					Type: "text/html", Path: "/m/res1"}},
			},
			{Loc: "http://example.com/r%C3%A9sum%C3%A9", MD: MD{Change: ChangeDeleted, Length: 0}},
			{Loc: "http://example.com/café/a b", MD: MD{Change: ChangeCreated, Capability: CapResourceList, At: utc("2013-01-01T00:00:00Z"),
				Completed: utc("2013-01-01T00:01:00Z"), Modified: utc("2013-01-01T00:02:00Z"), Length: NoLength}},
		},
	}
	var b bytes.Buffer
	require.NoError(t, WriteDocument(&b, doc))
	got, err := Parse(&b, testURL, Options{})
	require.NoError(t, err)
	assert.Empty(t, got.Warnings)
	// net/url escapes what a URL may not hold: the writer published it raw.
	doc.Entries[2].Loc = "http://example.com/caf%C3%A9/a%20b"
	assert.Equal(t, doc.Header, got.Header)
	assert.Equal(t, doc.Entries, got.Entries)
}

func TestRoundTripConformanceExamples(t *testing.T) {
	for _, c := range conformanceCases {
		want := parseFile(t, c.file)
		got := rewriteAndParse(t, want)
		assert.Equal(t, normalisedForWriter(want), normalisedForWriter(got), c.file)
	}
}

func rewriteAndParse(t testing.TB, d *Document) *Document {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, WriteDocument(&b, d))
	got, err := Parse(&b, d.Header.URL, Options{})
	require.NoError(t, err, "re-written document:\n%s", b.String())
	return got
}

// normalisedForWriter applies what the Writer cannot express: it omits a
// zero length on a link and on an rs:md that has a capability. It also drops
// warnings, which the rewritten document no longer has.
func normalisedForWriter(d *Document) *Document {
	out := *d
	out.Warnings = nil
	out.Header.MD = normalisedMD(out.Header.MD)
	out.Header.Links = normalisedLinks(out.Header.Links)
	out.Entries = append([]Entry(nil), d.Entries...)
	for i := range out.Entries {
		out.Entries[i].MD = normalisedMD(out.Entries[i].MD)
		out.Entries[i].Links = normalisedLinks(out.Entries[i].Links)
	}
	return &out
}

func normalisedMD(md MD) MD {
	if md.Length == 0 && md.Capability != "" {
		md.Length = NoLength
	}
	return md
}

func normalisedLinks(ls []Link) []Link {
	out := append([]Link(nil), ls...)
	for i := range out {
		if out[i].Length == 0 {
			out[i].Length = NoLength
		}
	}
	return out
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(conformanceDir, "spec-1.*-examples", "*.xml"))
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(docStart + `<url><loc>a b</loc><lastmod>2013-01-02 13:00</lastmod><rs:md hash="md5:FYSr3469yYAqwManQCwDtg==" length="0" capability="x"/><rs:ln href="&#xA;x"/></url></urlset>`))
	f.Add([]byte(docStart + `<url><loc><![CDATA[http://a/]]>&amp;&#x10FFFF;</loc></url><rs:md/></urlset>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse(bytes.NewReader(data), testURL, Options{MaxBytes: 1 << 20, MaxEntries: 1000})
		if err != nil {
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, testURL, pe.URL)
			require.Positive(t, pe.Line)
			require.Positive(t, pe.Column)
			return
		}
		got := rewriteAndParse(t, d)
		require.Equal(t, normalisedForWriter(d), normalisedForWriter(got))
	})
}

func FuzzResolveFastPath(f *testing.F) {
	for _, s := range []string{"http://example.com/a/b", "https://h/x?y=1&z", "http://h//a", "http://h/./a", "http://h/a:b", "http://h/", "http://H/a", "http://example.com/a/./b", "http://example.com/a//b", "http://example.com/a/%41",
		"http://127.0.0.1:8080/a", "http://h:/a", "http://h:0080/a", "http://h:123456/a", "http://:80/a", "http://h:8a/a", "http://[::1]:80/a"} {
		f.Add(s)
	}
	base, err := url.Parse(testURL)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, s string) {
		var cache plainURLCache
		require.True(t, cache.isPlain([]byte("http://example.com/a/b")))
		require.Equal(t, isPlainHTTPURL([]byte(s)), cache.isPlain([]byte(s)), "the directory cache agrees")
		half := s[:len(s)/2]
		for _, next := range []string{s, s + "/./a", s + "//a", s + "a%", s + "b", half, half + "/.x", half + "é", half + "x/y"} {
			require.Equal(t, isPlainHTTPURL([]byte(next)), cache.isPlain([]byte(next)), "the prefix cache agrees after %q: %q", s, next)
		}
		if !isPlainHTTPURL([]byte(s)) {
			return
		}
		ref, err := url.Parse(s)
		require.NoError(t, err, s)
		require.Equal(t, base.ResolveReference(ref).String(), s)
		require.True(t, strings.HasPrefix(s, "http"))
	})
}
