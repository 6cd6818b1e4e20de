package changes

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
)

// engineFixture is a Source written by hand, as a publisher writes it: its
// documents by path ("BASE" stands for the server's URL; a Capability List
// at /caps.xml, a Resource List at /rl.xml), the dump packages it serves
// (a manifest and members, zipped by the test), and what every reader of
// change documents must find in it.
type engineFixture struct {
	name     string
	docs     map[string]string
	packages map[string]enginePackage
	// caughtUp: the documents a poll reads once caught up (inspect's
	// Polled); position: where the follower stands after a fresh load and a
	// poll (RFC 3339); tree: URI (without BASE) → length of every resource.
	caughtUp []string
	position string
	newest   string // the newest change, as the follower dates it
	applied  int64  // changes the follower's first poll applies (each once)
	// warnings: inspect's plan's, BASE for the server's URL.
	warnings []string
	tree     map[string]int64
	// changes: inspect's count of the Change List entries read (at any
	// depth of indexes); dumpPackages: of the packages the Change Dumps
	// name.
	changes, dumpPackages int64
}

// enginePackage is a Change Dump package: its manifest and members by path.
type enginePackage struct {
	manifest string
	members  map[string]string
}

// rlAt is the Resource List every fixture names: a, b and c at
// 2024-01-01.
const rlAt = `<urlset ` + ns + `><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>BASE/a.txt</loc><lastmod>2023-06-01T00:00:00Z</lastmod><rs:md length="1"/></url>
<url><loc>BASE/b.txt</loc><lastmod>2023-06-01T00:00:00Z</lastmod><rs:md length="1"/></url>
<url><loc>BASE/c.txt</loc><lastmod>2023-06-01T00:00:00Z</lastmod><rs:md length="1"/></url></urlset>`

func engineCaps(lists, dumps []string) string {
	b := `<urlset ` + ns + `><rs:md capability="capabilitylist"/>
<url><loc>BASE/rl.xml</loc><rs:md capability="resourcelist"/></url>`
	for _, u := range lists {
		b += "\n<url><loc>BASE" + u + `</loc><rs:md capability="changelist"/></url>`
	}
	for _, u := range dumps {
		b += "\n<url><loc>BASE" + u + `</loc><rs:md capability="changedump"/></url>`
	}
	return b + "</urlset>"
}

