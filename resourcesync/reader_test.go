package resourcesync

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToleratedDeviationsWarnOncePerKind(t *testing.T) {
	doc := "\xef\xbb\xbf \n" + docStart + `<rs:md capability="resourcelist" at="2013-01-03 09:00:00"/>
<url><rs:md hash="md5:FYSr3469yYAqwManQCwDtg==" length="1"/><loc>http://a/1</loc><lastmod>2013-01-02T13:00</lastmod></url>
<url><rs:md hash="md5:FYSr3469yYAqwManQCwDtg" length="2"/><loc>http://a/2</loc><lastmod>2013-01-02 13:00:00</lastmod></url>
</urlset>`
	d, err := Parse(strings.NewReader(doc), testURL, Options{})
	require.NoError(t, err)
	require.Len(t, d.Entries, 2)
	assert.Equal(t, utc("2013-01-03T09:00:00Z"), d.Header.MD.At)
	assert.Equal(t, utc("2013-01-02T13:00:00Z"), d.Entries[0].Lastmod)
	assert.Equal(t, []Hash{{"md5", "1584abdf8ebdc9802ac0c6a7402c03b6"}}, d.Entries[0].MD.Hashes)
	assert.Equal(t, []Hash{{"md5", "1584abdf8ebdc9802ac0c6a7402c03b6"}}, d.Entries[1].MD.Hashes)
	var msgs []string
	for _, w := range d.Warnings {
		assert.Equal(t, testURL, w.URL)
		msgs = append(msgs, w.Msg)
	}
	require.Len(t, msgs, 5, "%q", msgs)
	assert.Equal(t, "whitespace before the XML declaration", msgs[0])
	assert.Equal(t, 2, d.Warnings[0].Line)
	assert.Contains(t, msgs[1], "without time zone")
	assert.Contains(t, msgs[2], "space instead of T")
	assert.Contains(t, msgs[3], "rs:md before <loc>")
	assert.Contains(t, msgs[4], "base64 hash value")
	assert.Equal(t, 5, d.Warnings[4].Line)
}

func TestBOMAloneIsNotAWarning(t *testing.T) {
	d, err := Parse(strings.NewReader("\xef\xbb\xbf"+docStart+"</urlset>"), testURL, Options{})
	require.NoError(t, err)
	assert.Empty(t, d.Warnings)
	assert.Empty(t, d.Entries)
	assert.Equal(t, URLSet, d.Header.Root)
}

func TestRelativeURLsResolved(t *testing.T) {
	doc := docStart + `<rs:ln rel="up" href="../capabilitylist.xml"/>
<url><loc> res1 </loc><changefreq>daily</changefreq><rs:ln rel="duplicate" href="/mirror/res1?x=1"/></url>
<url><loc>http://other.example.org/a/./b/../c</loc></url>
<url><loc>http://a/%zz</loc></url>
</urlset>`
	d, err := Parse(strings.NewReader(doc), testURL, Options{})
	require.NoError(t, err)
	assert.Equal(t, "http://example.com/capabilitylist.xml", d.Header.Links[0].Href)
	assert.Equal(t, "http://example.com/dir/res1", d.Entries[0].Loc)
	assert.Equal(t, "daily", d.Entries[0].ChangeFreq)
	assert.Equal(t, "http://example.com/mirror/res1?x=1", d.Entries[0].Links[0].Href)
	assert.Equal(t, "http://other.example.org/a/c", d.Entries[1].Loc)
	assert.Equal(t, "http://a/%zz", d.Entries[2].Loc, "kept as published")
	require.Len(t, d.Warnings, 1)
	assert.Contains(t, d.Warnings[0].Msg, "cannot be parsed")
}

func TestUserinfoRemoved(t *testing.T) {
	doc := docStart + `<rs:ln rel="up" href="https://u:root-secret@example.com/capabilitylist.xml"/>
<url><loc>http://user:secret@127.0.0.1:8080/x</loc><rs:ln rel="duplicate" href="http://m:pw@Mirror.example/y?a=b@c"/></url>
<url><loc>http://nobody@other.example.org/a/./b</loc></url>
<url><loc>http://plain.example/mail?to=a@b</loc></url>
</urlset>`
	for _, base := range []string{testURL, ""} {
		d, err := Parse(strings.NewReader(doc), base, Options{})
		require.NoError(t, err)
		assert.Equal(t, "https://example.com/capabilitylist.xml", d.Header.Links[0].Href)
		assert.Equal(t, "http://127.0.0.1:8080/x", d.Entries[0].Loc)
		assert.Equal(t, "http://Mirror.example/y?a=b@c", d.Entries[0].Links[0].Href)
		assert.Equal(t, "http://plain.example/mail?to=a@b", d.Entries[2].Loc, "an @ after the authority stays")
		require.Len(t, d.Warnings, 1, "one warning per document")
		assert.Contains(t, d.Warnings[0].Reading, "userinfo removed")
		assert.Contains(t, d.Warnings[0].Msg, "example.com")
		assert.NotContains(t, d.Warnings[0].Msg, "secret")
	}
}

