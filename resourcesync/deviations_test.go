package resourcesync

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each document departs from ResourceSync 1.1 (Z39.99-2017) in one way,
// written by hand from the standard's text; the parser reports that one
// deviation, at its line, with the clause the text states and how it was
// read.
func TestEachDeviationReportedWithItsClause(t *testing.T) {
	const (
		rl     = `<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>` + "\n"
		cl     = `<rs:md capability="changelist" from="2013-01-03T00:00:00Z"/>` + "\n"
		closed = `<rs:md capability="changelist" from="2013-01-03T00:00:00Z" until="2013-01-04T00:00:00Z"/>` + "\n"
	)
	cases := []struct {
		name, doc string
		line      int
		msg       string // the start of the message
		clause    string // a section the clause must cite
		reading   string
	}{
		{"no time zone", rl + `<url><loc>http://e.org/a</loc><lastmod>2013-01-02T13:00:00</lastmod></url>`,
			4, "datetime without time zone: 2013-01-02T13:00:00", "§7", "UTC assumed"},
		{"space for T", rl + `<url><loc>http://e.org/a</loc><lastmod>2013-01-02 13:00:00Z</lastmod></url>`,
			4, "datetime with a space instead of T", "§7", "read as T"},
		{"base64 hash", rl + `<url><loc>http://e.org/a</loc><rs:md hash="md5:FYSr3469yYAqwManQCwDtg=="/></url>`,
			4, "base64 hash value: md5:FYSr3469yYAqwManQCwDtg==", "§7 hash", "converted to hex"},
		{"hash of another form", rl + `<url><loc>http://e.org/a</loc><rs:md hash="md5:not-a-digest"/></url>`,
			4, "hash value neither hex nor base64", "§7 hash", "kept as published"},
		{"rs:md before loc", rl + `<url><rs:md length="3"/><loc>http://e.org/a</loc></url>`,
			4, "rs:md before <loc>", "§7", "read as if after <loc>"},
		{"unknown capability", `<rs:md capability="resourcelist-archive" at="2013-01-03T09:00:00Z"/>` + "\n" + `<url><loc>http://e.org/a</loc></url>`,
			4, "unknown capability: resourcelist-archive", "§7 capability", "kept as published"},
		{"unknown change", cl + `<url><loc>http://e.org/a</loc><rs:md change="moved" datetime="2013-01-03T01:00:00Z"/></url>`,
			4, "unknown change value: moved", "§12.1", "applied as an update"},
		{"header after entries", rl + `<url><loc>http://e.org/a</loc></url>` + "\n" + `<rs:ln rel="up" href="http://e.org/caps.xml"/>`,
			5, "root rs:md or rs:ln after the first entry", "§7", "ignored"},
		{"URL that cannot be parsed", rl + `<url><loc>http://e.org/%zz</loc></url>`,
			4, "URL that cannot be parsed", "§7", "kept as published"},
		{"non-standard capability name", `<rs:md capability="changelistindex" from="2013-01-03T00:00:00Z"/>` + "\n" + `<url><loc>http://e.org/a</loc><rs:md change="created"/></url>`,
			3, `non-standard capability name: "changelistindex" read as "changelist"`, "§7 capability", "read as the standard one"},
		{"userinfo", rl + `<url><loc>http://u:secret@e.org/a</loc></url>`,
			4, "URL with userinfo; host: e.org", "RFC 3986", "userinfo removed"},
		{"no at", `<rs:md capability="resourcelist"/>` + "\n" + `<url><loc>http://e.org/a</loc></url>`,
			3, "no at on the root rs:md", "Table 4", "dated by completed"},
		{"no at on a manifest", `<rs:md capability="resourcedump-manifest"/>` + "\n" + `<url><loc>http://e.org/a</loc><rs:md path="/a"/></url>`,
			3, "no at on the root rs:md", "§11.2", "dated by completed"},
		{"no from", `<rs:md capability="changelist"/>` + "\n" + `<url><loc>http://e.org/a</loc><rs:md change="created" datetime="2013-01-03T01:00:00Z"/></url>`,
			3, "no from on the root rs:md", "§12.1", "first dated change"},
		{"no from on an empty Change Dump", `<rs:md capability="changedump"/>`,
			3, "no from on the root rs:md", "§13.1", "first dated change"},
		{"out of time order", cl + `<url><loc>http://e.org/a</loc><rs:md change="created" datetime="2013-01-03T02:00:00Z"/></url>
<url><loc>http://e.org/b</loc><rs:md change="created" datetime="2013-01-03T01:00:00Z"/></url>`,
			5, "changes out of time order: http://e.org/b at 2013-01-03T01:00:00Z after 2013-01-03T02:00:00Z", "§12.1", "applied in time order"},
		{"out of lastmod order, in a list dated by lastmod", cl + `<url><loc>http://e.org/a</loc><lastmod>2013-01-03T02:00:00Z</lastmod><rs:md change="updated"/></url>
<url><loc>http://e.org/b</loc><lastmod>2013-01-03T01:00:00Z</lastmod><rs:md change="created"/></url>`,
			5, "changes out of time order: http://e.org/b at lastmod 2013-01-03T01:00:00Z after 2013-01-03T02:00:00Z", "§12.1", "applied in time order"},
		{"before from", cl + `<url><loc>http://e.org/a</loc><rs:md change="created" datetime="2013-01-02T23:00:00Z"/></url>`,
			4, "change dated outside the document's from and until: http://e.org/a at 2013-01-02T23:00:00Z", "§7 datetime", "ordered by its datetime"},
		{"after until", closed + `<url><loc>http://e.org/a</loc><rs:md change="created" datetime="2013-01-04T00:00:01Z"/></url>`,
			4, "change dated outside the document's from and until", "§7 datetime", "ordered by its datetime"},
		{"loc listed twice", rl + `<url><loc>http://e.org/a</loc></url>
<url><loc>http://e.org/b</loc></url>
<url><loc>http://e.org/a</loc></url>`,
			6, "<loc> listed twice: http://e.org/a", "§10.1", "the latest lastmod kept"},
		{"manifest entry without path", `<rs:md capability="resourcedump-manifest" at="2013-01-03T09:00:00Z"/>
<url><loc>http://e.org/a</loc><rs:md path="/a"/></url>
<url><loc>http://e.org/b</loc><rs:md length="3"/></url>`,
			5, "manifest entry without path: http://e.org/b", "§11.2", "read from its URI"},
		{"Change Dump Manifest entry without path", `<rs:md capability="changedump-manifest" from="2013-01-03T00:00:00Z"/>
<url><loc>http://e.org/a</loc><rs:md change="deleted" datetime="2013-01-03T01:00:00Z"/></url>
<url><loc>http://e.org/b</loc><rs:md change="updated" datetime="2013-01-03T02:00:00Z"/></url>`,
			5, "manifest entry without path: http://e.org/b", "§13.2", "read from its URI"},
		{"prefixed attribute", `<rs:md rs:capability="resourcelist" at="2013-01-03T09:00:00Z" xmlns:x="http://example.org/community" x:at="community"/>
<url><loc>http://e.org/a</loc></url>`,
			3, "attribute of the standard with a namespace prefix: rs:capability", "§7", "ignored"},
		{"attribute in the Atom namespace", `<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>
<rs:ln xmlns:atom="http://www.w3.org/2005/Atom" atom:rel="up" atom:href="http://e.org/caps.xml"/>
<url><loc>http://e.org/a</loc></url>`,
			4, "attribute of the standard with a namespace prefix: atom:rel", "§7", "ignored"},
		{"capability named twice", `<rs:md capability="capabilitylist"/>
<url><loc>http://e.org/rl1.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>http://e.org/cl.xml</loc><rs:md capability="changelist"/></url>
<url><loc>http://e.org/rl2.xml</loc><rs:md capability="resourcelist"/></url>`,
			6, "capability named twice in a Capability List: resourcelist", "§9", "every document named is read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := Parse(strings.NewReader(docStart+c.doc+"\n</urlset>"), testURL, Options{})
			require.NoError(t, err)
			require.Len(t, d.Warnings, 1, "one deviation: %v", d.Warnings)
			w := d.Warnings[0]
			assert.Equal(t, testURL, w.URL)
			assert.Equal(t, c.line, w.Line)
			assert.True(t, strings.HasPrefix(w.Msg, c.msg), "message %q, want %q...", w.Msg, c.msg)
			assert.True(t, strings.HasPrefix(w.Clause, "ResourceSync 1.1 §") && strings.Contains(w.Clause, c.clause),
				"clause %q, want it to cite %s", w.Clause, c.clause)
			assert.Contains(t, w.Reading, c.reading)
		})
	}
}

