package e2e

import (
	"archive/zip"
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Source of TestEveryLinkIsVisible, written by hand from the standard's
// text (ANSI/NISO Z39.99-2017 §7, §14.4–14.8 and its examples 26–33):
// res1 carries one link of each relation §7 names, res2 none; a Resource
// Dump's manifest lists res3, which no Resource List names, with links of
// its own. {base} is the server's URL.
const (
	linksSourceDescription = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description"/>
  <url><loc>{base}/capabilitylist.xml</loc><rs:md capability="capabilitylist"/></url>
</urlset>`
	linksCapabilityList = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/resourcelist.xml</loc><rs:md capability="resourcelist"/></url>
  <url><loc>{base}/resourcedump.xml</loc><rs:md capability="resourcedump"/></url>
  <url><loc>{base}/changelist.xml</loc><rs:md capability="changelist"/></url>
</urlset>`
	linksResourceList = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/capabilitylist.xml"/>
  <rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
  <url>
    <loc>{base}/res1.html</loc>
    <lastmod>2024-01-01T00:00:00Z</lastmod>
    <rs:md hash="md5:` + res1MD5 + `" length="5" type="text/html"/>
    <rs:ln rel="describedby" href="{base}/meta/res1.xml" type="application/xml"/>
    <rs:ln rel="describedby" href="{base}/meta/res1.json" type="application/json"/>
    <rs:ln rel="alternate" href="{base}/res1.pdf" type="application/pdf"/>
    <rs:ln rel="canonical" href="{base}/res1"/>
    <rs:ln rel="memento" href="{base}/20231231000000/res1.html" modified="2023-12-31T00:00:00Z"
      hash="md5:` + res1MD5 + `" length="5" type="text/html"/>
    <rs:ln rel="timegate" href="{base}/timegate/{base}/res1.html"/>
    <rs:ln rel="timemap" href="{base}/timemap/{base}/res1.html" type="application/link-format"/>
    <rs:ln rel="collection" href="{base}/aggregation/0601007"/>
    <rs:ln rel="http://www.openarchives.org/rs/terms/patch" href="{base}/res1.diff" type="text/x-diff"/>
    <rs:ln rel="via" href="http://original.example.com/res1.html" modified="2023-12-30T00:00:00Z"/>
  </url>
  <url>
    <loc>{base}/res2.txt</loc>
    <lastmod>2024-01-01T00:00:00Z</lastmod>
    <rs:md length="5"/>
  </url>
</urlset>`
	linksResourceDump = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/capabilitylist.xml"/>
  <rs:md capability="resourcedump" at="2024-01-01T00:00:00Z"/>
  <url><loc>{base}/dump.zip</loc><rs:md type="application/zip"/></url>
</urlset>`
	linksManifest = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/capabilitylist.xml"/>
  <rs:md capability="resourcedump-manifest" at="2024-01-01T00:00:00Z"/>
  <url>
    <loc>{base}/res3.txt</loc>
    <lastmod>2024-01-01T00:00:00Z</lastmod>
    <rs:md length="5" path="/res3.txt" type="text/plain"/>
    <rs:ln rel="describedby" href="{base}/meta/res3.xml"/>
    <rs:ln rel="memento" href="{base}/20240101000000/res3.txt" modified="2024-01-01T00:00:00Z"/>
  </url>
</urlset>`
	// Before the change: nothing since the Resource List.
	linksChangeListEmpty = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/capabilitylist.xml"/>
  <rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
</urlset>`
	// The change: res1 updated, its bytes as they were, its links others
	// (example 28's describedby, example 32's via).
	linksChangeList = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/capabilitylist.xml"/>
  <rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
  <url>
    <loc>{base}/res1.html</loc>
    <lastmod>2024-01-01T00:00:00Z</lastmod>
    <rs:md change="updated" datetime="2024-01-02T00:00:00Z" hash="md5:` + res1MD5 + `" length="5" type="text/html"/>
    <rs:ln rel="describedby" href="{base}/meta/res1-v2.xml" modified="2024-01-02T00:00:00Z"/>
    <rs:ln rel="via" href="http://aggregator1.example.com/res1.html"/>
  </url>
</urlset>`
	// printf %s 'res1\n' | md5sum
	res1MD5 = "6e743b641e1c5274489b99635e70e69f"
)

// linksSource serves the documents above on 127.0.0.1.
type linksSource struct {
	srv     *httptest.Server
	mu      sync.Mutex
	changed bool
	zip     []byte
}

func startLinksSource(t *testing.T) *linksSource {
	t.Helper()
	s := &linksSource{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: s}}
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range map[string]string{"manifest.xml": s.fill(linksManifest), "res3.txt": "res3\n"} {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	s.zip = b.Bytes()
	return s
}

func (s *linksSource) fill(doc string) string { return strings.ReplaceAll(doc, "{base}", s.srv.URL) }

func (s *linksSource) change() {
	s.mu.Lock()
	s.changed = true
	s.mu.Unlock()
}

func (s *linksSource) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	changed := s.changed
	s.mu.Unlock()
	xmlDoc := map[string]string{
		"/.well-known/resourcesync": linksSourceDescription,
		"/capabilitylist.xml":       linksCapabilityList,
		"/resourcelist.xml":         linksResourceList,
		"/resourcedump.xml":         linksResourceDump,
		"/changelist.xml":           linksChangeListEmpty,
	}
	if changed {
		xmlDoc["/changelist.xml"] = linksChangeList
	}
	if doc, ok := xmlDoc[r.URL.Path]; ok {
		w.Header().Set("Content-Type", "application/xml")
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(s.fill(doc)))
		return
	}
	switch r.URL.Path {
	case "/res1.html":
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader("res1\n"))
	case "/res2.txt":
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader("res2\n"))
	case "/dump.zip":
		w.Header().Set("ETag", `"dump-1"`)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(s.zip))
	default:
		http.NotFound(w, r)
	}
}

// xattrsOf is every extended attribute of p, by listxattr and getxattr.
func xattrsOf(t *testing.T, p string) map[string]string {
	t.Helper()
	buf := make([]byte, 64<<10)
	n, err := syscall.Listxattr(p, buf)
	require.NoError(t, err)
	out := map[string]string{}
	for _, name := range strings.Split(strings.TrimSuffix(string(buf[:n]), "\x00"), "\x00") {
		out[name] = getxattr(t, p, name)
	}
	return out
}

// Issue 24: every link the Source publishes is visible, as
// user.resourcesync.link.<rel> (and .json where a link says more than its
// href), from a Resource List, a dump manifest, and a Change List whose
// update changes them; inspect names the relations.
func TestEveryLinkIsVisible(t *testing.T) {
	t.Parallel()
	src := startLinksSource(t)
	base := src.srv.URL

	insp, stderr, err := run(t, time.Minute, rsfsBin, "inspect", base)
	require.NoError(t, err, stderr)
	for _, rel := range []string{"describedby", "alternate", "canonical", "memento", "timegate", "timemap", "collection",
		"http://www.openarchives.org/rs/terms/patch", "via"} {
		assert.Contains(t, insp, " "+rel+" (user.resourcesync.link.", "inspect names %s", rel)
	}
	assert.Contains(t, insp, "3 describedby (user.resourcesync.link.describedby), e.g. ", "two in the Resource List, one in the dump manifest")
	assert.Contains(t, insp, "1 http://www.openarchives.org/rs/terms/patch (user.resourcesync.link.patch)")
	rep := inspectJSON(t, base)
	links := rep["sets"].([]any)[0].(map[string]any)["links"].(map[string]any)
	assert.Equal(t, 2.0, links["memento"].(map[string]any)["count"])

	m := mount(t, base, "--poll-interval", "300ms")
	res1 := m.path("res1.html")
	got := xattrsOf(t, res1)
	want := map[string]string{
		"user.resourcesync.link.describedby": base + "/meta/res1.xml\n" + base + "/meta/res1.json",
		"user.resourcesync.link.alternate":   base + "/res1.pdf",
		"user.resourcesync.link.canonical":   base + "/res1",
		"user.resourcesync.link.memento":     base + "/20231231000000/res1.html",
		"user.resourcesync.link.timegate":    base + "/timegate/" + base + "/res1.html",
		"user.resourcesync.link.timemap":     base + "/timemap/" + base + "/res1.html",
		"user.resourcesync.link.collection":  base + "/aggregation/0601007",
		"user.resourcesync.link.patch":       base + "/res1.diff",
		"user.resourcesync.link.via":         "http://original.example.com/res1.html",
	}
	for name, v := range want {
		assert.Equal(t, v, got[name], name)
	}
	assert.JSONEq(t, `[{"href":"`+base+`/20231231000000/res1.html","type":"text/html","modified":"2023-12-31T00:00:00Z",
		"length":5,"hash":"md5:`+res1MD5+`"}]`, got["user.resourcesync.link.memento.json"])
	assert.JSONEq(t, `[{"href":"`+base+`/meta/res1.xml","type":"application/xml"},{"href":"`+base+`/meta/res1.json","type":"application/json"}]`,
		got["user.resourcesync.link.describedby.json"])
	assert.JSONEq(t, `[{"href":"`+base+`/res1.diff","type":"text/x-diff"}]`, got["user.resourcesync.link.patch.json"])
	assert.NotContains(t, got, "user.resourcesync.link.timegate.json", "a link with nothing but its href has no .json")
	assert.Len(t, got, 4+len(want)+6, "uri, hash, type, lastmod, the links, and six .json: %v", got)

	out, stderr, err := run(t, 30*time.Second, "getfattr", "-d", res1)
	require.NoError(t, err, stderr)
	t.Logf("getfattr -d %s:\n%s", res1, out)
	for name := range want {
		assert.Contains(t, out, name+"=")
	}
	assert.Contains(t, out, base+"/timegate/"+base+"/res1.html")

	assert.Len(t, xattrsOf(t, m.path("res2.txt")), 2, "a resource without links has none: uri and lastmod")

	// The dump manifest's links, on the resource only the dump holds.
	res3 := xattrsOf(t, m.path("res3.txt"))
	assert.Equal(t, base+"/meta/res3.xml", res3["user.resourcesync.link.describedby"])
	assert.Equal(t, base+"/20240101000000/res3.txt", res3["user.resourcesync.link.memento"])
	assert.JSONEq(t, `[{"href":"`+base+`/20240101000000/res3.txt","modified":"2024-01-01T00:00:00Z"}]`, res3["user.resourcesync.link.memento.json"])
	for name := range res3 {
		assert.NotContains(t, name, "x-rsfs", "the dump copy rsfs keeps is not the Source's link")
	}
	body, err := os.ReadFile(m.path("res3.txt"))
	require.NoError(t, err)
	assert.Equal(t, "res3\n", string(body))

	// rsync -X carries them, where the destination keeps user xattrs.
	dst := t.TempDir()
	if err := syscall.Setxattr(dst, "user.rsfs-probe", []byte("1"), 0); err != nil {
		t.Logf("rsync -X not checked: %s keeps no user xattrs (%v)", dst, err)
	} else {
		_, stderr, err = run(t, 30*time.Second, "rsync", "-aX", res1, dst+"/")
		require.NoError(t, err, stderr)
		copied := xattrsOf(t, filepath.Join(dst, "res1.html"))
		t.Logf("rsync -X copied %d attributes", len(copied))
		assert.Equal(t, want["user.resourcesync.link.describedby"], copied["user.resourcesync.link.describedby"])
		assert.Equal(t, got["user.resourcesync.link.memento.json"], copied["user.resourcesync.link.memento.json"])
	}

	// A Change List update with other links, the same bytes: the links
	// are replaced, the file keeps its inode.
	var before syscall.Stat_t
	require.NoError(t, syscall.Stat(res1, &before))
	src.change()
	waitFor(t, 30*time.Second, "the update's links", func() bool {
		v := make([]byte, 4096)
		n, err := syscall.Getxattr(res1, "user.resourcesync.link.via", v)
		return err == nil && string(v[:n]) == "http://aggregator1.example.com/res1.html"
	})
	got = xattrsOf(t, res1)
	assert.Equal(t, base+"/meta/res1-v2.xml", got["user.resourcesync.link.describedby"])
	assert.JSONEq(t, `[{"href":"`+base+`/meta/res1-v2.xml","modified":"2024-01-02T00:00:00Z"}]`, got["user.resourcesync.link.describedby.json"])
	for _, gone := range []string{"memento", "memento.json", "timegate", "timemap", "collection", "patch", "canonical", "alternate"} {
		assert.NotContains(t, got, "user.resourcesync.link."+gone)
	}
	var after syscall.Stat_t
	require.NoError(t, syscall.Stat(res1, &after))
	assert.Equal(t, before.Ino, after.Ino, "a link-only change is no new version")
	body, err = os.ReadFile(res1)
	require.NoError(t, err)
	assert.Equal(t, "res1\n", string(body))

	// A remount restores the links from the snapshot.
	m.unmount(t)
	m = mountAt(t, base, m.dir, filepath.Join(filepath.Dir(m.dir), "cache"), "--poll-interval", "0")
	log, err := os.ReadFile(m.logFile)
	require.NoError(t, err)
	assert.Contains(t, string(log), "catalog loaded from snapshot")
	assert.Equal(t, got, xattrsOf(t, res1))
	assert.Equal(t, res3, xattrsOf(t, m.path("res3.txt")))
}
