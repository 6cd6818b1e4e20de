package sourcetest

import (
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The tests read documents with encoding/xml, independently of the
// resourcesync package's own reader.

type xmlAttrs struct {
	Attrs []xml.Attr `xml:",any,attr"`
}

func (a xmlAttrs) get(name string) string {
	for _, at := range a.Attrs {
		if at.Name.Local == name {
			return at.Value
		}
	}
	return ""
}

func (a xmlAttrs) has(name string) bool {
	for _, at := range a.Attrs {
		if at.Name.Local == name {
			return true
		}
	}
	return false
}

type xmlEntry struct {
	Loc     string     `xml:"loc"`
	Lastmod string     `xml:"lastmod"`
	MD      xmlAttrs   `xml:"http://www.openarchives.org/rs/terms/ md"`
	Links   []xmlAttrs `xml:"http://www.openarchives.org/rs/terms/ ln"`
}

type xmlDoc struct {
	XMLName  xml.Name
	MD       xmlAttrs   `xml:"http://www.openarchives.org/rs/terms/ md"`
	Links    []xmlAttrs `xml:"http://www.openarchives.org/rs/terms/ ln"`
	URLs     []xmlEntry `xml:"url"`
	Sitemaps []xmlEntry `xml:"sitemap"`
}

func (d *xmlDoc) entries() []xmlEntry { return append(d.URLs, d.Sitemaps...) }

func (d *xmlDoc) link(rel string) string {
	for _, l := range d.Links {
		if l.get("rel") == rel {
			return l.get("href")
		}
	}
	return ""
}

func (d *xmlDoc) locs() []string {
	var out []string
	for _, e := range d.entries() {
		out = append(out, e.Loc)
	}
	return out
}

var client = &http.Client{Timeout: 30 * time.Second}

// get performs a GET with extra headers and returns the response and body.
func get(t testing.TB, url string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	return do(t, http.MethodGet, url, hdr...)
}

func do(t testing.TB, method, url string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

// fetchDoc fetches and parses a document, gunzipping .gz ones.
func fetchDoc(t testing.TB, url string) *xmlDoc {
	t.Helper()
	resp, b := get(t, url)
	require.Equal(t, http.StatusOK, resp.StatusCode, url)
	if strings.HasSuffix(url, ".gz") {
		require.Equal(t, "application/gzip", resp.Header.Get("Content-Type"))
		zr, err := gzip.NewReader(strings.NewReader(string(b)))
		require.NoError(t, err, url)
		b, err = io.ReadAll(zr)
		require.NoError(t, err, url)
	}
	var d xmlDoc
	require.NoError(t, xml.Unmarshal(b, &d), url)
	return &d
}

// fetchList fetches a Resource List or Index and returns all resource
// entries, following an Index's pages.
func fetchList(t testing.TB, url string) []xmlEntry {
	t.Helper()
	d := fetchDoc(t, url)
	require.Equal(t, "resourcelist", d.MD.get("capability"), url)
	if d.XMLName.Local == "urlset" {
		return d.URLs
	}
	var out []xmlEntry
	for _, sm := range d.Sitemaps {
		out = append(out, fetchList(t, sm.Loc)...)
	}
	return out
}

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

func atoi64(t testing.TB, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err, s)
	return n
}

func start(t testing.TB, cfg Config) *Source {
	t.Helper()
	s, err := Start(cfg)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}