func TestForeignElementsSkipped(t *testing.T) {
	doc := `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"
  xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
<!-- a comment --><?pi data?>
<url><image:image><image:loc>http://img/1</image:loc><loc>ignored</loc></image:image>
  <loc><![CDATA[http://a/1?x=1&y=2]]></loc><priority>0.5</priority><rs:other/>
  <x:md xmlns:x="http://example.org/other">not rs</x:md>
</url></urlset>`
	d, err := Parse(strings.NewReader(doc), testURL, Options{})
	require.NoError(t, err)
	require.Len(t, d.Entries, 1)
	assert.Equal(t, "http://a/1?x=1&y=2", d.Entries[0].Loc)
	assert.Equal(t, NoLength, d.Entries[0].MD.Length)
}

func TestHeaderIdempotentAndStreaming(t *testing.T) {
	rd, err := NewReader(strings.NewReader(docStart+`<rs:md capability="changelist" from="2013-01-03T00:00:00Z"/>
<url><loc>http://a/1</loc><rs:md change="created"/></url><rs:md capability="late"/><url><loc>http://a/2</loc><rs:md change="created"/></url></urlset>`), testURL, Options{})
	require.NoError(t, err)
	h1, err := rd.Header()
	require.NoError(t, err)
	h2, err := rd.Header()
	require.NoError(t, err)
	assert.Equal(t, h1, h2)
	assert.Equal(t, CapChangeList, h1.Capability())
	e, err := rd.Next()
	require.NoError(t, err)
	assert.Equal(t, "http://a/1", e.Loc)
	e, err = rd.Next()
	require.NoError(t, err)
	assert.Equal(t, "http://a/2", e.Loc)
	_, err = rd.Next()
	assert.ErrorIs(t, err, io.EOF)
	_, err = rd.Next()
	assert.ErrorIs(t, err, io.EOF)
	require.Len(t, rd.Warnings(), 1)
	assert.Contains(t, rd.Warnings()[0].Msg, "after the first entry")
	h3, err := rd.Header()
	require.NoError(t, err)
	assert.Equal(t, CapChangeList, h3.Capability())
}

