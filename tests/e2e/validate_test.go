package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specPages is a Source written from ResourceSync 1.1's examples (12, 13,
// 14 and 19; Z39.99-2017), on the test server: it conforms.
func specPages() map[string]string {
	return map[string]string{
		"/.well-known/resourcesync": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
  xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="describedby" href="{base}/info_about_source.xml"/>
  <rs:md capability="description"/>
  <url>
    <loc>{base}/dataset1/capabilitylist.xml</loc>
    <rs:md capability="capabilitylist"/>
  </url>
</urlset>`,
		"/dataset1/capabilitylist.xml": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
  xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/>
  <url>
    <loc>{base}/dataset1/resourcelist.xml</loc>
    <rs:md capability="resourcelist"/>
  </url>
  <url>
    <loc>{base}/dataset1/changelist.xml</loc>
    <rs:md capability="changelist"/>
  </url>
</urlset>`,
		"/dataset1/resourcelist.xml": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
  xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/dataset1/capabilitylist.xml"/>
  <rs:md capability="resourcelist"
    at="2013-01-03T09:00:00Z"
    completed="2013-01-03T09:01:00Z"/>
  <url>
    <loc>{base}/res1</loc>
    <lastmod>2013-01-02T13:00:00Z</lastmod>
    <rs:md hash="md5:1584abdf8ebdc9802ac0c6a7402c03b6"
      length="8876"
      type="text/html"/>
  </url>
  <url>
    <loc>{base}/res2</loc>
    <lastmod>2013-01-02T14:00:00Z</lastmod>
    <rs:md hash="md5:1e0d5cb8ef6ba40c99b14c0237be735e
      sha-256:854f61290e2e197a11bc91063afce22e43f8ccc655237050ace766adc68dc784"
      length="14599"
      type="application/pdf"/>
  </url>
</urlset>`,
		"/dataset1/changelist.xml": `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
  xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/dataset1/capabilitylist.xml"/>
  <rs:md capability="changelist"
    from="2013-01-03T00:00:00Z"/>
  <url>
    <loc>{base}/res1.html</loc>
    <lastmod>2000-01-01T01:01:00Z</lastmod>
    <rs:md change="created" datetime="2013-01-03T11:00:00Z"/>
  </url>
  <url>
    <loc>{base}/res2.pdf</loc>
    <lastmod>2013-01-03T13:00:00Z</lastmod>
    <rs:md change="updated" datetime="2013-01-03T13:00:00Z"/>
  </url>
  <url>
    <loc>{base}/res3.tiff</loc>
    <rs:md change="deleted" datetime="2013-01-03T18:00:00Z"/>
  </url>
  <url>
    <loc>{base}/res2.pdf</loc>
    <rs:md change="updated"/>
  </url>
</urlset>`,
	}
}

// deviantPages is specPages with four deviations, each of a kind real
// publishers write: a Resource List with no at and a lastmod with no time
// zone; a Change List with no from and its entries newest first.
func deviantPages() map[string]string {
	pages := specPages()
	rl := pages["/dataset1/resourcelist.xml"]
	rl = strings.Replace(rl, `
    at="2013-01-03T09:00:00Z"
    completed="2013-01-03T09:01:00Z"/>`, `/>`, 1)
	rl = strings.Replace(rl, "<lastmod>2013-01-02T14:00:00Z</lastmod>", "<lastmod>2013-01-02T14:00:00</lastmod>", 1)
	pages["/dataset1/resourcelist.xml"] = rl
	pages["/dataset1/changelist.xml"] = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
  xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/dataset1/capabilitylist.xml"/>
  <rs:md capability="changelist"/>
  <url>
    <loc>{base}/res3.tiff</loc>
    <rs:md change="deleted" datetime="2013-01-03T18:00:00Z"/>
  </url>
  <url>
    <loc>{base}/res2.pdf</loc>
    <rs:md change="updated" datetime="2013-01-03T13:00:00Z"/>
  </url>
</urlset>`
	return pages
}

// inspectStatus runs rsfs inspect and returns its stdout and exit status.
func inspectStatus(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, stderr, err := run(t, time.Minute, rsfsBin, append([]string{"inspect"}, args...)...)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out, ee.ExitCode()
	}
	require.NoError(t, err, stderr)
	return out, 0
}

