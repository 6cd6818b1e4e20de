package e2e

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// handSource serves hand-written ResourceSync documents and resource bytes
// on 127.0.0.1. In a document, {base} is the server's URL (no trailing
// slash). Pages may be replaced while it serves.
type handSource struct {
	mu     sync.Mutex
	pages  map[string]string
	status map[string]int
	asked  map[string]int // requests per path
	base   string
}

func startHandSource(t *testing.T, pages map[string]string) *handSource {
	t.Helper()
	h := &handSource{pages: pages, status: map[string]int{}, asked: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(srv.Close)
	h.base = srv.URL
	return h
}

func (h *handSource) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	body, ok := h.pages[r.URL.Path]
	code := h.status[r.URL.Path]
	h.asked[r.URL.Path]++
	h.mu.Unlock()
	if code != 0 {
		http.Error(w, "failing on purpose", code)
		return
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	data := strings.ReplaceAll(body, "{base}", h.base)
	http.ServeContent(w, r, "", time.Time{}, strings.NewReader(data))
}

func (h *handSource) set(path, body string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pages[path] = body
}

func (h *handSource) fail(path string, code int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.status[path] = code
}

func (h *handSource) requests(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.asked[path]
}

func (h *handSource) remove(path string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.pages, path)
}

// localhost is the Source's URL spelled with localhost, not 127.0.0.1.
func (h *handSource) localhost() string {
	return strings.Replace(h.base, "127.0.0.1", "localhost", 1)
}

// Documents after the examples of ResourceSync 1.1 (§8, §9, §10, §12).
const (
	handSD = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description"/>
  <url><loc>{base}/set/caps.xml</loc><rs:md capability="capabilitylist"/></url>
</urlset>`
	handCaps = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/set/rl.xml</loc><rs:md capability="resourcelist"/></url>
  <url><loc>{base}/set/cl.xml</loc><rs:md capability="changelistindex"/></url>
</urlset>`
	handRL = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/set/caps.xml"/>
  <rs:md capability="resourcelist" at="2024-01-02T00:00:00Z"/>
  <url><loc>{base}/set/a.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="6"/></url>
  <url><loc>{base}/set/b.txt</loc><lastmod>2024-01-01T00:00:00Z</lastmod><rs:md length="5"/></url>
</urlset>`
	handCL = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/set/caps.xml"/>
  <rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
  CHANGES
</urlset>`
)

func handSet() map[string]string {
	return map[string]string{
		"/.well-known/resourcesync": handSD,
		"/set/caps.xml":             handCaps,
		"/set/rl.xml":               handRL,
		"/set/cl.xml":               strings.Replace(handCL, "CHANGES", "", 1),
		"/set/a.txt":                "alpha\n",
		"/set/b.txt":                "beta\n",
	}
}

