package e2e

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Documents after ResourceSync 1.1's examples 2 and 3 (§6, §7): a Source
// Description naming three Capability Lists, each naming one Resource
// List of one resource.
const (
	threeSetsDescription = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="describedby" href="{base}/info_about_source.xml"/>
  <rs:md capability="description"/>
  <url>
      <loc>{base}/dataset1/capabilitylist.xml</loc>
      <rs:md capability="capabilitylist"/>
  </url>
  <url>
      <loc>{base}/dataset2/capabilitylist.xml</loc>
      <rs:md capability="capabilitylist"/>
  </url>
  <url>
      <loc>{base}/dataset3/capabilitylist.xml</loc>
      <rs:md capability="capabilitylist"/>
  </url>
</urlset>`
	setCapabilityList = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/>
  <url>
      <loc>{base}/{set}/resourcelist.xml</loc>
      <rs:md capability="resourcelist"/>
  </url>
</urlset>`
	setResourceList = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/{set}/capabilitylist.xml"/>
  <rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>
  <url>
      <loc>{base}/{set}/res1</loc>
      <lastmod>2013-01-02T13:00:00Z</lastmod>
      <rs:md length="10"/>
  </url>
</urlset>`
	// A Capability List cut off in the middle, as a reset connection or a
	// full disk leaves one.
	truncatedCapabilityList = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="capabilitylist"/>
  <url>
      <loc>{base}/dataset3/resour`
)

// threeSetsPages is the Source of threeSetsDescription with every set
// readable.
func threeSetsPages() map[string]string {
	pages := map[string]string{"/.well-known/resourcesync": threeSetsDescription}
	for _, set := range []string{"dataset1", "dataset2", "dataset3"} {
		pages["/"+set+"/capabilitylist.xml"] = strings.ReplaceAll(setCapabilityList, "{set}", set)
		pages["/"+set+"/resourcelist.xml"] = strings.ReplaceAll(setResourceList, "{set}", set)
		pages["/"+set+"/res1"] = set + "!\n"
	}
	return pages
}

// setsDegraded returns, by set, the documents `rsfs status --json` says
// it failed to read, each as "URL error".
func setsDegraded(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out, stderr, err := run(t, 10*time.Second, rsfsBin, "status", "--json", dir)
	require.NoError(t, err, stderr)
	var st struct {
		Sets []struct {
			Set      string `json:"set"`
			Degraded []struct {
				Doc   string    `json:"doc"`
				Error string    `json:"error"`
				Since time.Time `json:"since"`
			} `json:"degraded"`
		} `json:"sets"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &st), out)
	got := map[string][]string{}
	for _, s := range st.Sets {
		got[s.Set] = []string{}
		for _, d := range s.Degraded {
			require.False(t, d.Since.IsZero(), "since when: %s", out)
			got[s.Set] = append(got[s.Set], d.Doc+" "+d.Error)
		}
	}
	return got
}

// countLines counts the log's lines that hold every one of parts.
func countLines(log string, parts ...string) int {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

// A Source Description names three Capability Lists: one reads, one
// answers 404, one is cut off. The mount comes up from the set that reads,
// warns once of each other one naming it and the error, shows each among
// its set's degraded documents in rsfs status, and tries them again at
// each poll: once the 404 one appears, its set joins the tree.
func TestCapabilityListThatCannotBeRead(t *testing.T) {
	t.Parallel()
	pages := threeSetsPages()
	delete(pages, "/dataset2/capabilitylist.xml")
	pages["/dataset3/capabilitylist.xml"] = truncatedCapabilityList
	h := startHandSource(t, pages)
	m := mount(t, h.base+"/", "--poll-interval", "200ms", "--retries", "0")
	assert.Equal(t, []string{"dataset1/res1"}, relFiles(t, m.dir))
	got, err := os.ReadFile(m.path("dataset1/res1"))
	require.NoError(t, err)
	assert.Equal(t, "dataset1!\n", string(got))

	log, err := os.ReadFile(m.logFile)
	require.NoError(t, err)
	for set, why := range map[string]string{"dataset2": "404", "dataset3": "XML"} {
		assert.Equal(t, 1, countLines(string(log), `level=WARN msg="capability list not read`, h.base+"/"+set+"/capabilitylist.xml", why),
			"one warning naming %s and why:\n%s", set, log)
	}
	asked := h.requests("/dataset2/capabilitylist.xml")
	waitFor(t, hangBound, "the Capability List to be tried again", func() bool {
		return h.requests("/dataset2/capabilitylist.xml") > asked
	})
	degraded := setsDegraded(t, m.dir)
	assert.Equal(t, []string{}, degraded[h.base+"/dataset1/capabilitylist.xml"])
	require.Len(t, degraded[h.base+"/dataset2/capabilitylist.xml"], 1, "%v", degraded)
	assert.Contains(t, degraded[h.base+"/dataset2/capabilitylist.xml"][0], h.base+"/dataset2/capabilitylist.xml")
	assert.Contains(t, degraded[h.base+"/dataset2/capabilitylist.xml"][0], "404")
	require.Len(t, degraded[h.base+"/dataset3/capabilitylist.xml"], 1, "%v", degraded)
	assert.Contains(t, degraded[h.base+"/dataset3/capabilitylist.xml"][0], "XML")
	assert.Zero(t, h.requests("/dataset2/resourcelist.xml"), "nothing names the set's Resource List yet")
	st := readStatus(t, m.dir)
	t.Logf("after %d polls: %d requests for the 404 Capability List, %d for the cut-off one", st.Polls.Count,
		h.requests("/dataset2/capabilitylist.xml"), h.requests("/dataset3/capabilitylist.xml"))

	h.set("/dataset2/capabilitylist.xml", threeSetsPages()["/dataset2/capabilitylist.xml"])
	waitFor(t, hangBound, "the set to join the tree", func() bool {
		return len(relFiles(t, m.dir)) == 2
	})
	assert.Equal(t, []string{"dataset1/res1", "dataset2/res1"}, relFiles(t, m.dir))
	got, err = os.ReadFile(m.path("dataset2/res1"))
	require.NoError(t, err)
	assert.Equal(t, "dataset2!\n", string(got))
	degraded = setsDegraded(t, m.dir)
	assert.Equal(t, []string{}, degraded[h.base+"/dataset2/capabilitylist.xml"], "read now")
	assert.Len(t, degraded[h.base+"/dataset3/capabilitylist.xml"], 1, "still cut off")
}

