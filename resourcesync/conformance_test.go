package resourcesync

import (
	"archive/zip"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// conformanceDir holds the standard's example documents (see its README).
const conformanceDir = "testdata/conformance"

type conformanceCase struct {
	file     string
	root     RootKind
	cap      Capability
	entries  int
	firstLoc string
}

// conformanceCases covers every XML example of both specifications; the
// expectations were taken from the files' text, not from this parser.
var conformanceCases = []conformanceCase{
	{"spec-1.1-examples/resourcesync_ex_1.xml", URLSet, "resourcelist", 2, "http://example.com/res1"},
	{"spec-1.1-examples/resourcesync_ex_12.xml", URLSet, "description", 3, "http://example.com/capabilitylist1.xml"},
	{"spec-1.1-examples/resourcesync_ex_13.xml", URLSet, "capabilitylist", 4, "http://example.com/dataset1/resourcelist.xml"},
	{"spec-1.1-examples/resourcesync_ex_14.xml", URLSet, "resourcelist", 2, "http://example.com/res1"},
	{"spec-1.1-examples/resourcesync_ex_15.xml", SitemapIndex, "resourcelist", 3, "http://example.com/resourcelist1.xml"},
	{"spec-1.1-examples/resourcesync_ex_16.xml", URLSet, "resourcelist", 2, "http://example.com/res3"},
	{"spec-1.1-examples/resourcesync_ex_17.xml", URLSet, "resourcedump", 3, "http://example.com/resourcedump-part1.zip"},
	{"spec-1.1-examples/resourcesync_ex_18.xml", URLSet, "resourcedump-manifest", 2, "http://example.com/res1"},
	{"spec-1.1-examples/resourcesync_ex_19.xml", URLSet, "changelist", 4, "http://example.com/res1.html"},
	{"spec-1.1-examples/resourcesync_ex_2.xml", URLSet, "resourcelist", 2, "http://example.com/res1"},
	{"spec-1.1-examples/resourcesync_ex_20.xml", SitemapIndex, "changelist", 3, "http://example.com/20130101-changelist.xml"},
	{"spec-1.1-examples/resourcesync_ex_21.xml", URLSet, "changelist", 4, "http://example.com/res7.html"},
	{"spec-1.1-examples/resourcesync_ex_22.xml", URLSet, "changedump", 3, "http://example.com/20130101-changedump.zip"},
	{"spec-1.1-examples/resourcesync_ex_23.xml", URLSet, "changedump-manifest", 4, "http://example.com/res7.html"},
	{"spec-1.1-examples/resourcesync_ex_24.xml", URLSet, "changelist", 1, "http://example.com/res1"},
	{"spec-1.1-examples/resourcesync_ex_25.xml", URLSet, "changelist", 1, "http://example.com/res1"},
	{"spec-1.1-examples/resourcesync_ex_26.xml", URLSet, "changelist", 1, "http://example.com/res1.html"},
	{"spec-1.1-examples/resourcesync_ex_27.xml", URLSet, "changelist", 2, "http://example.com/res4"},
	{"spec-1.1-examples/resourcesync_ex_28.xml", URLSet, "changelist", 2, "http://example.com/res2.pdf"},
	{"spec-1.1-examples/resourcesync_ex_29.xml", URLSet, "changelist", 1, "http://example.com/res1"},
	{"spec-1.1-examples/resourcesync_ex_3.xml", URLSet, "changelist", 3, "http://example.com/res1.pdf"},
	{"spec-1.1-examples/resourcesync_ex_30.xml", URLSet, "changelist", 1, "http://example.com/res1"},
	{"spec-1.1-examples/resourcesync_ex_31.xml", URLSet, "changelist", 1, "http://original.example.com/res1.html"},
	{"spec-1.1-examples/resourcesync_ex_32.xml", URLSet, "changelist", 1, "http://aggregator1.example.com/res1.html"},
	{"spec-1.1-examples/resourcesync_ex_33.xml", URLSet, "changelist", 1, "http://aggregator2.example.com/res1.html"},
	{"spec-1.1-examples/resourcesync_ex_4.xml", URLSet, "resourcedump", 1, "http://example.com/resourcedump.zip"},
	{"spec-1.1-examples/resourcesync_ex_5.xml", URLSet, "resourcedump-manifest", 2, "http://example.com/res1"},
	{"spec-1.1-examples/resourcesync_ex_6.xml", URLSet, "capabilitylist", 3, "http://example.com/dataset1/resourcelist.xml"},
	{"spec-1.1-examples/resourcesync_ex_7.xml", URLSet, "description", 1, "http://example.com/dataset1/capabilitylist.xml"},
	{"spec-1.1-examples/resourcesync_ex_8.xml", SitemapIndex, "resourcelist", 2, "http://example.com/resourcelist-part1.xml"},
	{"spec-1.0-examples/archives_ex_2_1.xml", URLSet, "capabilitylist", 8, "http://example.com/dataset1/resourcelist.xml"},
	{"spec-1.0-examples/archives_ex_2_2.xml", URLSet, "changelist", 2, "http://example.com/res2.pdf"},
	{"spec-1.0-examples/archives_ex_3_1.xml", URLSet, "resourcelist-archive", 3, "http://example.com/resourcelist1.xml"},
	{"spec-1.0-examples/archives_ex_3_2.xml", SitemapIndex, "resourcelist-archive", 2, "http://example.com/resourcelistarchive00001.xml"},
	{"spec-1.0-examples/archives_ex_4_1.xml", URLSet, "resourcedump-archive", 2, "http://example.com/resourcedump1.xml"},
	{"spec-1.0-examples/archives_ex_5_1.xml", URLSet, "changelist-archive", 3, "http://example.com/changelist1.xml"},
	{"spec-1.0-examples/archives_ex_6_1.xml", URLSet, "changedump-archive", 2, "http://example.com/changedump-w1.xml"},
	{"spec-1.0-examples/resourcesync_ex_1.xml", URLSet, "resourcelist", 2, "http://example.com/res1"},
	{"spec-1.0-examples/resourcesync_ex_12.xml", URLSet, "description", 3, "http://example.com/capabilitylist1.xml"},
	{"spec-1.0-examples/resourcesync_ex_13.xml", URLSet, "capabilitylist", 4, "http://example.com/dataset1/resourcelist.xml"},
	{"spec-1.0-examples/resourcesync_ex_14.xml", URLSet, "resourcelist", 2, "http://example.com/res1"},
	{"spec-1.0-examples/resourcesync_ex_15.xml", SitemapIndex, "resourcelist", 3, "http://example.com/resourcelist1.xml"},
	{"spec-1.0-examples/resourcesync_ex_16.xml", URLSet, "resourcelist", 2, "http://example.com/res3"},
	{"spec-1.0-examples/resourcesync_ex_17.xml", URLSet, "resourcedump", 3, "http://example.com/resourcedump-part1.zip"},
	{"spec-1.0-examples/resourcesync_ex_18.xml", URLSet, "resourcedump-manifest", 2, "http://example.com/res1"},
	{"spec-1.0-examples/resourcesync_ex_19.xml", URLSet, "changelist", 4, "http://example.com/res1.html"},
	{"spec-1.0-examples/resourcesync_ex_2.xml", URLSet, "resourcelist", 2, "http://example.com/res1"},
	{"spec-1.0-examples/resourcesync_ex_20.xml", SitemapIndex, "changelist", 3, "http://example.com/20130101-changelist.xml"},
	{"spec-1.0-examples/resourcesync_ex_21.xml", URLSet, "changelist", 4, "http://example.com/res7.html"},
	{"spec-1.0-examples/resourcesync_ex_22.xml", URLSet, "changedump", 3, "http://example.com/20130101-changedump.zip"},
	{"spec-1.0-examples/resourcesync_ex_23.xml", URLSet, "changedump-manifest", 4, "http://example.com/res7.html"},
	{"spec-1.0-examples/resourcesync_ex_24.xml", URLSet, "changelist", 1, "http://example.com/res1"},
	{"spec-1.0-examples/resourcesync_ex_25.xml", URLSet, "changelist", 1, "http://example.com/res1"},
	{"spec-1.0-examples/resourcesync_ex_26.xml", URLSet, "changelist", 1, "http://example.com/res1.html"},
	{"spec-1.0-examples/resourcesync_ex_27.xml", URLSet, "changelist", 2, "http://example.com/res4"},
	{"spec-1.0-examples/resourcesync_ex_28.xml", URLSet, "changelist", 2, "http://example.com/res2.pdf"},
	{"spec-1.0-examples/resourcesync_ex_29.xml", URLSet, "changelist", 1, "http://example.com/res1"},
	{"spec-1.0-examples/resourcesync_ex_3.xml", URLSet, "changelist", 2, "http://example.com/res2.pdf"},
	{"spec-1.0-examples/resourcesync_ex_30.xml", URLSet, "changelist", 1, "http://example.com/res1"},
	{"spec-1.0-examples/resourcesync_ex_31.xml", URLSet, "changelist", 1, "http://original.example.com/res1.html"},
	{"spec-1.0-examples/resourcesync_ex_32.xml", URLSet, "changelist", 1, "http://aggregator1.example.com/res1.html"},
	{"spec-1.0-examples/resourcesync_ex_33.xml", URLSet, "changelist", 1, "http://aggregator2.example.com/res1.html"},
	{"spec-1.0-examples/resourcesync_ex_4.xml", URLSet, "resourcedump", 1, "http://example.com/resourcedump.zip"},
	{"spec-1.0-examples/resourcesync_ex_5.xml", URLSet, "resourcedump-manifest", 2, "http://example.com/res1"},
	{"spec-1.0-examples/resourcesync_ex_6.xml", URLSet, "capabilitylist", 3, "http://example.com/dataset1/resourcelist.xml"},
	{"spec-1.0-examples/resourcesync_ex_7.xml", URLSet, "description", 1, "http://example.com/dataset1/capabilitylist.xml"},
	{"spec-1.0-examples/resourcesync_ex_8.xml", SitemapIndex, "resourcelist", 2, "http://example.com/resourcelist-part1.xml"},
}

func parseFile(t *testing.T, rel string) *Document {
	t.Helper()
	f, err := os.Open(filepath.Join(conformanceDir, rel))
	require.NoError(t, err)
	defer f.Close()
	doc, err := Parse(f, "http://example.com/"+filepath.Base(rel), Options{})
	require.NoError(t, err, rel)
	return doc
}

func TestConformanceExamplesAllListed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(conformanceDir, "spec-1.*-examples", "*.xml"))
	require.NoError(t, err)
	require.Len(t, files, len(conformanceCases), "every example file must be in the table")
	listed := map[string]bool{}
	for _, c := range conformanceCases {
		listed[c.file] = true
	}
	for _, f := range files {
		rel, err := filepath.Rel(conformanceDir, f)
		require.NoError(t, err)
		assert.True(t, listed[rel], "%s not in the table", rel)
	}
}