// inspect --strict is a validator a publisher's CI can run: exit status 1
// with every deviation listed once, with its clause and reading; 0 on a
// Source written from the standard's examples. Without --strict the same
// report exits 0.
func TestInspectStrictListsDeviations(t *testing.T) {
	t.Parallel()
	h := startHandSource(t, deviantPages())
	rl, cl := h.base+"/dataset1/resourcelist.xml", h.base+"/dataset1/changelist.xml"
	want := []string{
		"warning " + rl + ": line 5: no at on the root rs:md [ResourceSync 1.1 §10.1, §11.1, §11.2, Table 4: at is required",
		"warning " + rl + ": line 15: datetime without time zone: 2013-01-02T14:00:00 [ResourceSync 1.1 §7: values are W3C Datetime, whose times carry a zone designator]; UTC assumed",
		"warning " + cl + ": line 5: no from on the root rs:md [ResourceSync 1.1 §12.1, §13.1, §13.2, Table 4: from is required",
		"warning " + cl + ": line 10: changes out of time order: " + h.base + "/res2.pdf at 2013-01-03T13:00:00Z after 2013-01-03T18:00:00Z [ResourceSync 1.1 §12.1, §13.2: entries are in chronological order, the least recently changed first]; applied in time order (of datetime, or of lastmod in a list with no datetime)",
	}
	out, status := inspectStatus(t, "--strict", h.base+"/")
	assert.Equal(t, 1, status, out)
	for _, w := range want {
		assert.Equal(t, 1, strings.Count(out, w), "listed once: %s\nin:\n%s", w, out)
	}
	assert.Equal(t, len(want), strings.Count(out, "warning "), out)
	assert.Contains(t, out, "\n4 deviation(s) from ResourceSync 1.1 (Z39.99-2017), each listed above with its clause.\n")

	plain, status := inspectStatus(t, h.base+"/")
	assert.Equal(t, 0, status, "without --strict")
	assert.Equal(t, out, plain)

	// Given the Resource List's URL, discovery reads its start before
	// inspect reads it whole: its deviations are listed once still.
	fromList, status := inspectStatus(t, "--strict", rl)
	assert.Equal(t, 1, status, fromList)
	assert.Equal(t, 1, strings.Count(fromList, want[0]), fromList)
	assert.Contains(t, fromList, "\n4 deviation(s)")

	jsonOut, status := inspectStatus(t, "--strict", "--json", h.base+"/")
	assert.Equal(t, 1, status, jsonOut)
	rep := decodeJSON(t, jsonOut)
	assert.Equal(t, float64(4), rep["deviations"])
	var got []string
	for _, s := range array(t, rep, "sets") {
		for _, d := range array(t, s, "documents") {
			if _, ok := d["warnings"]; !ok {
				continue
			}
			for _, w := range array(t, d, "warnings") {
				assert.NotEmpty(t, w["reading"], "%v", w)
				got = append(got, w["url"].(string)+" "+w["error"].(string)+" | "+w["clause"].(string))
				assert.Positive(t, w["line"], "%v", w)
			}
		}
	}
	assert.ElementsMatch(t, []string{
		rl + " no at on the root rs:md | ResourceSync 1.1 §10.1, §11.1, §11.2, Table 4: at is required on a Resource List, a Resource Dump, their indexes and a Resource Dump Manifest",
		rl + " datetime without time zone: 2013-01-02T14:00:00 | ResourceSync 1.1 §7: values are W3C Datetime, whose times carry a zone designator",
		cl + " no from on the root rs:md | ResourceSync 1.1 §12.1, §13.1, §13.2, Table 4: from is required on a Change List, a Change Dump, their indexes and a Change Dump Manifest",
		cl + " changes out of time order: " + h.base + "/res2.pdf at 2013-01-03T13:00:00Z after 2013-01-03T18:00:00Z | ResourceSync 1.1 §12.1, §13.2: entries are in chronological order, the least recently changed first",
	}, got)
}

