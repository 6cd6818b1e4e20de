package e2e

import (
	"archive/zip"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Documents after ResourceSync 1.1's examples 4 and 5 (§2): a Resource
// Dump whose one package holds two bitstreams and a manifest that gives
// them no lastmod and no length, only the manifest's at. The Resource
// Dump's up link names a Capability List that cannot be read.
const (
	exampleDump = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
  xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/dataset1/capabilitylist.xml"/>
  <rs:md capability="resourcedump"
    at="2013-01-03T09:00:00Z"/>
  <url>
    <loc>{base}/resourcedump.zip</loc>
  </url>
</urlset>`
	exampleManifest = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
  xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcedump-manifest"
    at="2013-01-03T09:00:00Z"/>
  <url>
    <loc>{base}/res1</loc>
    <rs:md hash="md5:{md5 first bitstream}"
      path="/resources/res1"/>
  </url>
  <url>
    <loc>{base}/res2</loc>
    <rs:md hash="md5:{md5 second one}"
      path="/resources/res2"/>
  </url>
</urlset>`
	// A Change Dump (1.1 §13) given as the URL, with the same kind of
	// unreachable up link; its package's manifest dates each change.
	exampleChangeDump = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
  xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/dataset1/capabilitylist.xml"/>
  <rs:md capability="changedump"
    from="2013-01-01T00:00:00Z"/>
  <url>
    <loc>{base}/20130101-changedump.zip</loc>
    <lastmod>2013-01-01T23:59:59Z</lastmod>
    <rs:md type="application/zip"
      from="2013-01-01T00:00:00Z"
      until="2013-01-02T00:00:00Z"/>
  </url>
</urlset>`
	exampleChangeManifest = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
  xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="changedump-manifest"
    from="2013-01-01T00:00:00Z"
    until="2013-01-02T00:00:00Z"/>
  <url>
    <loc>{base}/res1</loc>
    <rs:md change="created" datetime="2013-01-01T12:00:00Z"
      path="/changes/res1"/>
  </url>
  <url>
    <loc>{base}/res2</loc>
    <rs:md change="updated" datetime="2013-01-01T13:00:00Z"
      path="/changes/res2"/>
  </url>
</urlset>`
)

// zipPackage is a ZIP file holding manifest.xml and the members given
// (path → bytes), deflated as a publisher's zip library writes them.
func zipPackage(t *testing.T, manifest string, members map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name, body string) {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	add("manifest.xml", manifest)
	for name, body := range members {
		add(name, body)
	}
	require.NoError(t, zw.Close())
	return buf.String()
}

// withMD5 fills in the manifest's {md5 TEXT}: the md5 of TEXT and a
// newline, in hex.
func withMD5(manifest string) string {
	for {
		i := strings.Index(manifest, "{md5 ")
		if i < 0 {
			return manifest
		}
		j := strings.Index(manifest[i:], "}")
		sum := md5.Sum([]byte(manifest[i+5:i+j] + "\n"))
		manifest = manifest[:i] + hex.EncodeToString(sum[:]) + manifest[i+j+1:]
	}
}

// dumpOnlyPages is a Source of one dump given as the URL: its package
// (the manifest's {base} filled in: a ZIP cannot be rewritten as it is
// served) and no Capability List.
func dumpOnlyPages(t *testing.T, base, dumpPath, dump, pkgPath, manifest string, members map[string]string) map[string]string {
	return map[string]string{
		dumpPath: dump,
		pkgPath:  zipPackage(t, withMD5(strings.ReplaceAll(manifest, "{base}", base)), members),
	}
}

// startLateSource is a handSource whose pages need its own URL before it
// serves (a ZIP holding URLs).
func startLateSource(t *testing.T, pages func(base string) map[string]string) *handSource {
	h := startHandSource(t, map[string]string{})
	for p, body := range pages(h.base) {
		h.set(p, body)
	}
	return h
}

// A Resource Dump given as the URL, its Capability List unreachable,
// mounts from its package's manifest (issue 32 row 1): the files' bytes
// come from the package, their mtime is the manifest's at where an entry
// has no lastmod (row 3), the follower has nothing to poll and says so,
// and inspect reads the same URL.
func TestResourceDumpGivenAsTheURL(t *testing.T) {
	t.Parallel()
	h := startLateSource(t, func(base string) map[string]string {
		return dumpOnlyPages(t, base, "/resourcedump.xml", exampleDump, "/resourcedump.zip", exampleManifest,
			map[string]string{"resources/res1": "first bitstream\n", "resources/res2": "second one\n"})
	})
	m := mount(t, h.base+"/resourcedump.xml", "--poll-interval", "200ms", "--retries", "0")
	assert.Equal(t, []string{"res1", "res2"}, relFiles(t, m.dir))
	at := time.Date(2013, 1, 3, 9, 0, 0, 0, time.UTC)
	for name, want := range map[string]string{"res1": "first bitstream\n", "res2": "second one\n"} {
		got, err := os.ReadFile(m.path(name))
		require.NoError(t, err)
		assert.Equal(t, want, string(got), "bytes of %s", name)
		st, err := os.Stat(m.path(name))
		require.NoError(t, err)
		assert.Equal(t, at, st.ModTime().UTC(), "mtime of %s: the manifest's at", name)
	}
	assert.Zero(t, h.requests("/res1")+h.requests("/res2"), "read from the package, not the URIs")
	t.Logf("mount and two reads: %d requests for the package (HEAD and ranges), %d for the dump", h.requests("/resourcedump.zip"), h.requests("/resourcedump.xml"))
	// A few polls later the mount still serves: a dump-only Source's
	// follower has no Change List to poll.
	waitFor(t, hangBound, "two polls", func() bool { return readStatus(t, m.dir).Polls.Count >= 2 })
	st := readStatus(t, m.dir)
	assert.Equal(t, 2, st.Resources)
	assert.Equal(t, "ok", st.Polls.Result)

	out, stderr, err := run(t, time.Minute, rsfsBin, "inspect", "--retries", "0", h.base+"/resourcedump.xml")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, h.base+"/resourcedump.zip")
	assert.Contains(t, out, "FAILED  "+h.base+"/dataset1/capabilitylist.xml")
}