// A mount from a Resource List's URL climbs its up links to the Capability
// List and follows the Change List it names.
func TestDiscoveryMountFromResourceListFollows(t *testing.T) {
	t.Parallel()
	h := startHandSource(t, handSet())
	m := mount(t, h.base+"/set/rl.xml", "--poll-interval", "1s")
	// Discovery reads the Resource List's header, its Capability List and
	// Source Description once each; loading reads the Resource List.
	assert.Equal(t, []int{1, 1, 2}, []int{h.requests("/.well-known/resourcesync"), h.requests("/set/caps.xml"), h.requests("/set/rl.xml")})
	assert.Equal(t, []string{"set/a.txt", "set/b.txt"}, relFiles(t, m.dir))
	got, err := os.ReadFile(m.path("set/a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "alpha\n", string(got))

	now := time.Now().UTC().Format(time.RFC3339)
	h.set("/set/c.txt", "gamma!!\n")
	h.set("/set/cl.xml", strings.Replace(handCL, "CHANGES", `
  <url><loc>{base}/set/c.txt</loc><lastmod>`+now+`</lastmod><rs:md change="created" datetime="`+now+`" length="8"/></url>
  <url><loc>{base}/set/b.txt</loc><rs:md change="deleted" datetime="`+now+`"/></url>`, 1))
	h.remove("/set/b.txt")
	waitFor(t, hangBound, "the Change List's changes to show", func() bool {
		files := relFiles(t, m.dir)
		return len(files) == 2 && files[0] == "set/a.txt" && files[1] == "set/c.txt"
	})
	_, err = os.Stat(m.path("set/b.txt"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
	got, err = os.ReadFile(m.path("set/c.txt"))
	require.NoError(t, err)
	assert.Equal(t, "gamma!!\n", string(got))
}

// A Source Description Index names two Source Descriptions; mounted through
// a URL spelled with localhost while its documents say 127.0.0.1, both sets
// are at the root of the tree, not under @127.0.0.1:PORT.
func TestDiscoveryDescriptionIndexAndOrigin(t *testing.T) {
	t.Parallel()
	pages := handSet()
	pages["/.well-known/resourcesync"] = `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description"/>
  <sitemap><loc>{base}/sd1.xml</loc></sitemap>
  <sitemap><loc>{base}/sd2.xml</loc></sitemap>
</sitemapindex>`
	pages["/sd1.xml"] = handSD
	pages["/sd2.xml"] = strings.ReplaceAll(handSD, "/set/", "/other/")
	pages["/other/caps.xml"] = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/sd2.xml"/>
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/other/rl.xml</loc><rs:md capability="resourcelist"/></url>
</urlset>`
	pages["/other/rl.xml"] = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcelist" at="2024-01-02T00:00:00Z"/>
  <url><loc>{base}/other/z.txt</loc><rs:md length="4"/></url>
</urlset>`
	pages["/other/z.txt"] = "zed\n"
	h := startHandSource(t, pages)
	m := mount(t, h.localhost()+"/")
	assert.Equal(t, []string{"other/z.txt", "set/a.txt", "set/b.txt"}, relFiles(t, m.dir))
	got, err := os.ReadFile(m.path("other/z.txt"))
	require.NoError(t, err)
	assert.Equal(t, "zed\n", string(got))
}

// A Source mounted through localhost is remembered under the origin its
// documents name: the remount reads its snapshot (no Resource List read),
// and the paths stay.
func TestDiscoveryRemountThroughLocalhost(t *testing.T) {
	t.Parallel()
	h := startHandSource(t, handSet())
	base := t.TempDir()
	dir, cacheDir := filepath.Join(base, "mnt"), filepath.Join(base, "cache")
	require.NoError(t, os.Mkdir(dir, 0o755))
	m := mountAt(t, h.localhost()+"/", dir, cacheDir, "--poll-interval", "0")
	assert.Equal(t, []string{"set/a.txt", "set/b.txt"}, relFiles(t, m.dir))
	m.unmount(t)
	waitFor(t, hangBound, "the unmount", func() bool { return !isMountPoint(dir) })
	require.Equal(t, 1, h.requests("/set/rl.xml"))

	m = mountAt(t, h.localhost()+"/", dir, cacheDir, "--poll-interval", "0")
	assert.Equal(t, []string{"set/a.txt", "set/b.txt"}, relFiles(t, m.dir))
	assert.Equal(t, 1, h.requests("/set/rl.xml"), "the remount reads the snapshot, not the Resource List")
	got, err := os.ReadFile(m.path("set/b.txt"))
	require.NoError(t, err)
	assert.Equal(t, "beta\n", string(got))
}

// inspect reports a failing document on its own line and reads the rest;
// it exits non-zero only when nothing could be discovered.
func TestDiscoveryInspectReportsFailedDocuments(t *testing.T) {
	t.Parallel()
	h := startHandSource(t, handSet())
	h.fail("/set/cl.xml", http.StatusInternalServerError)
	out, stderr, err := run(t, time.Minute, rsfsBin, "inspect", "--retries", "0", h.base+"/set/rl.xml")
	require.NoError(t, err, "exit status 0: %s", stderr)
	assert.Contains(t, out, "resources:     2 (11 B)")
	failLine := ""
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "FAILED") {
			assert.Empty(t, failLine, "one FAILED line: %s", out)
			failLine = line
		}
	}
	assert.Contains(t, failLine, h.base+"/set/cl.xml")
	assert.Contains(t, failLine, "500")
	assert.Contains(t, out, "polls "+h.base+"/set/cl.xml")
	assert.Contains(t, out, "from 2024-01-02T00:00:00Z")
	assert.Contains(t, out, "warning "+h.base+"/set/caps.xml: line 6: non-standard capability name")
	assert.Contains(t, out, "1 document(s) could not be read")

	rep := inspectJSON(t, "--retries", "0", h.base+"/")
	sets := array(t, rep, "sets")
	require.Len(t, sets, 1)
	var errs []string
	for _, d := range array(t, sets[0], "documents") {
		if e, _ := d["error"].(string); e != "" {
			errs = append(errs, fmt.Sprint(d["url"])+" "+e)
		}
	}
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0], h.base+"/set/cl.xml")
	assert.Contains(t, errs[0], "500")
	assert.Equal(t, float64(2), number(t, sets[0], "resources"))
	assert.Equal(t, []any{h.base + "/set/cl.xml"}, object(t, sets[0], "follow")["polled"])

	// Nothing to discover: the only Capability List fails.
	h.fail("/set/caps.xml", http.StatusInternalServerError)
	_, stderr, err = run(t, time.Minute, rsfsBin, "inspect", "--retries", "0", h.base+"/")
	require.Error(t, err)
	assert.Contains(t, stderr, h.base+"/set/caps.xml")
}

// robots.txt names a Resource List; inspect climbs to its Capability List
// and plans to poll its Change List.
func TestDiscoveryInspectFromRobots(t *testing.T) {
	t.Parallel()
	pages := handSet()
	delete(pages, "/.well-known/resourcesync")
	pages["/robots.txt"] = "User-agent: *\nDisallow: /tmp/\nSitemap: {base}/set/rl.xml\n"
	h := startHandSource(t, pages)
	out, stderr, err := run(t, time.Minute, rsfsBin, "inspect", "--retries", "0", h.base+"/")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "Resource set 1: "+h.base+"/set/caps.xml")
	assert.Contains(t, out, "polls "+h.base+"/set/cl.xml")
	assert.Contains(t, out, "FAILED  "+h.base+"/.well-known/resourcesync", "the up link that cannot be followed")
}

// relFiles lists the regular files under dir, relative and sorted; nil
// if the walk fails (a file removed while it walks).
func relFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			out = append(out, strings.TrimPrefix(p, dir+"/"))
		}
		return nil
	})
	if err != nil {
		return nil
	}
	sort.Strings(out)
	return out
}