// A set read by the first mount whose Capability List fails at the
// remount keeps its files from the snapshot, still readable, its
// Capability List shown degraded and tried again; when it reads again,
// nothing is lost. A set whose Capability List was never read is
// remembered as unread across the remount.
func TestUnreadCapabilityListAcrossRemount(t *testing.T) {
	t.Parallel()
	pages := threeSetsPages()
	pages["/dataset3/capabilitylist.xml"] = truncatedCapabilityList
	h := startHandSource(t, pages)
	base := t.TempDir()
	dir, cacheDir := filepath.Join(base, "mnt"), filepath.Join(base, "cache")
	require.NoError(t, os.Mkdir(dir, 0o755))
	m := mountAt(t, h.base+"/", dir, cacheDir, "--poll-interval", "1h", "--retries", "0")
	require.Equal(t, []string{"dataset1/res1", "dataset2/res1"}, relFiles(t, m.dir))
	m.unmount(t)
	waitFor(t, hangBound, "the unmount", func() bool { return !isMountPoint(dir) })
	lists := h.requests("/dataset2/resourcelist.xml")

	h.fail("/dataset2/capabilitylist.xml", http.StatusServiceUnavailable)
	m = mountAt(t, h.base+"/", dir, cacheDir, "--poll-interval", "200ms", "--retries", "0")
	assert.Equal(t, []string{"dataset1/res1", "dataset2/res1"}, relFiles(t, m.dir), "the set's files are kept")
	got, err := os.ReadFile(m.path("dataset2/res1"))
	require.NoError(t, err)
	assert.Equal(t, "dataset2!\n", string(got))
	assert.Equal(t, lists, h.requests("/dataset2/resourcelist.xml"), "the remount reads the snapshot, not the Resource List")
	asked := h.requests("/dataset2/capabilitylist.xml")
	waitFor(t, hangBound, "the Capability List to be tried again", func() bool {
		return h.requests("/dataset2/capabilitylist.xml") > asked+1
	})
	degraded := setsDegraded(t, m.dir)
	require.Len(t, degraded[h.base+"/dataset2/capabilitylist.xml"], 1, "%v", degraded)
	assert.Contains(t, degraded[h.base+"/dataset2/capabilitylist.xml"][0], "503")
	require.Len(t, degraded[h.base+"/dataset3/capabilitylist.xml"], 1, "%v", degraded)
	assert.Equal(t, []string{"dataset1/res1", "dataset2/res1"}, relFiles(t, m.dir), "polls keep the set's files")

	h.fail("/dataset2/capabilitylist.xml", 0)
	waitFor(t, hangBound, "the Capability List to read", func() bool {
		return len(setsDegraded(t, m.dir)[h.base+"/dataset2/capabilitylist.xml"]) == 0
	})
	assert.Equal(t, []string{"dataset1/res1", "dataset2/res1"}, relFiles(t, m.dir))
}

// When no Capability List the Source Description names can be read, the
// mount fails, naming each one and its error, and leaves no mount behind.
func TestNoCapabilityListCanBeRead(t *testing.T) {
	t.Parallel()
	pages := threeSetsPages()
	delete(pages, "/dataset1/capabilitylist.xml")
	pages["/dataset3/capabilitylist.xml"] = truncatedCapabilityList
	h := startHandSource(t, pages)
	h.fail("/dataset2/capabilitylist.xml", http.StatusInternalServerError)
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	_, stderr, err := run(t, time.Minute, rsfsBin, "mount", h.base+"/", mnt, "--log-file", filepath.Join(dir, "log"),
		"--cache-dir", "none", "--retries", "0")
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "rsfs mount must fail: %v %s", err, stderr)
	for _, want := range []string{
		h.base + "/dataset1/capabilitylist.xml", "404",
		h.base + "/dataset2/capabilitylist.xml", "500",
		h.base + "/dataset3/capabilitylist.xml", "XML",
	} {
		assert.Contains(t, stderr, want)
	}
	assert.False(t, isMountPoint(mnt), "no mount left behind")
}