// A Change List may list a resource once per change (§12.1), and a change
// may have no datetime (§7: it "may" have one; 1.1 Example 19's last entry
// has none): neither is a deviation.
func TestChangeListRepeatsAndUndatedEntriesAreNoDeviation(t *testing.T) {
	doc := docStart + `<rs:md capability="changelist" from="2013-01-03T00:00:00Z"/>
<url><loc>http://e.org/a</loc><rs:md change="created" datetime="2013-01-03T01:00:00Z"/></url>
<url><loc>http://e.org/a</loc><rs:md change="updated" datetime="2013-01-03T02:00:00Z"/></url>
<url><loc>http://e.org/a</loc><rs:md change="updated"/></url>
</urlset>`
	d, err := Parse(strings.NewReader(doc), testURL, Options{})
	require.NoError(t, err)
	assert.Empty(t, d.Warnings)
}

// The standard's own examples conform: none of them is reported, but
// Example 27, whose hash values are base64url (one of them not even of
// SHA-256's size), as the standard printed them.
func TestSpecExamplesHaveNoDeviation(t *testing.T) {
	files, err := filepath.Glob("testdata/conformance/spec-1.1-examples/*.xml")
	require.NoError(t, err)
	require.Greater(t, len(files), 25)
	for _, f := range files {
		body, err := os.ReadFile(f)
		require.NoError(t, err)
		d, err := Parse(strings.NewReader(string(body)), "http://example.com/"+filepath.Base(f), Options{})
		require.NoError(t, err, f)
		if filepath.Base(f) == "resourcesync_ex_27.xml" {
			assert.Len(t, d.Warnings, 2, f)
			continue
		}
		assert.Empty(t, d.Warnings, f)
	}
}