// A Change Dump given as the URL mounts the same way: its package's
// members are the files, dated by their change's datetime.
func TestChangeDumpGivenAsTheURL(t *testing.T) {
	t.Parallel()
	h := startLateSource(t, func(base string) map[string]string {
		return dumpOnlyPages(t, base, "/changedump.xml", exampleChangeDump, "/20130101-changedump.zip", exampleChangeManifest,
			map[string]string{"changes/res1": "created\n", "changes/res2": "updated!\n"})
	})
	m := mount(t, h.base+"/changedump.xml", "--poll-interval", "200ms", "--retries", "0")
	assert.Equal(t, []string{"res1", "res2"}, relFiles(t, m.dir))
	for name, want := range map[string]struct {
		body string
		at   time.Time
	}{
		"res1": {"created\n", time.Date(2013, 1, 1, 12, 0, 0, 0, time.UTC)},
		"res2": {"updated!\n", time.Date(2013, 1, 1, 13, 0, 0, 0, time.UTC)},
	} {
		got, err := os.ReadFile(m.path(name))
		require.NoError(t, err)
		assert.Equal(t, want.body, string(got), "bytes of %s", name)
		st, err := os.Stat(m.path(name))
		require.NoError(t, err)
		assert.Equal(t, want.at, st.ModTime().UTC(), "mtime of %s: its change's datetime", name)
	}
	waitFor(t, hangBound, "two polls", func() bool { return readStatus(t, m.dir).Polls.Count >= 2 })
	assert.Equal(t, 2, readStatus(t, m.dir).Resources)
	assert.Equal(t, []string{"res1", "res2"}, relFiles(t, m.dir), "the follower keeps the dump's files")

	// The follower polls the Change Dump: a second package deletes res1
	// and creates res3.
	h.set("/changedump.xml", strings.Replace(exampleChangeDump, "</urlset>", `  <url>
    <loc>{base}/20130102-changedump.zip</loc>
    <lastmod>2013-01-02T23:59:59Z</lastmod>
    <rs:md type="application/zip"
      from="2013-01-02T00:00:00Z"
      until="2013-01-03T00:00:00Z"/>
  </url>
</urlset>`, 1))
	h.set("/20130102-changedump.zip", zipPackage(t, strings.ReplaceAll(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
  xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="changedump-manifest"
    from="2013-01-02T00:00:00Z"
    until="2013-01-03T00:00:00Z"/>
  <url>
    <loc>{base}/res1</loc>
    <rs:md change="deleted" datetime="2013-01-02T10:00:00Z"/>
  </url>
  <url>
    <loc>{base}/res3</loc>
    <rs:md change="created" datetime="2013-01-02T11:00:00Z"
      path="/changes/res3"/>
  </url>
</urlset>`, "{base}", h.base), map[string]string{"changes/res3": "third\n"}))
	waitFor(t, hangBound, "the second package's changes", func() bool {
		files := relFiles(t, m.dir)
		return len(files) == 2 && files[0] == "res2" && files[1] == "res3"
	})
	got, err := os.ReadFile(m.path("res3"))
	require.NoError(t, err)
	assert.Equal(t, "third\n", string(got))
	assert.Zero(t, h.requests("/res1")+h.requests("/res2")+h.requests("/res3"), "read from the packages, not the URIs")

	out, stderr, err := run(t, time.Minute, rsfsBin, "inspect", "--retries", "0", h.base+"/changedump.xml")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "polls "+h.base+"/changedump.xml")
	assert.Contains(t, out, h.base+"/20130102-changedump.zip")
	assert.Contains(t, out, "FAILED  "+h.base+"/dataset1/capabilitylist.xml")
}

// archivesPages are the documents of TestDumpsThatAnswer404.
func archivesPages() map[string]string {
	return map[string]string{
		"/dataset1/capabilitylist.xml": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/dataset1/resourcelist.xml</loc><rs:md capability="resourcelist"/></url>
  <url><loc>{base}/dataset1/resourcedump.xml</loc><rs:md capability="resourcedump"/></url>
  <url><loc>{base}/dataset1/changedump.xml</loc><rs:md capability="changedump"/></url>
</urlset>`,
		"/dataset1/resourcelist.xml": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>
  <url><loc>{base}/res1</loc><lastmod>2013-01-02T13:00:00Z</lastmod><rs:md length="8"/></url>
</urlset>`,
		"/res1": "content\n",
	}
}

// After the resync library's tests/testdata/archives fixtures: a
// Capability List names a Resource List that reads and a Resource Dump
// and Change Dump that answer 404. The mount comes up from the Resource
// List, warns once per dump naming it and the cause, shows them in rsfs
// status, and tries them again at later polls (issue 32 row 6).
func TestDumpsThatAnswer404(t *testing.T) {
	t.Parallel()
	pages := archivesPages()
	h := startHandSource(t, pages)
	m := mount(t, h.base+"/dataset1/capabilitylist.xml", "--poll-interval", "200ms", "--retries", "0")
	assert.Equal(t, []string{"res1"}, relFiles(t, m.dir))
	got, err := os.ReadFile(m.path("res1"))
	require.NoError(t, err)
	assert.Equal(t, "content\n", string(got))

	log, err := os.ReadFile(m.logFile)
	require.NoError(t, err)
	for _, dump := range []string{"/dataset1/resourcedump.xml", "/dataset1/changedump.xml"} {
		n := 0
		for _, line := range strings.Split(string(log), "\n") {
			if strings.Contains(line, `level=WARN msg="dump not read`) && strings.Contains(line, h.base+dump) && strings.Contains(line, "404") {
				n++
			}
		}
		// (The follower's polls also report the Change Dump, as any change
		// document that fails.)
		assert.Equal(t, 1, n, "one warning naming %s and its 404 at load:\n%s", dump, log)
	}
	out, stderr, err := run(t, time.Minute, rsfsBin, "inspect", "--retries", "0", h.base+"/dataset1/capabilitylist.xml")
	require.NoError(t, err, "inspect reads the rest: %s", stderr)
	assert.Contains(t, out, "resources:     1 (8 B)")
	assert.Contains(t, out, h.base+"/dataset1/resourcedump.xml FAILED: fetch "+h.base+"/dataset1/resourcedump.xml: HTTP 404 Not Found")

	asked := h.requests("/dataset1/resourcedump.xml")
	waitFor(t, hangBound, "the Resource Dump to be tried again", func() bool {
		return h.requests("/dataset1/resourcedump.xml") > asked
	})
	degraded := degradedDocs(t, m.dir)
	require.Len(t, degraded, 2, "%v", degraded)
	polls := readStatus(t, m.dir).Polls.Count
	t.Logf("after %d polls: %d requests for the 404 Resource Dump, %d for the Resource List, %d for the Capability List",
		polls, h.requests("/dataset1/resourcedump.xml"), h.requests("/dataset1/resourcelist.xml"), h.requests("/dataset1/capabilitylist.xml"))
	assert.Contains(t, degraded[0], "/dataset1/changedump.xml")
	assert.Contains(t, degraded[0], "404")
	assert.Contains(t, degraded[1], "/dataset1/resourcedump.xml")
	assert.Contains(t, degraded[1], "404")

	// The Resource Dump appears, made after the Resource List: the next
	// poll reads it, and the resource only its package holds joins the
	// tree.
	h.set("/dataset1/resourcedump.xml", `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcedump" at="2013-01-04T09:00:00Z"/>
  <url><loc>{base}/dataset1/dump.zip</loc></url>
</urlset>`)
	h.set("/dataset1/dump.zip", zipPackage(t, strings.ReplaceAll(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcedump-manifest" at="2013-01-04T09:00:00Z"/>
  <url><loc>{base}/res1</loc><lastmod>2013-01-02T13:00:00Z</lastmod><rs:md length="8" path="/r/res1"/></url>
  <url><loc>{base}/res2</loc><lastmod>2013-01-04T08:00:00Z</lastmod><rs:md length="12" path="/r/res2"/></url>
</urlset>`, "{base}", h.base), map[string]string{"r/res1": "content\n", "r/res2": "only dumped\n"}))
	waitFor(t, hangBound, "the dumped resource to join the tree", func() bool {
		files := relFiles(t, m.dir)
		return len(files) == 2 && files[1] == "res2"
	})
	got, err = os.ReadFile(m.path("res2"))
	require.NoError(t, err)
	assert.Equal(t, "only dumped\n", string(got))
	assert.Zero(t, h.requests("/res2"), "read from the package")
	assert.Len(t, degradedDocs(t, m.dir), 1, "the Resource Dump is no longer degraded")
	assert.Equal(t, 1, h.requests("/res1"), "the resource's URI read once, before its dump appeared")
}

// degradedDocs are the documents `rsfs status --json` says its one set
// failed to read, each as "URL error", sorted by URL.
func degradedDocs(t *testing.T, dir string) []string {
	t.Helper()
	out, stderr, err := run(t, 10*time.Second, rsfsBin, "status", "--json", dir)
	require.NoError(t, err, stderr)
	var st struct {
		Sets []struct {
			Degraded []struct {
				Doc   string `json:"doc"`
				Error string `json:"error"`
			} `json:"degraded"`
		} `json:"sets"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &st), out)
	require.Len(t, st.Sets, 1, out)
	var docs []string
	for _, d := range st.Sets[0].Degraded {
		docs = append(docs, d.Doc+" "+d.Error)
	}
	return docs
}

// The resync library's tests/testdata/archives1 fixtures as they are
// (relative <loc>s, 1.0's modified, the *-archive capabilities): caps1.xml
// names a Resource Dump, a Change List and a Change Dump that do not
// exist, beside a Resource List that does. The Source mounts from it. The
// fixture's file resourcesync is served at the well-known URI, so its two
// <loc>s gain a leading slash to name the same files.
func TestResyncArchivesFixtures(t *testing.T) {
	t.Parallel()
	pages := map[string]string{
		"/.well-known/resourcesync": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="describedby"
         href="info_about_source.txt"/>
  <rs:md capability="description"
         modified="2013-11-27"/>
  <url>
    <loc>/caps1.xml</loc>
    <rs:md capability="capabilitylist"/>
  </url>
  <url>
    <loc>/caps2.xml</loc>
    <rs:md capability="capabilitylist"/>
  </url>
</urlset>`,
		"/caps1.xml": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="describedby"
         href="dataset1/info_about_source.html"/>
  <rs:ln rel="up"
         href="resourcesync"/>
  <rs:md capability="capabilitylist"
         modified="2013-11-27T14:00:00Z"/>
  <url>
      <loc>dataset1/resourcelist.xml</loc>
      <rs:md capability="resourcelist"/>
  </url>
  <url>
      <loc>dataset1/resourcedump.xml</loc>
      <rs:md capability="resourcedump"/>
  </url>
  <url>
      <loc>dataset1/changelist.xml</loc>
      <rs:md capability="changelist"/>
  </url>
  <url>
      <loc>dataset1/changedump.xml</loc>
      <rs:md capability="changedump"/>
  </url>
  <url>
      <loc>dataset1/resourcelist-archive.xml</loc>
      <rs:md capability="resourcelist-archive"/>
  </url>
  <url>
      <loc>dataset1/resourcedump-archive.xml</loc>
      <rs:md capability="resourcedump-archive"/>
  </url>
  <url>
      <loc>dataset1/changelist-archive.xml</loc>
      <rs:md capability="changelist-archive"/>
  </url>
  <url>
      <loc>dataset1/changedump-archive.xml</loc>
      <rs:md capability="changedump-archive"/>
  </url>
</urlset>`,
		"/caps2.xml": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="describedby"
         href="http://example.com/dataset2/info_about_source.xml"/>
  <rs:md capability="capabilitylist"
         modified="2013-01-02T14:01:00Z"/>
  <!-- nothing, odd eh? -->
</urlset>`,
		"/dataset1/resourcelist.xml": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="resourcesync"
         href="../caps1.xml"/>
  <rs:md capability="resourcelist"
         modified="2013-01-03T15:00:00Z"/>
  <url>
      <loc>resource1</loc>
      <lastmod>2013-05-28T17:23:34Z</lastmod>
      <rs:md length="16"/>
  </url>
  <url>
      <loc>resource2</loc>
  </url>
  <url>
      <loc>resource3</loc>
  </url>
</urlset>`,
		"/dataset1/resource1": "sixteen bytes..\n",
		"/dataset1/resource2": "two\n",
		"/dataset1/resource3": "three\n",
	}
	h := startHandSource(t, pages)
	m := mount(t, h.base+"/", "--poll-interval", "200ms", "--retries", "0")
	assert.Equal(t, []string{"dataset1/resource1", "dataset1/resource2", "dataset1/resource3"}, relFiles(t, m.dir))
	got, err := os.ReadFile(m.path("dataset1/resource3"))
	require.NoError(t, err)
	assert.Equal(t, "three\n", string(got))
	st, err := os.Stat(m.path("dataset1/resource2"))
	require.NoError(t, err)
	assert.Equal(t, time.Date(2013, 1, 3, 15, 0, 0, 0, time.UTC), st.ModTime().UTC(), "no lastmod: the list's modified")
	log, err := os.ReadFile(m.logFile)
	require.NoError(t, err)
	assert.Contains(t, string(log), `msg="dump not read`)
}

// A dump the first mount could not read is remembered with the snapshot:
// the mount from it shows the dump degraded and tries it again.
func TestUnreadDumpRememberedAcrossRemount(t *testing.T) {
	t.Parallel()
	h := startHandSource(t, archivesPages())
	base := t.TempDir()
	dir, cacheDir := filepath.Join(base, "mnt"), filepath.Join(base, "cache")
	require.NoError(t, os.Mkdir(dir, 0o755))
	m := mountAt(t, h.base+"/dataset1/capabilitylist.xml", dir, cacheDir, "--poll-interval", "1h", "--retries", "0")
	require.Len(t, degradedDocs(t, m.dir), 2)
	m.unmount(t)
	waitFor(t, hangBound, "the unmount", func() bool { return !isMountPoint(dir) })
	lists := h.requests("/dataset1/resourcelist.xml")
	asked := h.requests("/dataset1/resourcedump.xml")

	m = mountAt(t, h.base+"/dataset1/capabilitylist.xml", dir, cacheDir, "--poll-interval", "200ms", "--retries", "0")
	assert.Equal(t, lists, h.requests("/dataset1/resourcelist.xml"), "the remount reads the snapshot, not the Resource List")
	degraded := degradedDocs(t, m.dir)
	require.Len(t, degraded, 2, "%v", degraded)
	assert.Contains(t, degraded[1], h.base+"/dataset1/resourcedump.xml")
	assert.Contains(t, degraded[1], "404")
	waitFor(t, hangBound, "the Resource Dump to be tried again", func() bool {
		return h.requests("/dataset1/resourcedump.xml") > asked
	})
}