// A set's Resource List that answers 404 at the first mount leaves out
// only its resources: the mount comes up from the other sets, warns once
// naming the list and the error, shows it among its set's degraded
// documents, and reads it again at each poll; once it reads, its
// resources join the tree.
func TestResourceListThatCannotBeRead(t *testing.T) {
	t.Parallel()
	pages := threeSetsPages()
	delete(pages, "/dataset2/resourcelist.xml")
	h := startHandSource(t, pages)
	m := mount(t, h.base+"/", "--poll-interval", "200ms", "--retries", "0")
	assert.Equal(t, []string{"dataset1/res1", "dataset3/res1"}, relFiles(t, m.dir))
	log, err := os.ReadFile(m.logFile)
	require.NoError(t, err)
	assert.Equal(t, 1, countLines(string(log), `level=WARN msg="resource list not read`, h.base+"/dataset2/resourcelist.xml", "404"),
		"one warning naming the list and why:\n%s", log)
	asked := h.requests("/dataset2/resourcelist.xml")
	waitFor(t, hangBound, "the Resource List to be tried again", func() bool {
		return h.requests("/dataset2/resourcelist.xml") > asked
	})
	degraded := setsDegraded(t, m.dir)
	require.Len(t, degraded[h.base+"/dataset2/capabilitylist.xml"], 1, "%v", degraded)
	assert.Contains(t, degraded[h.base+"/dataset2/capabilitylist.xml"][0], h.base+"/dataset2/resourcelist.xml")
	assert.Contains(t, degraded[h.base+"/dataset2/capabilitylist.xml"][0], "404")
	assert.Equal(t, []string{}, degraded[h.base+"/dataset1/capabilitylist.xml"])

	h.set("/dataset2/resourcelist.xml", threeSetsPages()["/dataset2/resourcelist.xml"])
	waitFor(t, hangBound, "the set's resources to join the tree", func() bool {
		return len(relFiles(t, m.dir)) == 3
	})
	got, err := os.ReadFile(m.path("dataset2/res1"))
	require.NoError(t, err)
	assert.Equal(t, "dataset2!\n", string(got))
	assert.Equal(t, []string{}, setsDegraded(t, m.dir)[h.base+"/dataset2/capabilitylist.xml"], "read now")
}

// A Source Description that comes to name a Capability List that cannot
// be read yet: the new set shows degraded, is tried again at each poll,
// and joins the tree once its Capability List reads.
func TestNewCapabilityListThatCannotBeReadYet(t *testing.T) {
	t.Parallel()
	pages := threeSetsPages()
	oneSet := strings.Replace(threeSetsDescription, `  <url>
      <loc>{base}/dataset2/capabilitylist.xml</loc>
      <rs:md capability="capabilitylist"/>
  </url>
`, "", 1)
	oneSet = strings.Replace(oneSet, `  <url>
      <loc>{base}/dataset3/capabilitylist.xml</loc>
      <rs:md capability="capabilitylist"/>
  </url>
`, "", 1)
	require.NotContains(t, oneSet, "dataset2")
	pages["/.well-known/resourcesync"] = oneSet
	delete(pages, "/dataset2/capabilitylist.xml")
	h := startHandSource(t, pages)
	m := mount(t, h.base+"/", "--poll-interval", "200ms", "--retries", "0")
	assert.Equal(t, []string{"dataset1/res1"}, relFiles(t, m.dir))

	h.set("/.well-known/resourcesync", strings.Replace(threeSetsDescription, `  <url>
      <loc>{base}/dataset3/capabilitylist.xml</loc>
      <rs:md capability="capabilitylist"/>
  </url>
`, "", 1))
	waitFor(t, hangBound, "the new set to show degraded", func() bool {
		return len(setsDegraded(t, m.dir)[h.base+"/dataset2/capabilitylist.xml"]) == 1
	})
	assert.Contains(t, setsDegraded(t, m.dir)[h.base+"/dataset2/capabilitylist.xml"][0], "404")
	asked := h.requests("/dataset2/capabilitylist.xml")
	waitFor(t, hangBound, "the Capability List to be tried again", func() bool {
		return h.requests("/dataset2/capabilitylist.xml") > asked
	})
	assert.Equal(t, []string{"dataset1/res1"}, relFiles(t, m.dir))

	h.set("/dataset2/capabilitylist.xml", threeSetsPages()["/dataset2/capabilitylist.xml"])
	waitFor(t, hangBound, "the set to join the tree", func() bool {
		return len(relFiles(t, m.dir)) == 2
	})
	assert.Equal(t, []string{"dataset1/res1", "dataset2/res1"}, relFiles(t, m.dir))
	assert.Equal(t, []string{}, setsDegraded(t, m.dir)[h.base+"/dataset2/capabilitylist.xml"])
}