var engineFixtures = []engineFixture{{
	// An index of indexes of Change Lists: /mid-old.xml and /cl0.xml are
	// closed (until) before the Resource Lists' time, so never read (they
	// answer 404 if they are); /cl1.xml closes at 01-02, before the
	// position the poll reaches (01-04), so a caught-up poll skips it.
	name: "nested indexes",
	docs: map[string]string{
		"/caps.xml": engineCaps([]string{"/top.xml"}, nil),
		"/rl.xml":   rlAt,
		"/top.xml": `<sitemapindex ` + ns + `><rs:md capability="changelist" from="2023-01-01T00:00:00Z"/>
<sitemap><loc>BASE/mid-old.xml</loc><rs:md capability="changelist" from="2023-01-01T00:00:00Z" until="2023-12-01T00:00:00Z"/></sitemap>
<sitemap><loc>BASE/mid.xml</loc><rs:md capability="changelist" from="2023-12-01T00:00:00Z"/></sitemap></sitemapindex>`,
		"/mid.xml": `<sitemapindex ` + ns + `><rs:md capability="changelist" from="2023-12-01T00:00:00Z"/>
<sitemap><loc>BASE/cl0.xml</loc><rs:md capability="changelist" from="2023-12-01T00:00:00Z" until="2023-12-15T00:00:00Z"/></sitemap>
<sitemap><loc>BASE/cl1.xml</loc><rs:md capability="changelist" from="2023-12-15T00:00:00Z" until="2024-01-02T00:00:00Z"/></sitemap>
<sitemap><loc>BASE/cl2.xml</loc><rs:md capability="changelist" from="2024-01-02T00:00:00Z"/></sitemap></sitemapindex>`,
		"/cl1.xml": `<urlset ` + ns + `><rs:md capability="changelist" from="2023-12-15T00:00:00Z" until="2024-01-02T00:00:00Z"/>
<url><loc>BASE/d.txt</loc><rs:md change="created" datetime="2023-12-20T00:00:00Z" length="4"/></url>
<url><loc>BASE/b.txt</loc><lastmod>2024-01-01T10:00:00Z</lastmod><rs:md change="updated" datetime="2024-01-01T10:00:00Z" length="2"/></url></urlset>`,
		"/cl2.xml": `<urlset ` + ns + `><rs:md capability="changelist" from="2024-01-02T00:00:00Z"/>
<url><loc>BASE/c.txt</loc><rs:md change="deleted" datetime="2024-01-03T00:00:00Z"/></url>
<url><loc>BASE/b.txt</loc><rs:md change="updated" datetime="2024-01-03T12:00:00Z" length="8"/></url>
<url><loc>BASE/e.txt</loc><lastmod>2024-01-04T00:00:00Z</lastmod><rs:md change="created" datetime="2024-01-04T00:00:00Z" length="3"/></url></urlset>`,
	},
	caughtUp: []string{"/top.xml", "/mid.xml", "/cl2.xml"},
	newest:   "2024-01-04T00:00:00Z",
	position: "2024-01-04T00:00:00Z",
	tree:     map[string]int64{"/a.txt": 1, "/b.txt": 8, "/d.txt": 4, "/e.txt": 3}, // b's last change wins
	applied:  5,
	changes:  5,
}, {
	// One Change List named twice, by the Capability List and by an index:
	// read twice in a poll, each change is applied once.
	name: "a list named twice",
	docs: map[string]string{
		"/caps.xml": engineCaps([]string{"/idx.xml", "/cl.xml"}, nil),
		"/rl.xml":   rlAt,
		"/idx.xml": `<sitemapindex ` + ns + `><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
<sitemap><loc>BASE/cl.xml</loc><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/></sitemap></sitemapindex>`,
		"/cl.xml": `<urlset ` + ns + `><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
<url><loc>BASE/b.txt</loc><rs:md change="updated" datetime="2024-01-02T00:00:00Z" length="2"/></url>
<url><loc>BASE/f.txt</loc><rs:md change="created" datetime="2024-01-03T00:00:00Z" length="1"/></url></urlset>`,
	},
	caughtUp: []string{"/cl.xml", "/idx.xml"},
	newest:   "2024-01-03T00:00:00Z",
	position: "2024-01-03T00:00:00Z",
	tree:     map[string]int64{"/a.txt": 1, "/b.txt": 2, "/c.txt": 1, "/f.txt": 1},
	applied:  2,
	changes:  4,
}, {
	// ResourceSync 1.0 (Z39.99-2014): no from, until or datetime; every
	// change dated by its lastmod; the last entry, with none, by its place.
	name: "1.0 dating",
	docs: map[string]string{
		"/caps.xml": engineCaps([]string{"/v10.xml"}, nil),
		"/rl.xml":   rlAt,
		"/v10.xml": `<urlset ` + ns + `><rs:md capability="changelist"/>
<url><loc>BASE/a.txt</loc><lastmod>2023-12-01T00:00:00Z</lastmod><rs:md change="updated" length="7"/></url>
<url><loc>BASE/b.txt</loc><lastmod>2024-01-02T00:00:00Z</lastmod><rs:md change="updated" length="2"/></url>
<url><loc>BASE/f.txt</loc><lastmod>2024-01-03T00:00:00Z</lastmod><rs:md change="created" length="1"/></url>
<url><loc>BASE/g.txt</loc><rs:md change="created" length="5"/></url></urlset>`,
	},
	caughtUp: []string{"/v10.xml"},
	newest:   "2024-01-03T00:00:00Z",
	position: "2024-01-03T00:00:00Z",
	tree:     map[string]int64{"/a.txt": 7, "/b.txt": 2, "/c.txt": 1, "/f.txt": 1, "/g.txt": 5},
	applied:  4,
	changes:  4,
	warnings: []string{`BASE/v10.xml has no from: whether it lists every change since the Resource Lists cannot be told`, `BASE/v10.xml has 1 entries without datetime or lastmod (dated by lastmod, as in 1.0): each is ordered by its place in the list`},
}, {
	// ResourceSync 1.1 (Z39.99-2017): changes dated by datetime; lastmod is
	// the resource's time. h.txt has a lastmod but no datetime: undated, it
	// takes its place (after 01-02), not its lastmod (2025).
	name: "1.1 dating",
	docs: map[string]string{
		"/caps.xml": engineCaps([]string{"/v11.xml"}, nil),
		"/rl.xml":   rlAt,
		"/v11.xml": `<urlset ` + ns + `><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
<url><loc>BASE/b.txt</loc><lastmod>2023-01-01T00:00:00Z</lastmod><rs:md change="updated" datetime="2024-01-02T00:00:00Z" length="2"/></url>
<url><loc>BASE/h.txt</loc><lastmod>2025-06-01T00:00:00Z</lastmod><rs:md change="created" length="6"/></url></urlset>`,
	},
	caughtUp: []string{"/v11.xml"},
	newest:   "2024-01-02T00:00:00Z",
	position: "2024-01-02T00:00:00Z",
	tree:     map[string]int64{"/a.txt": 1, "/b.txt": 2, "/c.txt": 1, "/h.txt": 6},
	applied:  2,
	changes:  2,
	warnings: []string{`BASE/v11.xml has 1 entries without datetime: each is ordered by its place in the list`},
}, {
	// The Capability List names a Change List that is gone (404) beside a
	// readable one: the readable one's changes are applied, but the
	// position holds at the Resource Lists' time until every document is
	// read.
	name: "removed list",
	docs: map[string]string{
		"/caps.xml": engineCaps([]string{"/gone.xml", "/cl.xml"}, nil),
		"/rl.xml":   rlAt,
		"/cl.xml": `<urlset ` + ns + `><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
<url><loc>BASE/b.txt</loc><rs:md change="updated" datetime="2024-01-02T00:00:00Z" length="2"/></url></urlset>`,
	},
	caughtUp: []string{"/gone.xml", "/cl.xml"},
	newest:   "2024-01-02T00:00:00Z",
	position: "2024-01-01T00:00:00Z",
	tree:     map[string]int64{"/a.txt": 1, "/b.txt": 2, "/c.txt": 1},
	applied:  1,
	changes:  1,
	warnings: []string{`BASE/gone.xml could not be read (fetch BASE/gone.xml: HTTP 404 Not Found): a mount retries it at each poll`},
}, {
	// A Change Dump of two packages: p0 closed before the Resource Lists'
	// time (a poll never reads it; inspect opens it for its report, 404),
	// p1 a ZIP whose manifest updates b and creates
	// n. Its changes move the position as a Change List's do.
	name: "change dump",
	docs: map[string]string{
		"/caps.xml": engineCaps(nil, []string{"/cd.xml"}),
		"/rl.xml":   rlAt,
		"/cd.xml": `<urlset ` + ns + `><rs:md capability="changedump" from="2023-01-01T00:00:00Z"/>
<url><loc>BASE/p0.zip</loc><rs:md type="application/zip" from="2023-01-01T00:00:00Z" until="2023-12-01T00:00:00Z"/></url>
<url><loc>BASE/p1.zip</loc><rs:md type="application/zip" from="2024-01-01T00:00:00Z" until="2024-01-02T00:00:00Z"/></url></urlset>`,
	},
	packages: map[string]enginePackage{"/p1.zip": {
		manifest: `<urlset ` + ns + `><rs:md capability="changedump-manifest" from="2024-01-01T00:00:00Z" until="2024-01-02T00:00:00Z"/>
<url><loc>BASE/b.txt</loc><lastmod>2024-01-01T12:00:00Z</lastmod><rs:md change="updated" datetime="2024-01-01T12:00:00Z" length="2" path="/res/b.txt"/></url>
<url><loc>BASE/n.txt</loc><lastmod>2024-01-01T13:00:00Z</lastmod><rs:md change="created" datetime="2024-01-01T13:00:00Z" path="/res/n.txt"/></url></urlset>`,
		members: map[string]string{"res/b.txt": "bb", "res/n.txt": "nnnn"},
	}},
	caughtUp:     []string{"/cd.xml"},
	newest:       "2024-01-01T13:00:00Z",
	position:     "2024-01-01T13:00:00Z",
	tree:         map[string]int64{"/a.txt": 1, "/b.txt": 2, "/c.txt": 1, "/n.txt": 4},
	applied:      2,
	changes:      0,
	dumpPackages: 2,
}, {
	// An index of Change Dumps: read as an index of Change Lists is, so a
	// caught-up poll reads the index and the Change Dump it names (which may
	// have gained packages since, TestChangeDumpIndexUnchangedChildGrows).
	name: "change dump index",
	docs: map[string]string{
		"/caps.xml": engineCaps(nil, []string{"/cdi.xml"}),
		"/rl.xml":   rlAt,
		"/cdi.xml": `<sitemapindex ` + ns + `><rs:md capability="changedump" from="2024-01-01T00:00:00Z"/>
<sitemap><loc>BASE/cd.xml</loc><rs:md capability="changedump" from="2024-01-01T00:00:00Z"/></sitemap></sitemapindex>`,
		"/cd.xml": `<urlset ` + ns + `><rs:md capability="changedump" from="2024-01-01T00:00:00Z"/>
<url><loc>BASE/p1.zip</loc><rs:md type="application/zip" from="2024-01-01T00:00:00Z" until="2024-01-02T00:00:00Z"/></url></urlset>`,
	},
	packages: map[string]enginePackage{"/p1.zip": {
		manifest: `<urlset ` + ns + `><rs:md capability="changedump-manifest" from="2024-01-01T00:00:00Z" until="2024-01-02T00:00:00Z"/>
<url><loc>BASE/n.txt</loc><lastmod>2024-01-01T13:00:00Z</lastmod><rs:md change="created" datetime="2024-01-01T13:00:00Z" path="/res/n.txt"/></url></urlset>`,
		members: map[string]string{"res/n.txt": "nnnn"},
	}},
	caughtUp:     []string{"/cdi.xml", "/cd.xml"},
	newest:       "2024-01-01T13:00:00Z",
	position:     "2024-01-01T13:00:00Z",
	tree:         map[string]int64{"/a.txt": 1, "/b.txt": 1, "/c.txt": 1, "/n.txt": 4},
	applied:      1,
	changes:      0,
	dumpPackages: 1,
}}

