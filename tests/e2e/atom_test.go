package e2e

import (
	"bytes"
	"fmt"
	iofs "io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/atomsource"
)

// The Atom-PMH tests mount tests/atomsource, a producer written by hand
// from the specification's examples, with --poll-interval 1s.

const atomPoll = time.Second

// atomModel is what the test published: each representation's bytes by URL.
type atomModel struct {
	src    *atomsource.Source
	bodies map[string][]byte
}

func startAtom(t *testing.T, cfg atomsource.Config) *atomModel {
	t.Helper()
	src := atomsource.Start(cfg)
	t.Cleanup(src.Close)
	return &atomModel{src: src, bodies: map[string][]byte{}}
}

func rep(typ, ext, body string) atomsource.Rep {
	return atomsource.Rep{Type: typ, Ext: ext, Body: []byte(body)}
}

// atomRecord is a record's representations, with bodies that differ by record
// and version, of different lengths.
func atomRecord(name string, version int, exts ...string) []atomsource.Rep {
	var out []atomsource.Rep
	for _, ext := range exts {
		typ := map[string]string{"xml": "application/xml", "txt": "text/plain", "json": "application/json"}[ext]
		out = append(out, rep(typ, ext, fmt.Sprintf("%s v%d as %s%s\n", name, version, ext, strings.Repeat("!", version))))
	}
	return out
}

func (m *atomModel) create(t *testing.T, name string, exts ...string) {
	t.Helper()
	reps := atomRecord(name, 1, exts...)
	require.NoError(t, m.src.Create(name, "Record "+name, reps...))
	m.note(name, reps)
}

func (m *atomModel) update(t *testing.T, name string, version int, exts ...string) {
	t.Helper()
	reps := atomRecord(name, version, exts...)
	require.NoError(t, m.src.Update(name, fmt.Sprintf("Record %s, version %d", name, version), reps...))
	m.note(name, reps)
}

func (m *atomModel) note(name string, reps []atomsource.Rep) {
	for _, r := range reps {
		m.bodies[m.src.RepURL(name, r.Ext)] = r.Body
	}
}

// atomTree reads the mount as a user would: for each regular file, its
// user.atompmh.id, type and uri xattrs, as the producer's Pool writes
// them (per atom:id, "TYPE URI", sorted). Errors are returned, not fatal:
// a walk may meet a change half-way.
func atomTree(dir string) (map[string][]string, error) {
	out := map[string][]string{}
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		var v [3]string
		for i, name := range []string{"id", "type", "uri"} {
			buf := make([]byte, 4096)
			n, err := syscall.Getxattr(p, "user.atompmh."+name, buf)
			if err != nil {
				return fmt.Errorf("getxattr %s user.atompmh.%s: %w", p, name, err)
			}
			v[i] = string(buf[:n])
		}
		out[v[0]] = append(out[v[0]], v[1]+" "+v[2])
		return nil
	})
	for _, v := range out {
		sort.Strings(v)
	}
	return out, err
}

// waitPool waits for the mount to equal the pool (failing only after two
// polls since the call: converges).
func (m *atomModel) waitPool(t *testing.T, mnt *mounted, what string) {
	t.Helper()
	m.waitTree(t, mnt, what, func(map[string][]string) {})
}

// waitTree waits for the mount to equal the pool as edit leaves it,
// failing only after two polls since the call (converges).
func (m *atomModel) waitTree(t *testing.T, mnt *mounted, what string, edit func(map[string][]string)) {
	t.Helper()
	want := func() map[string][]string { p := m.src.Pool(); edit(p); return p }
	converges(t, mnt, what, func() string {
		got, err := atomTree(mnt.dir)
		if err != nil {
			return err.Error()
		}
		if w := want(); !reflect.DeepEqual(got, w) {
			return fmt.Sprintf("the tree is not the pool:\n got %v\nwant %v", got, w)
		}
		return ""
	})
}