func TestConformanceExamples(t *testing.T) {
	for _, c := range conformanceCases {
		t.Run(c.file, func(t *testing.T) {
			doc := parseFile(t, c.file)
			assert.Equal(t, c.root, doc.Header.Root)
			assert.Equal(t, c.cap, doc.Header.Capability())
			require.Len(t, doc.Entries, c.entries)
			assert.Equal(t, c.firstLoc, doc.Entries[0].Loc)
			assert.Equal(t, "http://example.com/"+filepath.Base(c.file), doc.Header.URL)
			if check, ok := conformanceChecks[c.file]; ok {
				check(t, doc)
			}
		})
	}
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// base64URLHex is the hex of a base64url value, computed independently of
// the parser.
func base64URLHex(t *testing.T, s string) string {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	require.NoError(t, err)
	return hex.EncodeToString(raw)
}

const (
	md5Res1 = "1584abdf8ebdc9802ac0c6a7402c03b6"
	md5Res2 = "1e0d5cb8ef6ba40c99b14c0237be735e"
	sha256R = "854f61290e2e197a11bc91063afce22e43f8ccc655237050ace766adc68dc784"
)

// conformanceChecks asserts field values of selected examples, including
// every quirk the conformance README lists.
var conformanceChecks = map[string]func(t *testing.T, d *Document){
	"spec-1.1-examples/resourcesync_ex_2.xml": func(t *testing.T, d *Document) {
		assert.Equal(t, utc("2013-01-03T09:00:00Z"), d.Header.MD.At)
		assert.Equal(t, utc("2013-01-02T13:00:00Z"), d.Entries[0].Lastmod)
		assert.Equal(t, []Hash{{"md5", md5Res1}}, d.Entries[0].MD.Hashes)
		assert.Equal(t, NoLength, d.Entries[0].MD.Length)
		assert.Equal(t, []Link{{Rel: "duplicate", Href: "http://mirror.example.com/res2", Length: NoLength}}, d.Entries[1].Links)
	},
	"spec-1.1-examples/resourcesync_ex_3.xml": func(t *testing.T, d *Document) {
		assert.Equal(t, utc("2013-01-02T00:00:00Z"), d.Header.MD.From)
		assert.Equal(t, utc("2013-01-03T00:00:00Z"), d.Header.MD.Until)
		assert.Equal(t, ChangeDeleted, d.Entries[1].MD.Change)
		assert.Equal(t, utc("2013-01-02T14:00:00Z"), d.Entries[1].MD.Datetime)
		assert.True(t, d.Entries[1].Lastmod.IsZero())
		assert.Equal(t, utc("2011-01-01T00:00:00Z"), d.Entries[2].Lastmod)
	},
	"spec-1.1-examples/resourcesync_ex_7.xml": func(t *testing.T, d *Document) {
		assert.Equal(t, []Link{{Rel: "describedby", Href: "http://example.com/info-about-source.xml", Length: NoLength}}, d.Header.Links)
		assert.Equal(t, CapCapabilityList, d.Entries[0].MD.Capability)
		assert.Equal(t, "http://example.com/info_about_set1_of_resources.xml", d.Entries[0].Links[0].Href)
	},
	"spec-1.1-examples/resourcesync_ex_14.xml": func(t *testing.T, d *Document) {
		assert.Equal(t, utc("2013-01-03T09:01:00Z"), d.Header.MD.Completed)
		assert.Equal(t, "up", d.Header.Links[0].Rel)
		assert.Equal(t, int64(8876), d.Entries[0].MD.Length)
		assert.Equal(t, "text/html", d.Entries[0].MD.Type)
		// the hash attribute is split across lines
		assert.Equal(t, []Hash{{"md5", md5Res2}, {"sha-256", sha256R}}, d.Entries[1].MD.Hashes)
		assert.Equal(t, int64(14599), d.Entries[1].MD.Length)
		assert.Empty(t, d.Warnings)
	},
	"spec-1.0-examples/resourcesync_ex_14.xml": func(t *testing.T, d *Document) {
		assert.Equal(t, []Hash{{"md5", md5Res2}, {"sha-256", sha256R}}, d.Entries[1].MD.Hashes)
	},
	"spec-1.1-examples/resourcesync_ex_15.xml": func(t *testing.T, d *Document) {
		assert.Equal(t, utc("2013-01-03T09:10:00Z"), d.Header.MD.Completed)
		assert.Equal(t, utc("2013-01-03T09:03:00Z"), d.Entries[1].MD.At)
	},
	"spec-1.1-examples/resourcesync_ex_17.xml": func(t *testing.T, d *Document) {
		e := d.Entries[0]
		assert.Equal(t, int64(4765), e.MD.Length)
		assert.Equal(t, "application/zip", e.MD.Type)
		assert.Equal(t, utc("2013-01-03T09:02:00Z"), e.MD.Completed)
		assert.Equal(t, []Link{{Rel: "contents", Href: "http://example.com/resourcedump_manifest-part1.xml",
			Type: "application/xml", Length: NoLength}}, e.Links)
	},
	"spec-1.1-examples/resourcesync_ex_18.xml": func(t *testing.T, d *Document) {
		assert.Equal(t, "/resources/res1", d.Entries[0].MD.Path)
		assert.Equal(t, "/resources/res2", d.Entries[1].MD.Path)
		assert.Equal(t, []Hash{{"md5", md5Res2}, {"sha-256", sha256R}}, d.Entries[1].MD.Hashes)
	},
	"spec-1.0-examples/resourcesync_ex_18.xml": func(t *testing.T, d *Document) {
		assert.Equal(t, []Hash{{"md5", md5Res2}, {"sha-256", sha256R}}, d.Entries[1].MD.Hashes)
	},
	"spec-1.1-examples/resourcesync_ex_19.xml": func(t *testing.T, d *Document) {
		assert.Equal(t, utc("2000-01-01T01:01:00Z"), d.Entries[0].Lastmod)
		assert.Equal(t, ChangeCreated, d.Entries[0].MD.Change)
		assert.Equal(t, utc("2013-01-03T11:00:00Z"), d.Entries[0].MD.Datetime)
		// the last entry has neither datetime nor lastmod
		last := d.Entries[3]
		assert.Equal(t, "http://example.com/res2.pdf", last.Loc)
		assert.Equal(t, ChangeUpdated, last.MD.Change)
		assert.True(t, last.Lastmod.IsZero())
		assert.True(t, last.MD.Datetime.IsZero())
	},
	"spec-1.1-examples/resourcesync_ex_22.xml": func(t *testing.T, d *Document) {
		e := d.Entries[2]
		assert.Equal(t, int64(8124), e.MD.Length)
		assert.Equal(t, utc("2013-01-03T23:59:59Z"), e.Lastmod)
		assert.Equal(t, utc("2013-01-04T00:00:00Z"), e.MD.Until)
	},
	"spec-1.1-examples/resourcesync_ex_23.xml": func(t *testing.T, d *Document) {
		assert.Equal(t, "/changes/res7-v2.html", d.Entries[3].MD.Path)
		assert.Equal(t, ChangeDeleted, d.Entries[2].MD.Change)
	},
	"spec-1.1-examples/resourcesync_ex_24.xml": func(t *testing.T, d *Document) {
		ls := d.Entries[0].Links
		require.Len(t, ls, 3)
		assert.Equal(t, []int{1, 2, 3}, []int{ls[0].Pri, ls[1].Pri, ls[2].Pri})
		assert.Equal(t, "gsiftp://gridftp.example.com/res1", ls[2].Href)
		assert.Equal(t, utc("2013-01-03T18:00:00Z"), ls[1].Modified)
	},
	"spec-1.1-examples/resourcesync_ex_27.xml": func(t *testing.T, d *Document) {
		big := d.Entries[1]
		assert.Equal(t, int64(9788456778), big.MD.Length)
		// base64url of 32 bytes: converted to hex, with a warning
		assert.Equal(t, []Hash{{"sha-256", base64URLHex(t, "f4OxZX_x_FO5LcGBSKHWXfwtSx-j1ncoSt3SABJtkGk")}}, big.MD.Hashes)
		// 44 characters: not base64 of 32 bytes, kept as published
		assert.Equal(t, []Hash{{"sha-256", "h986gT_t_87HTkjHYE76G558hY-jdfgy76t55sadJUYT"}}, big.Links[0].Hashes)
		assert.Equal(t, "http://www.openarchives.org/rs/terms/patch", big.Links[0].Rel)
		assert.Equal(t, "http://example.com/res5-diff", big.Links[0].Href)
		assert.Equal(t, int64(4533), big.Links[0].Length)
		require.Len(t, d.Warnings, 2)
		assert.Contains(t, d.Warnings[0].Msg, "base64")
		assert.Equal(t, 10, d.Warnings[0].Line)
	},
	"spec-1.1-examples/resourcesync_ex_28.xml": func(t *testing.T, d *Document) {
		l := d.Entries[1].Links[0]
		assert.Equal(t, Link{Rel: "describes", Href: "http://example.com/res2.pdf", Hashes: []Hash{{"md5", md5Res1}},
			Length: 8876, Type: "application/pdf"}, l)
		assert.Equal(t, utc("2013-01-03T19:00:00Z"), d.Entries[1].MD.Datetime)
	},
	"spec-1.0-examples/archives_ex_2_1.xml": func(t *testing.T, d *Document) {
		assert.Equal(t, Capability("changedump-archive"), d.Entries[7].MD.Capability)
	},
	"spec-1.0-examples/archives_ex_3_2.xml": func(t *testing.T, d *Document) {
		assert.False(t, d.Header.Capability().Known(), "unknown capability kept")
		require.Len(t, d.Warnings, 1)
		assert.Contains(t, d.Warnings[0].Msg, "unknown capability: resourcelist-archive")
	},
}

func TestResourceDumpPackageManifest(t *testing.T) {
	zr, err := zip.OpenReader(filepath.Join(conformanceDir, "sample-resourcedump-package.zip"))
	require.NoError(t, err)
	defer zr.Close()
	f, err := zr.Open("manifest.xml")
	require.NoError(t, err)
	defer f.Close()
	doc, err := Parse(f, "http://example.com/resourcedump.zip", Options{})
	require.NoError(t, err)
	assert.Equal(t, CapResourceDumpManifest, doc.Header.Capability())
	assert.Equal(t, utc("2015-05-05T16:19:25Z"), doc.Header.MD.At)
	require.Len(t, doc.Entries, 2)
	assert.Equal(t, "http://example.com/res2", doc.Entries[1].Loc)
	assert.Equal(t, "/resources/res2", doc.Entries[1].MD.Path)
	assert.Equal(t, []Hash{{"md5", "6205d276e0c120eb4bac47c14a8297d8"}}, doc.Entries[1].MD.Hashes)
	assert.Equal(t, utc("2015-05-22T16:16:04Z"), doc.Entries[1].Lastmod)
}