// engineSource serves a fixture: documents with an ETag (If-None-Match
// answers 304), packages by Range, any other .txt as a resource of 9
// bytes; it counts the requests for documents and packages by path.
type engineSource struct {
	mu   sync.Mutex
	base string
	fx   engineFixture
	zips map[string][]byte
	hits map[string]int
}

func startEngineSource(t *testing.T, fx engineFixture) *engineSource {
	t.Helper()
	s := &engineSource{fx: fx, zips: map[string][]byte{}, hits: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.base = srv.URL
	for p, pkg := range fx.packages {
		s.zips[p] = zipPackage(t, strings.ReplaceAll(pkg.manifest, "BASE", s.base), pkg.members)
	}
	return s
}

func zipPackage(t *testing.T, manifest string, members map[string]string) []byte {
	t.Helper()
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	write := func(name, body string) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	write("manifest.xml", manifest)
	for _, name := range slices.Sorted(maps.Keys(members)) {
		write(name, members[name])
	}
	require.NoError(t, zw.Close())
	return zb.Bytes()
}

func (s *engineSource) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	s.mu.Lock()
	if strings.HasSuffix(p, ".xml") || strings.HasSuffix(p, ".zip") {
		s.hits[p]++
	}
	zb, isZip := s.zips[p]
	body, isDoc := s.fx.docs[p]
	s.mu.Unlock()
	switch {
	case isZip:
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(zb))
	case isDoc:
		body = strings.ReplaceAll(body, "BASE", s.base)
		sum := sha256.Sum256([]byte(body))
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		w.Write([]byte(body))
	case strings.HasSuffix(p, ".txt"):
		w.Write([]byte("123456789"))
	default:
		http.NotFound(w, r)
	}
}