func TestInspectStrictPassesTheStandardsExamples(t *testing.T) {
	t.Parallel()
	h := startHandSource(t, specPages())
	out, status := inspectStatus(t, "--strict", h.base+"/")
	assert.Equal(t, 0, status, out)
	// The follow plan notes Example 19's undated entry: not a deviation.
	assert.NotContains(t, out, "warning "+h.base)
	assert.NotContains(t, out, "deviation")
	assert.Contains(t, out, "resources:     2 (23475 bytes, 22.9 KiB)")
	assert.Contains(t, out, "changes:       4")

	jsonOut, status := inspectStatus(t, "--strict", "--json", h.base+"/")
	assert.Equal(t, 0, status, jsonOut)
	assert.Equal(t, float64(0), decodeJSON(t, jsonOut)["deviations"])
}

func decodeJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	return rep
}

// A mount logs the deviations inspect lists, from the same code: each of
// inspect's warnings (document, line, deviation, clause, reading) is a
// line of the mount's log.
func TestMountLogsTheDeviationsInspectLists(t *testing.T) {
	t.Parallel()
	h := startHandSource(t, deviantPages())
	jsonOut, _ := inspectStatus(t, "--json", h.base+"/")
	type dev struct {
		URL     string `json:"url"`
		Line    int    `json:"line"`
		Msg     string `json:"error"`
		Clause  string `json:"clause"`
		Reading string `json:"reading"`
	}
	var rep struct {
		Sets []struct {
			Documents []struct {
				Warnings []dev `json:"warnings"`
			} `json:"documents"`
		} `json:"sets"`
	}
	require.NoError(t, json.Unmarshal([]byte(jsonOut), &rep))
	var want []dev
	for _, s := range rep.Sets {
		for _, d := range s.Documents {
			want = append(want, d.Warnings...)
		}
	}
	require.Len(t, want, 4, jsonOut)

	m := mount(t, h.base+"/", "--log-format", "json", "--poll-interval", "200ms")
	logged := func() []dev {
		b, _ := os.ReadFile(m.logFile)
		var out []dev
		for _, line := range strings.Split(string(b), "\n") {
			var rec struct {
				dev
				Msg string `json:"msg"`
			}
			if json.Unmarshal([]byte(line), &rec) != nil || !strings.HasPrefix(rec.Msg, "tolerated: ") {
				continue
			}
			rec.dev.Msg = strings.TrimPrefix(rec.Msg, "tolerated: ")
			out = append(out, rec.dev)
		}
		return out
	}
	waitFor(t, 30*time.Second, "the mount to log every deviation inspect lists", func() bool {
		got := logged()
		for _, w := range want {
			if !slices.Contains(got, w) {
				return false
			}
		}
		return true
	})
	b, _ := os.ReadFile(m.logFile)
	for _, d := range logged() {
		assert.Contains(t, want, d, "a deviation inspect does not list:\n%s", b)
	}
}

// A dump package that cannot be read fails --strict too, though it is no
// deviation of a document: the standard's Resource Dump (Example 17's
// form) names a package that answers 404.
func TestInspectStrictFailsOnAnUnreadablePackage(t *testing.T) {
	t.Parallel()
	pages := specPages()
	pages["/dataset1/capabilitylist.xml"] = strings.Replace(pages["/dataset1/capabilitylist.xml"], "  <url>\n    <loc>{base}/dataset1/changelist.xml</loc>", `  <url>
    <loc>{base}/dataset1/resourcedump.xml</loc>
    <rs:md capability="resourcedump"/>
  </url>
  <url>
    <loc>{base}/dataset1/changelist.xml</loc>`, 1)
	pages["/dataset1/resourcedump.xml"] = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
  xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/dataset1/capabilitylist.xml"/>
  <rs:md capability="resourcedump"
    at="2013-01-03T09:00:00Z"
    completed="2013-01-03T09:04:00Z"/>
  <url>
    <loc>{base}/resourcedump_part1.zip</loc>
    <rs:md type="application/zip"
      length="4765"
      at="2013-01-03T09:00:00Z"
      completed="2013-01-03T09:02:00Z"/>
  </url>
</urlset>`
	h := startHandSource(t, pages)
	out, status := inspectStatus(t, "--strict", "--retries", "0", h.base+"/")
	assert.Equal(t, 1, status, out)
	assert.Contains(t, out, "package "+h.base+"/resourcedump_part1.zip: ")
	assert.Contains(t, out, "404")
	assert.NotContains(t, out, "deviation", "a package that cannot be read is not a deviation")

	out, status = inspectStatus(t, "--retries", "0", h.base+"/")
	assert.Equal(t, 0, status, "without --strict: %s", out)
}