// A loc repeated far apart is found: the set of hashes grows past its
// first size (1,024) and keeps what it held.
func TestLocRepeatedFarApart(t *testing.T) {
	var b strings.Builder
	b.WriteString(docStart + `<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>` + "\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "<url><loc>http://e.org/r%d</loc></url>\n", i)
	}
	b.WriteString("<url><loc>http://e.org/r7</loc></url>\n</urlset>")
	d, err := Parse(strings.NewReader(b.String()), testURL, Options{})
	require.NoError(t, err)
	require.Len(t, d.Warnings, 1)
	assert.Equal(t, "<loc> listed twice: http://e.org/r7", d.Warnings[0].Msg)
	assert.Equal(t, 5004, d.Warnings[0].Line)
}

// Each kind is described once, at its first place, and counted: a
// publisher sees how many entries to fix.
func TestDeviationsCounted(t *testing.T) {
	doc := docStart + `<rs:md capability="changelist" from="2013-01-03T00:00:00Z"/>
<url><loc>http://e.org/a</loc><lastmod>2013-01-03T03:00:00</lastmod><rs:md change="updated"/></url>
<url><loc>http://e.org/b</loc><lastmod>2013-01-03T02:00:00</lastmod><rs:md change="updated"/></url>
<url><loc>http://e.org/c</loc><lastmod>2013-01-03T01:00:00</lastmod><rs:md change="updated"/></url>
</urlset>`
	d, err := Parse(strings.NewReader(doc), testURL, Options{})
	require.NoError(t, err)
	require.Len(t, d.Warnings, 2, "%v", d.Warnings)
	assert.Equal(t, "datetime without time zone: 2013-01-03T03:00:00", d.Warnings[0].Msg)
	assert.Equal(t, 4, d.Warnings[0].Line)
	assert.Equal(t, 3, d.Warnings[0].Count)
	assert.Equal(t, "changes out of time order: http://e.org/b at lastmod 2013-01-03T02:00:00Z after 2013-01-03T03:00:00Z", d.Warnings[1].Msg)
	assert.Equal(t, 5, d.Warnings[1].Line)
	assert.Equal(t, 2, d.Warnings[1].Count)
	assert.Contains(t, d.Warnings[0].String(), ":4: datetime without time zone: 2013-01-03T03:00:00 (3 in the document) [ResourceSync 1.1 §7")

	var b strings.Builder
	b.WriteString(docStart + `<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>` + "\n")
	for _, loc := range []string{"a", "b", "a", "c", "b", "a"} {
		fmt.Fprintf(&b, "<url><loc>http://e.org/%s</loc></url>\n", loc)
	}
	b.WriteString("</urlset>")
	d, err = Parse(strings.NewReader(b.String()), testURL, Options{})
	require.NoError(t, err)
	require.Len(t, d.Warnings, 1)
	assert.Equal(t, "<loc> listed twice: http://e.org/a", d.Warnings[0].Msg)
	assert.Equal(t, 3, d.Warnings[0].Count, "three entries repeat one before them")
}