// takeHits returns the documents requested since the last call (without
// BASE, each once, sorted) and how often each was.
func (s *engineSource) takeHits() ([]string, map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hits
	s.hits = map[string]int{}
	return slices.Sorted(maps.Keys(h)), h
}

// treeOf is a catalog as URI (without base) → "length lastmod".
func treeOf(cat *catalog.Catalog, base string) map[string]string {
	out := map[string]string{}
	for _, u := range cat.URIs() {
		r := resourceAt(cat, u)
		out[strings.TrimPrefix(u, base)] = fmt.Sprintf("%d %s", r.Length, r.Lastmod.UTC().Format(time.RFC3339))
	}
	return out
}

func lengthsOf(tree map[string]string) map[string]int64 {
	out := map[string]int64{}
	for u, v := range tree {
		var n int64
		fmt.Sscan(v, &n)
		out[u] = n
	}
	return out
}

func without(docs []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(docs), func(d string) bool { return slices.Contains(drop, d) })
}

// Every fixture through the three readers of change documents: the
// follower (a fresh load, then a poll, then a caught-up poll), Truth (drift
// repair's and audit's) and inspect's follow plan. They read the same
// documents, stand at the same position and build the same tree.
func TestTheThreeReadersAgreeOnHandWrittenSources(t *testing.T) {
	for _, fx := range engineFixtures {
		t.Run(fx.name, func(t *testing.T) {
			s := startEngineSource(t, fx)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			opts := testOptions()
			opts.Partial = true

			// The follower: a fresh load, a poll (the catch-up), a poll.
			src, err := discoverSource(ctx, s.base+"/caps.xml", opts)
			require.NoError(t, err)
			s.takeHits() // discovery's
			cat := catalog.New(catalog.Options{Origin: src.Origin})
			_, err = src.Load(ctx, cat, nil)
			require.NoError(t, err)
			f := New(src, cat, FollowOptions{}, nil)
			_, loadHits := s.takeHits()
			pollErr := f.Poll(ctx)
			_, firstHits := s.takeHits()
			applied := f.Stats().Applied
			_ = f.Poll(ctx)
			caughtDocs, _ := s.takeHits()
			caughtDocs = without(caughtDocs, "/caps.xml") // the structure, re-read at each poll
			followTree := treeOf(cat, s.base)
			followPos := onlyPosition(f).Time.UTC().Format(time.RFC3339)
			t.Logf("follower: poll err %v; first poll read %v; caught-up poll read %v; position %s; tree %v; applied %d",
				pollErr, firstHits, caughtDocs, followPos, followTree, applied)

			// Truth, on a Source discovered for it (as audit does).
			tsrc, err := discoverSource(ctx, s.base+"/caps.xml", opts)
			require.NoError(t, err)
			s.takeHits()
			truth, truthErr := Truth(ctx, tsrc)
			truthDocs, truthHits := s.takeHits()
			var truthTree map[string]string
			if truth != nil {
				truthTree = treeOf(truth, s.base)
			}
			t.Logf("truth: err %v; read %v; tree %v", truthErr, truthHits, truthTree)

			// Inspect's follow plan.
			isrc, err := discoverSource(ctx, s.base+"/caps.xml", opts)
			require.NoError(t, err)
			s.takeHits()
			rep, err := Inspect(ctx, isrc)
			require.NoError(t, err)
			_, inspectHits := s.takeHits()
			require.Len(t, rep.Sets, 1)
			plan := rep.Sets[0].Follow
			var planPolled []string
			for _, u := range plan.Polled {
				planPolled = append(planPolled, strings.TrimPrefix(u, s.base))
			}
			slices.Sort(planPolled)
			planPos := ""
			if plan.Position != nil {
				planPos = plan.Position.UTC().Format(time.RFC3339)
			}
			newest := ""
			if nc := rep.Sets[0].NewestChange; nc != nil {
				newest = nc.UTC().Format(time.RFC3339)
			}
			t.Logf("inspect: read %v; polled %v; position %s; newest change %s; warnings %q", inspectHits, planPolled, planPos, newest, plan.Warnings)

			// What the spec asks of each.
			check := func(_ string, agrees func(t assert.TestingT) bool) { agrees(t) }
			want := slices.Sorted(slices.Values(fx.caughtUp))
			check("follower polled", func(t assert.TestingT) bool {
				return assert.Equal(t, want, caughtDocs, "the follower's caught-up poll")
			})
			check("inspect polled", func(t assert.TestingT) bool { return assert.Equal(t, want, planPolled, "inspect's polled documents") })
			check("follower position", func(t assert.TestingT) bool {
				return assert.Equal(t, fx.position, followPos, "the follower's position")
			})
			check("inspect position", func(t assert.TestingT) bool { return assert.Equal(t, fx.position, planPos, "inspect's position") })
			check("follower applied", func(t assert.TestingT) bool {
				return assert.Equal(t, fx.applied, applied, "changes the follower's first poll applied")
			})
			check("follower tree", func(t assert.TestingT) bool {
				return assert.Equal(t, fx.tree, lengthsOf(followTree), "the follower's tree")
			})
			check("truth tree", func(t assert.TestingT) bool {
				ok := assert.Equal(t, followTree, truthTree, "truth's tree is the follower's")
				if pollErr == nil {
					return assert.NoError(t, truthErr, "truth") && ok
				}
				// A document the follower could not read, Truth could not
				// either: it names it, beside the truth the others tell.
				return assert.ErrorContains(t, truthErr, "gone.xml") && ok
			})
			check("truth read", func(t assert.TestingT) bool {
				// Nothing subtracted: Truth is a load and a first poll, and
				// reads what either reads, as often as the one that reads it
				// more; a document both read (a Change Dump, its packages) is
				// read once, by the load, and walked from what it read.
				want := map[string]int{}
				for _, hits := range []map[string]int{loadHits, firstHits} {
					for d, n := range hits {
						want[d] = max(want[d], n)
					}
				}
				ok := assert.Equal(t, slices.Sorted(maps.Keys(want)), truthDocs, "truth reads what a load and the follower's first poll read")
				for d, n := range want {
					ok = assert.Equal(t, n, truthHits[d], "truth's requests for %s", d) && ok
				}
				return ok
			})
			check("inspect warnings", func(t assert.TestingT) bool {
				var want []string
				for _, w := range fx.warnings {
					want = append(want, strings.ReplaceAll(w, "BASE", s.base))
				}
				return assert.Equal(t, want, plan.Warnings, "inspect's warnings")
			})
			check("inspect reads each document once", func(t assert.TestingT) bool {
				ok := true
				for d, n := range inspectHits {
					if strings.HasSuffix(d, ".xml") {
						ok = assert.Equal(t, 1, n, "inspect's requests for %s", d) && ok
					}
				}
				for _, d := range fx.caughtUp {
					ok = assert.Contains(t, inspectHits, d, "inspect reads %s", d) && ok
				}
				return ok
			})
			check("inspect counts", func(t assert.TestingT) bool {
				return assert.Equal(t, fx.changes, rep.Sets[0].Changes, "inspect's changes, nested index children included") &&
					assert.Equal(t, fx.dumpPackages, rep.Sets[0].DumpPackages, "inspect's dump packages")
			})
			check("inspect newest", func(t assert.TestingT) bool {
				return assert.Equal(t, fx.newest, newest, "inspect's newest change, dated as the follower dates it")
			})
		})
	}
}