func TestNextWithoutHeaderAndSelfClosingRoot(t *testing.T) {
	rd, err := NewReader(strings.NewReader(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>`), "", Options{})
	require.NoError(t, err)
	_, err = rd.Next()
	assert.ErrorIs(t, err, io.EOF)
	h, err := rd.Header()
	require.NoError(t, err)
	assert.Equal(t, SitemapIndex, h.Root)
	assert.Equal(t, NoLength, h.MD.Length)
}

func TestErrorIsSticky(t *testing.T) {
	rd, err := NewReader(strings.NewReader(docStart+"<url></url><url><loc>http://a/</loc></url></urlset>"), testURL, Options{})
	require.NoError(t, err)
	_, err1 := rd.Next()
	_, err2 := rd.Next()
	require.Error(t, err1)
	assert.Same(t, err1, err2)
	assert.ErrorIs(t, err1, ErrStructure)
}

func TestManyEntriesWarning(t *testing.T) {
	const n = sitemapEntryLimit + 1
	d, err := Parse(bytes.NewReader(resourceList(n)), testURL, Options{})
	require.NoError(t, err)
	assert.Len(t, d.Entries, n)
	require.Len(t, d.Warnings, 1)
	assert.Contains(t, d.Warnings[0].Msg, "more than 50,000 entries")
}

func TestParseTime(t *testing.T) {
	cases := []struct {
		in        string
		want      string
		tolerated string
	}{
		{"2013", "2013-01-01T00:00:00Z", ""},
		{"2013-02", "2013-02-01T00:00:00Z", ""},
		{"2013-02-28", "2013-02-28T00:00:00Z", ""},
		{"2013-01-03T09:05Z", "2013-01-03T09:05:00Z", ""},
		{"2013-01-03T09:05:07Z", "2013-01-03T09:05:07Z", ""},
		{"2013-01-03T09:05:07.25Z", "2013-01-03T09:05:07.25Z", ""},
		{"2013-01-03T09:05:07.1234567891Z", "2013-01-03T09:05:07.123456789Z", ""},
		{"2013-01-03T09:05:07+01:30", "2013-01-03T07:35:07Z", ""},
		{"2013-01-03T23:05:07-02:00", "2013-01-04T01:05:07Z", ""},
		{" 2013-01-03T09:05:07Z\n", "2013-01-03T09:05:07Z", ""},
		{"2013-01-03T09:05:07", "2013-01-03T09:05:07Z", "no time zone, UTC assumed"},
		{"2013-01-03 09:05:07Z", "2013-01-03T09:05:07Z", "space instead of T"},
		{"2013-01-03 09:05", "2013-01-03T09:05:00Z", "space instead of T; no time zone, UTC assumed"},
	}
	for _, c := range cases {
		got, tolerated, err := ParseTime(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, utc(c.want), got, c.in)
		assert.Equal(t, time.UTC, got.Location(), c.in)
		assert.Equal(t, c.tolerated, tolerated, c.in)
	}
	for _, bad := range []string{"", "13", "2013-1-03", "2013-02-30", "2013-13-01", "2013-01-03T", "2013-01-03T25:00Z",
		"2013-01-03T09:60Z", "2013-01-03T09:05:61Z", "2013-01-03T09:05:07.Z", "2013-01-03T09:05:07+0100",
		"2013-01-03T09:05:07Zjunk", "2013-01-03T09", "yesterday", "2013-01-03X09:05Z", "2013-01T09:05Z"} {
		_, _, err := ParseTime(bad)
		assert.Error(t, err, "%q", bad)
	}
}

func TestParseHashes(t *testing.T) {
	hs, tolerated, err := ParseHashes("MD5:1584ABDF8EBDC9802AC0C6A7402C03B6\n  sha-1:da39a3ee5e6b4b0d3255bfef95601890afd80709 x-foo:AbC")
	require.NoError(t, err)
	assert.Empty(t, tolerated)
	assert.Equal(t, []Hash{{"md5", "1584abdf8ebdc9802ac0c6a7402c03b6"},
		{"sha-1", "da39a3ee5e6b4b0d3255bfef95601890afd80709"}, {"x-foo", "AbC"}}, hs)

	hs, tolerated, err = ParseHashes("sha-256:47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU")
	require.NoError(t, err)
	assert.Equal(t, "base64 hash value converted to hex", tolerated)
	assert.Equal(t, []Hash{{"sha-256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}}, hs)

	hs, _, err = ParseHashes("  ")
	require.NoError(t, err)
	assert.Empty(t, hs)
	for _, bad := range []string{"md5", ":abc", "md5:", "md5:abc sha-1"} {
		_, _, err := ParseHashes(bad)
		assert.Error(t, err, bad)
	}
}

func TestTextOutsideRootAndTrailingContent(t *testing.T) {
	for _, doc := range []string{
		docStart + "</urlset>junk",
		docStart + "</urlset><urlset/>",
		docStart + "</urlset><!DOCTYPE x>",
	} {
		_, err := Parse(strings.NewReader(doc), testURL, Options{})
		assert.ErrorIs(t, err, ErrNotXML, doc)
	}
	d, err := Parse(strings.NewReader(docStart+"</urlset>\n<!-- end -->\n"), testURL, Options{})
	require.NoError(t, err)
	assert.Empty(t, d.Entries)
}

func TestEmptyInput(t *testing.T) {
	_, err := Parse(strings.NewReader(""), testURL, Options{})
	var pe *ParseError
	require.True(t, errors.As(err, &pe))
	assert.ErrorIs(t, err, ErrNotXML)
	assert.Equal(t, "no root element", pe.Msg)
}

// A Change List entry without a change attribute (CORE writes them; 1.1
// §12.1 requires one) is kept, with one warning per document naming the
// first such entry's line; a Resource List's entries need none.
func TestAChangeEntryWithoutChangeWarnsOncePerDocument(t *testing.T) {
	doc := docStart + `<rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
<url><loc>http://a/1</loc><lastmod>2024-01-02T00:00:00Z</lastmod></url>
<url><loc>http://a/2</loc><lastmod>2024-01-03T00:00:00Z</lastmod></url>
<url><loc>http://a/3</loc><rs:md change="deleted"/></url>
</urlset>`
	d, err := Parse(strings.NewReader(doc), testURL, Options{})
	require.NoError(t, err)
	require.Len(t, d.Entries, 3)
	assert.Equal(t, Change(""), d.Entries[0].MD.Change)
	require.Len(t, d.Warnings, 1)
	assert.Contains(t, d.Warnings[0].Msg, "change entry without a change attribute")
	assert.Contains(t, d.Warnings[0].Clause, "§12.1")
	assert.Equal(t, 2, d.Warnings[0].Count)
	assert.Equal(t, 4, d.Warnings[0].Line, "the first such entry's")

	list := strings.Replace(doc, `capability="changelist" from=`, `capability="resourcelist" at=`, 1)
	d, err = Parse(strings.NewReader(list), testURL, Options{})
	require.NoError(t, err)
	assert.Empty(t, d.Warnings)
}
