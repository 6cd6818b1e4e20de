package resourcesync

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// warningOf returns the document's warning whose message starts with msg.
func warningOf(t *testing.T, d *Document, msg string) Warning {
	t.Helper()
	for _, w := range d.Warnings {
		if strings.HasPrefix(w.Msg, msg) {
			return w
		}
	}
	t.Fatalf("no warning %q among %+v", msg, d.Warnings)
	return Warning{}
}

// Kanazawa Bunko's Change Lists give each entry one rs:md for its hash,
// length and type, and another for its change.
func TestTwoMDInAnEntryAreMerged(t *testing.T) {
	d, err := Parse(strings.NewReader(docStart+`<rs:md capability="changelist" from="2020-01-01T00:00:00Z"/>
<url><loc>http://a/1</loc><lastmod>2020-01-02T00:00:00Z</lastmod>
<rs:md hash="md5:1e0b3c6d6a4d7e6f1b2c3d4e5f607182" length="12" type="application/xml"/>
<rs:md change="created"/></url>
<url><loc>http://a/2</loc><rs:md change="updated" length="3"/><rs:md length="3" type="text/plain"/></url>
</urlset>`), testURL, Options{})
	require.NoError(t, err)
	require.Len(t, d.Entries, 2)
	md := d.Entries[0].MD
	assert.Equal(t, ChangeCreated, md.Change)
	assert.Equal(t, int64(12), md.Length)
	assert.Equal(t, "application/xml", md.Type)
	require.Len(t, md.Hashes, 1)
	assert.Equal(t, "md5", md.Hashes[0].Alg)
	assert.Equal(t, ChangeUpdated, d.Entries[1].MD.Change)
	assert.Equal(t, int64(3), d.Entries[1].MD.Length)
	assert.Equal(t, "text/plain", d.Entries[1].MD.Type)
	w := warningOf(t, d, "rs:md twice in one element")
	assert.Contains(t, w.Clause, "§7 Table 2")
	assert.Equal(t, "merged: each attribute either gives is kept", w.Reading)
	assert.Equal(t, 2, w.Count, "each element with two")
	for _, w := range d.Warnings {
		assert.NotContains(t, w.Msg, "different values", "equal values are no conflict")
	}
}

func TestAConflictingMDValueKeepsTheFirst(t *testing.T) {
	d, err := Parse(strings.NewReader(docStart+`<rs:md capability="resourcelist" at="2020-01-01T00:00:00Z"/>
<url><loc>http://a/1</loc><rs:md length="12" hash="md5:1e0b3c6d6a4d7e6f1b2c3d4e5f607182"/><rs:md length="13" hash="sha-256:aa"/></url>
</urlset>`), testURL, Options{})
	require.NoError(t, err)
	md := d.Entries[0].MD
	assert.Equal(t, int64(12), md.Length, "the first value is kept")
	assert.Len(t, md.Hashes, 2, "hashes of other algorithms are added")
	w := warningOf(t, d, "an attribute given different values by two rs:md of one element")
	assert.Contains(t, w.Msg, "length: 12 kept, 13 ignored")
	assert.Equal(t, "the first value kept", w.Reading)
	assert.Contains(t, w.Clause, "§7 Table 2")
}

// The CDIF discovery profile's example gives its Capability List two
// top-level rs:md.
func TestTwoRootMDAreMerged(t *testing.T) {
	d, err := Parse(strings.NewReader(docStart+`<rs:md capability="resourcelist"/>
<rs:md at="2024-03-01T00:00:00Z" completed="2024-03-01T00:05:00Z"/>
<url><loc>http://a/1</loc><rs:md length="1"/></url>
</urlset>`), testURL, Options{})
	require.NoError(t, err)
	assert.Equal(t, CapResourceList, d.Header.Capability())
	assert.Equal(t, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), d.Header.MD.At.UTC())
	assert.Equal(t, time.Date(2024, 3, 1, 0, 5, 0, 0, time.UTC), d.Header.MD.Completed.UTC())
	require.Len(t, d.Entries, 1)
	warningOf(t, d, "rs:md twice in one element")
}

// resync-client's dump fixture: completed earlier than at.
func TestCompletedBeforeAtIsAWarning(t *testing.T) {
	d, err := Parse(strings.NewReader(docStart+`<rs:md capability="resourcedump" at="2015-05-22T16:06:04Z" completed="2015-05-05T16:23:20Z"/>
<url><loc>http://a/p.zip</loc><rs:md length="1334"/></url>
</urlset>`), testURL, Options{})
	require.NoError(t, err)
	w := warningOf(t, d, "completed earlier than at")
	assert.Equal(t, "completed earlier than at: at 2015-05-22T16:06:04Z, completed 2015-05-05T16:23:20Z", w.Msg)
	assert.Contains(t, w.Clause, "Table 4")
	assert.Equal(t, time.Date(2015, 5, 22, 16, 6, 4, 0, time.UTC), d.Header.MD.At.UTC(), "at kept as given")

	d, err = Parse(strings.NewReader(docStart+`<rs:md capability="resourcedump" at="2015-05-05T00:00:00Z" completed="2015-05-22T00:00:00Z"/>
</urlset>`), testURL, Options{})
	require.NoError(t, err)
	assert.Empty(t, d.Warnings, "completed after at is as it should be")
}