// A Change Dump index that answers 304 has children that may have grown:
// the follower reads them again, as it does an unchanged Change List
// index's, and applies the packages a Change Dump gained since.
func TestChangeDumpIndexUnchangedChildGrows(t *testing.T) {
	var fx engineFixture
	for _, f := range engineFixtures {
		if f.name == "change dump index" {
			fx = f
		}
	}
	require.NotEmpty(t, fx.docs)
	fx.docs = maps.Clone(fx.docs)
	s := startEngineSource(t, fx)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts := testOptions()
	opts.Partial = true
	src, err := discoverSource(ctx, s.base+"/caps.xml", opts)
	require.NoError(t, err)
	cat := catalog.New(catalog.Options{Origin: src.Origin})
	_, err = src.Load(ctx, cat, nil)
	require.NoError(t, err)
	f := New(src, cat, FollowOptions{}, nil)
	pollOnce(t, f)
	require.Equal(t, int64(4), lengthsOf(treeOf(cat, s.base))["/n.txt"], "the first package applied")

	// The Change Dump gains a package; its index is unchanged (304).
	p2 := zipPackage(t, strings.ReplaceAll(`<urlset `+ns+`><rs:md capability="changedump-manifest" from="2024-01-02T00:00:00Z" until="2024-01-03T00:00:00Z"/>
<url><loc>BASE/m.txt</loc><lastmod>2024-01-02T13:00:00Z</lastmod><rs:md change="created" datetime="2024-01-02T13:00:00Z" path="/res/m.txt"/></url></urlset>`,
		"BASE", s.base), map[string]string{"res/m.txt": "mmmmmm"})
	s.mu.Lock()
	s.zips["/p2.zip"] = p2
	s.fx.docs["/cd.xml"] = strings.Replace(s.fx.docs["/cd.xml"], "</urlset>",
		`<url><loc>BASE/p2.zip</loc><rs:md type="application/zip" from="2024-01-02T00:00:00Z" until="2024-01-03T00:00:00Z"/></url></urlset>`, 1)
	s.mu.Unlock()
	s.takeHits()
	pollOnce(t, f)
	_, hits := s.takeHits()
	assert.Equal(t, 1, hits["/cdi.xml"], "the index is asked (and answers 304)")
	assert.Equal(t, 1, hits["/cd.xml"], "the Change Dump it names is read again")
	assert.Equal(t, int64(6), lengthsOf(treeOf(cat, s.base))["/m.txt"], "the new package's change is applied")
	assert.Equal(t, "2024-01-02T13:00:00Z", onlyPosition(f).Time.UTC().Format(time.RFC3339))
}
