package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowListSource serves a Source of one large Resource List of n entries,
// with its Content-Length, 64 KiB every 10 ms: a list whose bytes a user
// sees arriving.
func slowListSource(t *testing.T, n int) *httptest.Server {
	t.Helper()
	return slowListSourceAt(t, n, "2026-01-01T00:00:00Z")
}

// slowListSourceAt is slowListSource with the list's at attribute (one
// without a time zone is a deviation a mount warns of).
func slowListSourceAt(t *testing.T, n int, at string) *httptest.Server {
	t.Helper()
	var base string
	doc := func(path string) string {
		switch path {
		case "/.well-known/resourcesync":
			return `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description"/>
  <url><loc>` + base + `/capabilitylist.xml</loc><rs:md capability="capabilitylist"/></url>
</urlset>`
		case "/capabilitylist.xml":
			return `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="` + base + `/.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/>
  <url><loc>` + base + `/resourcelist.xml</loc><rs:md capability="resourcelist"/></url>
</urlset>`
		case "/resourcelist.xml":
			var b strings.Builder
			b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="` + base + `/capabilitylist.xml"/>
  <rs:md capability="resourcelist" at="` + at + `"/>
`)
			for i := range n {
				fmt.Fprintf(&b, "  <url><loc>%s/files/%06d.txt</loc><lastmod>2026-01-01T00:00:00Z</lastmod><rs:md length=\"6\"/></url>\n", base, i)
			}
			b.WriteString("</urlset>\n")
			return b.String()
		}
		return ""
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := doc(r.URL.Path)
		if body == "" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		for len(body) > 0 {
			k := min(len(body), 64<<10)
			if _, err := w.Write([]byte(body[:k])); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			body = body[k:]
			time.Sleep(10 * time.Millisecond) // the network, not the test: a slow link
		}
	}))
	base = srv.URL
	t.Cleanup(srv.Close)
	return srv
}

// TestLoadingShowsBytesOnATerminal mounts with a terminal (script(1)
// gives rsfs one): the loading line shows the list's bytes arriving, with
// a bar once their total is known, the rate, the lists and the
// resources, and ends in a line that stays. Without a terminal, and in the
// log, nothing of it.
func TestLoadingShowsBytesOnATerminal(t *testing.T) {
	needFUSE(t)
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("skipping: needs script(1) (util-linux) for a terminal")
	}
	srv := slowListSource(t, 40000) // about 4.5 MiB: 0.7 s or more
	url := srv.URL + "/"
	dir := mountDir(t)
	logFile := filepath.Join(t.TempDir(), "rsfs.log")
	cmd := fmt.Sprintf("%s mount %s %s --cache-dir none --log-file %s", rsfsBin, url, dir, logFile)
	out, stderr, err := run(t, 2*time.Minute, "script", "-qfec", cmd, "/dev/null")
	require.NoError(t, err, "%s%s", out, stderr)
	m := &mounted{url: url, dir: dir, logFile: logFile}
	t.Cleanup(func() { m.unmount(t) })

	frames := strings.Split(out, "\r")
	var percents []int
	var last string
	bar := regexp.MustCompile(`^loading: \[[#-]{20}\] +(\d+)% [0-9.]+/4\.\d MiB(, [0-9.]+ [KM]iB/s)?; [01]/1 lists, [0-9,]+ resources\x1b\[K`)
	for _, f := range frames {
		if m := bar.FindStringSubmatch(f); m != nil {
			p, _ := strconv.Atoi(m[1])
			percents = append(percents, p)
			last = f
		}
	}
	t.Logf("%d frames with a bar, at %v%%; the last: %q", len(percents), percents, last)
	require.NotEmpty(t, percents, "output: %q", out)
	assert.True(t, func() bool {
		for _, p := range percents {
			if p > 0 && p < 100 {
				return true
			}
		}
		return false
	}(), "a frame on the way: %v", percents)
	assert.Regexp(t, `^loading: \[#{20}\] 100% (4\.\d)/(4\.\d) MiB, [0-9.]+ [KM]iB/s; 1/1 lists, 40,000 resources\x1b\[K$`, last)
	assert.Contains(t, out, "40,000 resources\x1b[K\r\n", "the last loading line stays (the terminal writes \\n as \\r\\n)")
	assert.Contains(t, out, "mounted 40,000 resources from "+url)

	log, err := os.ReadFile(logFile)
	require.NoError(t, err)
	assert.NotContains(t, string(log), "loading:")

	// Without a terminal: no loading line.
	m.unmount(t)
	stdout, stderr, err := run(t, 2*time.Minute, rsfsBin, "mount", url, dir, "--cache-dir", "none", "--log-file", logFile)
	require.NoError(t, err, stderr)
	assert.NotContains(t, stdout+stderr, "loading")
	assert.NotContains(t, stdout+stderr, "\r")
}