// checkBytes reads every file of the mount and compares it with what was
// published at its URI; its size too.
func (m *atomModel) checkBytes(t *testing.T, mnt *mounted) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(mnt.dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		uri := getxattr(t, p, "user.atompmh.uri")
		want, ok := m.bodies[uri]
		require.True(t, ok, "%s: %s was never published", p, uri)
		got, err := os.ReadFile(p)
		require.NoError(t, err, p)
		assert.True(t, bytes.Equal(want, got), "%s: bytes %q, want %q", p, got, want)
		info, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, int64(len(want)), info.Size(), p)
		n++
		return nil
	})
	require.NoError(t, err)
	require.NotZero(t, n)
}

func mountAtom(t *testing.T, url string, extra ...string) *mounted {
	t.Helper()
	return mount(t, url, append([]string{"--poll-interval", atomPoll.String()}, extra...)...)
}

func TestAtomMountAndFollow(t *testing.T) {
	t.Parallel()
	m := startAtom(t, atomsource.Config{PerDocument: 3})
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		m.create(t, n, "xml", "txt")
	}
	m.update(t, "a", 2, "txt", "json") // a historical entry; xml dropped, json added
	require.NoError(t, m.src.Delete("b"))
	require.GreaterOrEqual(t, m.src.Documents(), 3)

	mnt := mountAtom(t, m.src.URL())
	m.waitPool(t, mnt, "mount")
	m.checkBytes(t, mnt)

	// What a user sees of one file: path, mtime, xattrs; one deleted.
	a := mnt.path("rec/a.json")
	assert.Equal(t, atomsource.ID("a"), getxattr(t, a, "user.atompmh.id"))
	assert.Equal(t, "Record a, version 2", getxattr(t, a, "user.atompmh.title"))
	assert.Equal(t, "application/json", getxattr(t, a, "user.atompmh.type"))
	assert.Equal(t, m.src.RepURL("a", "json"), getxattr(t, a, "user.atompmh.uri"))
	_, err := os.Stat(mnt.path("rec/b.xml"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Stat(mnt.path("rec/a.xml"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	// atom:updated is the mtime; the producer's clock moves a minute per
	// mutation: c was created a minute after b, a updated after h.
	mtime := func(rel string) time.Time {
		info, err := os.Stat(mnt.path(rel))
		require.NoError(t, err)
		return info.ModTime()
	}
	assert.Equal(t, time.Minute, mtime("rec/d.xml").Sub(mtime("rec/c.xml")))
	assert.Equal(t, time.Minute, mtime("rec/a.txt").Sub(mtime("rec/h.txt")))
	assert.Equal(t, mtime("rec/a.txt").UTC().Format(time.RFC3339Nano), getxattr(t, a, "user.atompmh.lastmod"))

	// Changes while mounted, each seen within the poll interval plus 1 s.
	m.create(t, "new", "xml")
	m.waitPool(t, mnt, "a creation")
	m.update(t, "c", 3, "xml", "json")
	m.waitPool(t, mnt, "an update that adds a format")
	require.NoError(t, m.src.Delete("d"))
	m.waitPool(t, mnt, "a deletion")
	m.checkBytes(t, mnt)

	// A harvest walks only the documents newer than the last one, plus the
	// one at the mark: the oldest archives are not fetched again.
	m.src.ResetRequests()
	m.create(t, "last", "txt")
	m.waitPool(t, mnt, "a creation")
	for n := 1; n <= m.src.Documents()-3; n++ {
		assert.Zero(t, m.src.Requests(fmt.Sprintf("/archive/%d", n)), "archive %d of %d fetched again", n, m.src.Documents()-1)
	}
	assert.NotZero(t, m.src.Requests("/feed"))
}

func TestAtomCompleteFeed(t *testing.T) {
	t.Parallel()
	m := startAtom(t, atomsource.Config{Complete: true})
	for _, n := range []string{"a", "b", "c"} {
		m.create(t, n, "xml", "txt")
	}
	mnt := mountAtom(t, m.src.URL())
	m.waitPool(t, mnt, "mount")
	require.NoError(t, m.src.Delete("b"))
	m.waitPool(t, mnt, "a record absent from the complete feed")
	m.update(t, "a", 2, "json")
	m.waitPool(t, mnt, "an update")
	m.checkBytes(t, mnt)
}

// A broken chain and a cycle: a warning, what was read is mounted, and
// nothing is lost once the chain is whole again.
func TestAtomBrokenChainAndCycle(t *testing.T) {
	t.Parallel()
	m := startAtom(t, atomsource.Config{PerDocument: 2})
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		m.create(t, n, "xml")
	}
	m.src.Fail("/archive/1", http.StatusInternalServerError)
	m.src.SetPrevArchive(3, "/archive/3") // 3 links to itself: a cycle
	// No retries: a harvest applies what it read once the walk ends, and
	// four retries of archive 1's 500 would take longer than the wait.
	mnt := mountAtom(t, m.src.URL(), "--retries", "0")
	got, err := atomTree(mnt.dir)
	require.NoError(t, err)
	assert.Contains(t, got, atomsource.ID("g"), "what was read before the cycle is mounted")
	assert.NotContains(t, got, atomsource.ID("a"), "archive 1 was never read")
	log, err := os.ReadFile(mnt.logFile)
	require.NoError(t, err)
	assert.Contains(t, string(log), "archive/3", "the cycle is warned about, naming the document")

	// Mended, the walk goes on down to archive 1, which fails: what it
	// holds (a, b) is missing, the rest is there, and that is warned about.
	m.src.SetPrevArchive(3, "/archive/2")
	m.waitTree(t, mnt, "the cycle mended; archive 1 still failing", func(p map[string][]string) {
		delete(p, atomsource.ID("a"))
		delete(p, atomsource.ID("b"))
	})
	waitFor(t, hangBound, "a warning naming the broken link", func() bool {
		log, _ := os.ReadFile(mnt.logFile)
		return strings.Contains(string(log), "archive/1") && strings.Contains(string(log), "chain broken")
	})
	m.src.Fail("/archive/1", 0)
	m.waitPool(t, mnt, "the chain whole again")
	m.checkBytes(t, mnt)
}

func TestAtomInspect(t *testing.T) {
	t.Parallel()
	m := startAtom(t, atomsource.Config{PerDocument: 3})
	for _, n := range []string{"a", "b", "c", "d"} {
		m.create(t, n, "xml", "txt")
	}
	m.update(t, "a", 2, "txt")
	require.NoError(t, m.src.Delete("b"))

	rep := inspectJSON(t, m.src.URL())
	assert.Equal(t, m.src.URL(), rep["feed"])
	docs := array(t, rep, "documents")
	require.Len(t, docs, m.src.Documents())
	assert.Equal(t, m.src.ArchiveURL(1), docs[len(docs)-1]["url"])
	assert.Equal(t, 3.0, number(t, rep, "records"))
	assert.Equal(t, 3.0, number(t, rep, "active_entries"))
	assert.Equal(t, 2.0, number(t, rep, "historical_entries"))
	assert.Equal(t, 1.0, number(t, rep, "deletion_entries"))
	assert.Equal(t, map[string]any{"text/plain": 3.0, "application/xml": 2.0}, object(t, rep, "representations"))
	assert.Equal(t, docs[0]["updated"], rep["newest_updated"])

	out, stderr, err := run(t, time.Minute, rsfsBin, "inspect", m.src.URL())
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "Atom-PMH feed "+m.src.URL())
	assert.Contains(t, out, "archive      "+m.src.ArchiveURL(1))
	assert.Contains(t, out, "entries:         3 active, 2 historical, 1 deletion")
	assert.Contains(t, out, "representations: 2 application/xml")
}

// Entries without atom:id or atom:updated, and a representation on
// another origin: each warned about, and every other representation
// mounted, the rest of the record included.
func TestAtomBadEntriesAndForeignOrigin(t *testing.T) {
	t.Parallel()
	m := startAtom(t, atomsource.Config{PerDocument: 4})
	m.create(t, "a", "xml")
	m.src.Malformed("noid", "id", rep("application/xml", "xml", "x"))
	m.create(t, "b", "xml")
	m.src.Malformed("noupdated", "updated", rep("application/xml", "xml", "y"))
	m.create(t, "c", "xml")
	foreign := "http://localhost:1/rec/c.json" // another origin: not fetched
	reps := append(atomRecord("d", 1, "txt"), atomsource.Rep{Type: "application/json", Ext: "json", Href: foreign})
	require.NoError(t, m.src.Create("d", "Record d", reps...))
	m.note("d", reps[:1])

	mnt := mountAtom(t, m.src.URL())
	withoutForeign := func(p map[string][]string) {
		d := atomsource.ID("d")
		p[d] = slices.DeleteFunc(p[d], func(s string) bool { return strings.HasSuffix(s, " "+foreign) })
	}
	m.waitTree(t, mnt, "mount", withoutForeign)
	m.checkBytes(t, mnt)
	log, err := os.ReadFile(mnt.logFile)
	require.NoError(t, err)
	for _, want := range []string{"http://localhost:1", "atom:id", "atom:updated"} {
		assert.Contains(t, string(log), want)
	}
	_, err = os.Stat(mnt.path("@localhost:1"))
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing shown for the refused origin")

	// Following goes on past them.
	m.create(t, "e", "txt")
	m.waitTree(t, mnt, "a creation after the bad entries", withoutForeign)
}

// A page that links to the feed (<link rel="alternate"
// type="application/atom+xml">) mounts the feed.
func TestAtomDiscoveredFromPage(t *testing.T) {
	t.Parallel()
	m := startAtom(t, atomsource.Config{})
	m.create(t, "a", "xml", "txt")
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<html><head><title>Records</title><link rel="alternate" type="application/atom+xml" href="%s"></head></html>`, m.src.URL())
	}))
	t.Cleanup(page.Close)

	rep := inspectJSON(t, page.URL+"/")
	assert.Equal(t, m.src.URL(), rep["feed"])
	mnt := mountAtom(t, page.URL+"/")
	m.waitPool(t, mnt, "mount")
	m.checkBytes(t, mnt)
}

// A remount rebuilds the tree from what the last mount remembered: no
// representation is asked for its size again, and the changes made while
// nothing was mounted show before the mount is ready.
func TestAtomRemountFromSnapshot(t *testing.T) {
	t.Parallel()
	m := startAtom(t, atomsource.Config{PerDocument: 3})
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		m.create(t, n, "xml", "txt")
	}
	base := t.TempDir()
	dir, cacheDir := filepath.Join(base, "mnt"), filepath.Join(base, "cache")
	require.NoError(t, os.Mkdir(dir, 0o755))
	mnt := mountAt(t, m.src.URL(), dir, cacheDir, "--poll-interval", atomPoll.String())
	m.waitPool(t, mnt, "mount")
	m.update(t, "a", 2, "json")
	m.waitPool(t, mnt, "an update")
	mnt.unmount(t)
	waitFor(t, hangBound, "the unmount", func() bool { return !isMountPoint(dir) })

	m.update(t, "c", 2, "xml")
	require.NoError(t, m.src.Delete("d"))
	m.src.ResetRequests()
	mnt = mountAt(t, m.src.URL(), dir, cacheDir, "--poll-interval", atomPoll.String())
	got, err := atomTree(mnt.dir)
	require.NoError(t, err)
	assert.Equal(t, m.src.Pool(), got, "caught up before the mount was ready")
	for _, p := range []string{"/rec/a.json", "/rec/b.xml", "/rec/b.txt", "/rec/e.txt"} {
		assert.Zero(t, m.src.Requests(p), "%s asked for its size again", p)
	}
	assert.NotZero(t, m.src.Requests("/rec/c.xml"), "the updated record's size is learned")
	assert.Zero(t, m.src.Requests("/archive/1"), "the walk stops at the remembered mark")
	m.checkBytes(t, mnt)
}

// A remembered feed whose host is down is mounted from what the last
// mount remembered, as a ResourceSync Source is from its snapshot
// (TestMountFromSnapshotWhileSourceIsDown): the whole tree, a file read
// before from the disk cache, and one never read fails with EIO until the
// feed is back.
func TestAtomMountFromSnapshotWhileFeedIsDown(t *testing.T) {
	t.Parallel()
	m := startAtom(t, atomsource.Config{PerDocument: 3})
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		m.create(t, n, "xml", "txt")
	}
	base := t.TempDir()
	dir, cacheDir := filepath.Join(base, "mnt"), filepath.Join(base, "cache")
	require.NoError(t, os.Mkdir(dir, 0o755))
	mnt := mountAt(t, m.src.URL(), dir, cacheDir, "--poll-interval", atomPoll.String())
	m.waitPool(t, mnt, "mount")
	paths := atomPaths(t, mnt.dir)
	read := m.src.RepURL("a", "txt")
	got, err := os.ReadFile(paths[read])
	require.NoError(t, err)
	require.Equal(t, m.bodies[read], got)
	// Reading a small file warms the small files of its directory (fs's
	// warm window): a record created after that read stays unread.
	m.create(t, "f", "txt")
	m.waitPool(t, mnt, "the record created after the read")
	unread := m.src.RepURL("f", "txt")
	pool := m.src.Pool()
	mnt.unmount(t)
	waitFor(t, hangBound, "the unmount", func() bool { return !isMountPoint(dir) })

	m.src.Close() // the feed's host is gone
	mnt = mountAt(t, m.src.URL(), dir, cacheDir, "--poll-interval", atomPoll.String(), "--retries", "0")
	log, _ := os.ReadFile(mnt.logFile)
	assert.Contains(t, string(log), "the feed is unreachable; mounting what was remembered")
	assert.Contains(t, string(log), "the feed cannot be read; mounting what was remembered")
	tree, err := atomTree(mnt.dir)
	require.NoError(t, err)
	assert.Equal(t, pool, tree, "the whole tree, as remembered")
	after := atomPaths(t, mnt.dir)
	got, err = os.ReadFile(after[read])
	require.NoError(t, err)
	assert.Equal(t, m.bodies[read], got, "a cached file reads from the disk cache")
	_, err = os.ReadFile(after[unread])
	assert.ErrorIs(t, err, syscall.EIO, "an uncached file fails until the feed is back")
}

// atomPaths maps each file's user.atompmh.uri to its path in the mount.
func atomPaths(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out[getxattr(t, p, "user.atompmh.uri")] = p
		}
		return err
	})
	require.NoError(t, err)
	return out
}

// TestMeasureAtomScale mounts a feed of 100,000 records (one
// representation each) across 100 archive documents and logs the ready
// time, the peak RSS and the requests made. RSFS_MEASURE=1 runs it.
func TestMeasureAtomScale(t *testing.T) {
	t.Parallel()
	if os.Getenv("RSFS_MEASURE") == "" {
		t.Skip("set RSFS_MEASURE=1 to measure")
	}
	const records, perDoc = 100_000, 1_000
	m := startAtom(t, atomsource.Config{PerDocument: perDoc})
	body := atomsource.Rep{Type: "application/xml", Ext: "xml", Body: []byte("<record/>\n")}
	for i := range records {
		require.NoError(t, m.src.Create(fmt.Sprintf("r%06d", i), "Record", body))
	}
	m.src.ResetRequests()
	start := time.Now()
	mnt := mountAtom(t, m.src.URL(), "--poll-interval", "0")
	ready := time.Since(start)
	reps := 0
	for i := range records {
		reps += m.src.Requests(fmt.Sprintf("/rec/r%06d.xml", i))
	}
	t.Logf("%d records in %d documents: ready in %s, rsfs VmHWM %d MiB, %d document requests, %d representation requests (HEAD)",
		records, m.src.Documents(), ready.Round(time.Millisecond), peakRSS(t, mnt.pid(t))>>20, m.src.DocumentRequests(), reps)
	entries, err := os.ReadDir(mnt.path("rec"))
	require.NoError(t, err)
	require.Len(t, entries, records)
}

// An archive document rewritten between polls (the specification allows
// it): the harvest that meets it changed walks on, with a warning, and the
// records the producer put into older archives are mounted.
func TestAtomArchiveChangedBetweenPolls(t *testing.T) {
	t.Parallel()
	m := startAtom(t, atomsource.Config{PerDocument: 5})
	for i := range 11 { // archives 1 and 2; the last record in the subscription document
		m.create(t, fmt.Sprintf("r%02d", i), "xml")
	}
	mnt := mountAtom(t, m.src.URL())
	m.waitPool(t, mnt, "mount")
	for n, name := range map[int]string{1: "late1", 2: "late2"} {
		reps := atomRecord(name, 1, "txt")
		require.NoError(t, m.src.Backdate(n, name, "Late "+name, reps...))
		m.note(name, reps)
	}
	m.create(t, "r11", "xml")
	m.waitPool(t, mnt, "archives rewritten, then a new record")
	m.checkBytes(t, mnt)
	log, err := os.ReadFile(mnt.logFile)
	require.NoError(t, err)
	assert.Contains(t, string(log), "archive document changed since the last harvest read it")
}

// The subscription document is fetched once at mount: the harvest reads
// the document discovery fetched. At a remount, that one fetch is also
// all the catching up costs when the feed did not change.
func TestAtomSubscriptionFetchedOnceAtMount(t *testing.T) {
	t.Parallel()
	m := startAtom(t, atomsource.Config{PerDocument: 3})
	for _, n := range []string{"a", "b", "c", "d"} {
		m.create(t, n, "xml")
	}
	base := t.TempDir()
	dir, cacheDir := filepath.Join(base, "mnt"), filepath.Join(base, "cache")
	require.NoError(t, os.Mkdir(dir, 0o755))
	mnt := mountAt(t, m.src.URL(), dir, cacheDir, "--poll-interval", "1h")
	assert.Equal(t, 1, m.src.Requests("/feed"), "GETs of the subscription document at mount")
	assert.Equal(t, 1, m.src.Requests("/archive/1"))
	m.waitPool(t, mnt, "mount")
	mnt.unmount(t)
	waitFor(t, hangBound, "the unmount", func() bool { return !isMountPoint(dir) })

	m.src.ResetRequests()
	mnt = mountAt(t, m.src.URL(), dir, cacheDir, "--poll-interval", "1h")
	assert.Equal(t, 1, m.src.Requests("/feed"), "GETs of the subscription document at a remount")
	assert.Zero(t, m.src.Requests("/archive/1"))
	m.waitPool(t, mnt, "remount")
}

// A feed whose documents are gzip-compressed is mounted, not taken for a
// Sitemap.
func TestAtomGzipFeed(t *testing.T) {
	t.Parallel()
	m := startAtom(t, atomsource.Config{PerDocument: 2, Gzip: true})
	for _, n := range []string{"a", "b", "c"} {
		m.create(t, n, "xml", "txt")
	}
	mnt := mountAtom(t, m.src.URL())
	m.waitPool(t, mnt, "mount")
	m.checkBytes(t, mnt)
	m.create(t, "d", "json")
	m.waitPool(t, mnt, "a creation")
}

// `rsfs status` and the metrics of a feed mount that followed a change:
// the feed's position is its harvest mark (the subscription document's
// atom:updated), its polls and the change applied are counted.
func TestAtomStatusAndMetrics(t *testing.T) {
	t.Parallel()
	m := startAtom(t, atomsource.Config{PerDocument: 2})
	for _, n := range []string{"a", "b", "c"} {
		m.create(t, n, "xml")
	}
	addr := freeAddr(t)
	mnt := mountAtom(t, m.src.URL(), "--metrics-addr", addr)
	m.create(t, "new", "xml", "txt")
	m.waitPool(t, mnt, "a creation")
	m.checkBytes(t, mnt)
	info, err := os.Stat(mnt.path("rec/new.xml"))
	require.NoError(t, err)
	updated := info.ModTime().UTC() // the producer's clock: the subscription document's atom:updated too

	var st status
	eventually(t, "the change counted in the status", func() bool {
		st = readStatus(t, mnt.dir)
		return st.Polls.Applied == 1
	})
	assert.Equal(t, m.src.URL(), st.Source)
	assert.Equal(t, "atompmh", st.Protocol)
	assert.Equal(t, mnt.dir, st.Dir)
	assert.Equal(t, 5, st.Resources)
	require.Len(t, st.Sets, 1)
	assert.Equal(t, m.src.URL(), st.Sets[0].Set)
	assert.Equal(t, updated, st.Sets[0].Position, "position: the harvest mark")
	assert.Equal(t, updated, st.Sets[0].NewestChange)
	assert.Zero(t, st.Sets[0].BehindSeconds)
	assert.Equal(t, 5, st.Sets[0].Resources)
	assert.Equal(t, "ok", st.Polls.Result)
	assert.GreaterOrEqual(t, st.Polls.Count, int64(1), "the poll that applied the change (the harvest at mount is a load, not a poll)")
	require.NotNil(t, st.Polls.Last)
	require.NotNil(t, st.Polls.Next)
	assert.True(t, st.Polls.Next.After(*st.Polls.Last))
	origin := strings.TrimSuffix(m.src.URL(), "/feed")
	require.Len(t, st.Fetched, 1)
	assert.Equal(t, origin, st.Fetched[0].Origin)
	assert.GreaterOrEqual(t, st.Fetched[0].Requests, int64(m.src.DocumentRequests()))

	out, stderr, err := run(t, 10*time.Second, rsfsBin, "status", mnt.dir)
	require.NoError(t, err, stderr)
	t.Logf("rsfs status %s:\n%s", mnt.dir, out)
	assert.Contains(t, out, "Source:     "+m.src.URL()+" ")
	assert.Contains(t, out, "  feed "+m.src.URL()+": 5 resources\n    position "+updated.Format(time.RFC3339))

	got, _ := scrape(t, addr)
	assert.Equal(t, 1.0, got["rsfs_changes_applied_total"])
	assert.Equal(t, 5.0, got["rsfs_resources"])
	assert.Equal(t, 5.0, got[`rsfs_set_resources{set="`+m.src.URL()+`"}`])
	assert.Equal(t, float64(updated.Unix()), got[`rsfs_set_position_timestamp_seconds{set="`+m.src.URL()+`"}`])
	assert.Equal(t, 0.0, got[`rsfs_change_lag_seconds{set="`+m.src.URL()+`"}`])
	assert.GreaterOrEqual(t, got[`rsfs_polls_total{result="ok"}`], 1.0)
	assert.Equal(t, 0.0, got[`rsfs_polls_total{result="error"}`])
	assert.Positive(t, got[`rsfs_http_requests_total{kind="get",origin="`+origin+`",status="200"}`])
	assert.GreaterOrEqual(t, got[`rsfs_fuse_operation_duration_seconds_count{op="read"}`]+got["rsfs_kernel_page_stores_total"], 5.0,
		"each file read: through rsfs, or from the kernel's page cache, where a walk's warmed files were handed")
}

// `rsfs hold` holds a feed's changes back, as a Source's, and the status
// says so; after `rsfs release` they show.
func TestAtomHold(t *testing.T) {
	t.Parallel()
	m := startAtom(t, atomsource.Config{PerDocument: 2})
	for _, n := range []string{"a", "b"} {
		m.create(t, n, "xml")
	}
	mnt := mountAtom(t, m.src.URL())
	m.waitPool(t, mnt, "mount")
	before := m.src.Pool()
	_, stderr, err := run(t, 10*time.Second, rsfsBin, "hold", mnt.dir, "--for", "1h")
	require.NoError(t, err, stderr)
	m.create(t, "held", "xml")
	time.Sleep(3 * atomPoll) // a poll that applied the change would show it by now
	got, err := atomTree(mnt.dir)
	require.NoError(t, err)
	assert.Equal(t, before, got, "no change while held")
	assert.NotNil(t, readStatus(t, mnt.dir).Hold)
	_, stderr, err = run(t, 10*time.Second, rsfsBin, "release", mnt.dir)
	require.NoError(t, err, stderr)
	m.waitPool(t, mnt, "the change after release")
}
