package e2e

// Hostile input end to end: dump packages that must not stop the mount, and
// documents built to exhaust memory, served by a Source on 127.0.0.1 and
// read through a real mount of the real binary. The ZIPs are written by hand
// (archive/zip, then byte patches); the XML is literal.

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileSite serves fixed pages on 127.0.0.1 and counts the requests per
// path. Bodies may use {base}.
type hostileSite struct {
	srv   *httptest.Server
	base  string // http://127.0.0.1:PORT
	mu    sync.Mutex
	pages map[string]hostilePage
	hits  map[string]int
}

type hostilePage struct {
	body     []byte
	noLength bool              // no Content-Length, no Range: HEAD says nothing, GET is chunked
	stream   func(w io.Writer) // a body too big to hold: written as it is generated
	etag     string            // default: a strong ETag of the body
	ctype    string
	status   int // an error status to answer instead, when set
}

func startHostileSite(t *testing.T) *hostileSite {
	s := &hostileSite{pages: map[string]hostilePage{}, hits: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	s.base = s.srv.URL
	return s
}

func (s *hostileSite) page(path string, p hostilePage) {
	p.body = bytes.ReplaceAll(p.body, []byte("{base}"), []byte(s.base))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[path] = p
}

func (s *hostileSite) text(path, body string) { s.page(path, hostilePage{body: []byte(body)}) }

func (s *hostileSite) gets(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits["GET "+path]
}

func (s *hostileSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.Method+" "+r.URL.Path]++
	p, ok := s.pages[r.URL.Path]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	if p.ctype != "" {
		w.Header().Set("Content-Type", p.ctype)
	}
	switch {
	case p.status != 0:
		http.Error(w, "unavailable", p.status)
	case p.stream != nil:
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			p.stream(w)
		}
	case p.noLength:
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			w.(http.Flusher).Flush() // chunked: no length
			_, _ = w.Write(p.body)
		}
	default:
		etag := p.etag
		if etag == "" {
			sum := sha256.Sum256(p.body)
			etag = `"` + hex.EncodeToString(sum[:8]) + `"`
		}
		w.Header().Set("ETag", etag)
		http.ServeContent(w, r, "", time.Unix(0, 0), bytes.NewReader(p.body))
	}
}

const (
	hostileAt    = "2024-01-02T03:04:05Z"
	hostileNS    = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"`
	goodBody     = "good bytes, read from their URI\n"
	listedBody   = "listed, and a member of the hostile package\n"
	dumpOnlyGood = "only in the good package\n"
	dumpOnlyBad  = "only in the hostile package\n"
)

func sha256Hex(b string) string {
	sum := sha256.Sum256([]byte(b))
	return hex.EncodeToString(sum[:])
}

// manifestEntry is one line of a Resource Dump Manifest.
func manifestEntry(loc, body, path string) string {
	return fmt.Sprintf(`  <url><loc>{base}%s</loc><lastmod>%s</lastmod><rs:md hash="sha-256:%s" length="%d" path="%s"/></url>
`, loc, hostileAt, sha256Hex(body), len(body), path)
}

// buildDumpPackage writes manifest.xml and the members, deflated, with
// archive/zip; the manifest's {base} is left for the site to fill.
func buildDumpPackage(t *testing.T, base string, members map[string]string, manifest string) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	add := func(name, body string) {
		f, err := w.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)})
		require.NoError(t, err)
		_, err = f.Write([]byte(body))
		require.NoError(t, err)
	}
	add("manifest.xml", strings.ReplaceAll(manifest, "{base}", base))
	for _, name := range []string{"resources/listed.txt", "resources/only.txt"} {
		if body, ok := members[name]; ok {
			add(name, body)
		}
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// centralHeader returns the offset of name's central directory header.
func centralHeader(t *testing.T, data []byte, name string) int {
	for i := len(data) - 46; i >= 0; i-- {
		if binary.LittleEndian.Uint32(data[i:]) != 0x02014b50 {
			continue
		}
		n := int(binary.LittleEndian.Uint16(data[i+28:]))
		if i+46+n <= len(data) && string(data[i+46:i+46+n]) == name {
			return i
		}
	}
	t.Fatalf("no central header for %s", name)
	return -1
}

// claimEntries rewrites the end of a package as ZIP64 records whose
// directory claims n entries.
func claimEntries(data []byte, n uint64) []byte {
	eocd := len(data) - 22 // archive/zip writes no comment
	dirSize := uint64(binary.LittleEndian.Uint32(data[eocd+12:]))
	dirOff := uint64(binary.LittleEndian.Uint32(data[eocd+16:]))
	out := append([]byte(nil), data[:eocd]...)
	rec := make([]byte, 56)
	binary.LittleEndian.PutUint32(rec, 0x06064b50)
	binary.LittleEndian.PutUint64(rec[4:], 44)
	binary.LittleEndian.PutUint16(rec[12:], 45)
	binary.LittleEndian.PutUint16(rec[14:], 45)
	binary.LittleEndian.PutUint64(rec[24:], n)
	binary.LittleEndian.PutUint64(rec[32:], n)
	binary.LittleEndian.PutUint64(rec[40:], dirSize)
	binary.LittleEndian.PutUint64(rec[48:], dirOff)
	loc := make([]byte, 20)
	binary.LittleEndian.PutUint32(loc, 0x07064b50)
	binary.LittleEndian.PutUint64(loc[8:], uint64(len(out)))
	binary.LittleEndian.PutUint32(loc[16:], 1)
	end := make([]byte, 22)
	binary.LittleEndian.PutUint32(end, 0x06054b50)
	binary.LittleEndian.PutUint16(end[8:], 0xffff)
	binary.LittleEndian.PutUint16(end[10:], 0xffff)
	binary.LittleEndian.PutUint32(end[12:], 0xffffffff)
	binary.LittleEndian.PutUint32(end[16:], 0xffffffff)
	out = append(out, rec...)
	out = append(out, loc...)
	return append(out, end...)
}

// setStatus makes a page answer an error status (0: serve it again).
func (s *hostileSite) setStatus(path string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pages[path]
	p.status = status
	s.pages[path] = p
}

// A package that fails to open on a read (here: mounted from the snapshot,
// so packages open on first use) is tried again later, not kept failed for
// the life of the mount.
func TestDumpPackageFailureIsRetriedWithoutRemount(t *testing.T) {
	site := startHostileSite(t)
	site.text("/caps.xml", `<?xml version="1.0" encoding="UTF-8"?>
<urlset `+hostileNS+`>
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/rd.xml</loc><rs:md capability="resourcedump"/></url>
</urlset>`)
	site.text("/rd.xml", `<?xml version="1.0" encoding="UTF-8"?>
<urlset `+hostileNS+`>
  <rs:md capability="resourcedump" at="`+hostileAt+`"/>
  <url><loc>{base}/good.zip</loc><rs:md type="application/zip"/></url>
</urlset>`)
	pkg := buildDumpPackage(t, site.base, map[string]string{"resources/only.txt": dumpOnlyGood}, `<?xml version="1.0" encoding="UTF-8"?>
<urlset `+hostileNS+`>
  <rs:md capability="resourcedump-manifest" at="`+hostileAt+`"/>
`+manifestEntry("/dump/only-good.txt", dumpOnlyGood, "/resources/only.txt")+"</urlset>\n")
	site.page("/good.zip", hostilePage{body: pkg})

	base := t.TempDir()
	dir, cacheDir := filepath.Join(base, "mnt"), filepath.Join(base, "cache")
	require.NoError(t, os.Mkdir(dir, 0o755))
	flags := []string{"--retries", "0", "--poll-interval", "0"}
	m := mountAt(t, site.base+"/caps.xml", dir, cacheDir, flags...)
	m.unmount(t) // nothing read: no block cached, the snapshot names the package
	waitFor(t, hangBound, "the unmount", func() bool { return !isMountPoint(dir) })

	site.setStatus("/good.zip", http.StatusServiceUnavailable)
	m = mountAt(t, site.base+"/caps.xml", dir, cacheDir, flags...)
	log, _ := os.ReadFile(m.logFile)
	require.Contains(t, string(log), "catalog loaded from snapshot")
	_, err := os.ReadFile(m.path("dump/only-good.txt"))
	require.ErrorIs(t, err, syscall.EIO, "the package is down")

	site.setStatus("/good.zip", 0)
	var got []byte
	waitFor(t, 60*time.Second, "the member to read once its package is back", func() bool {
		got, err = os.ReadFile(m.path("dump/only-good.txt"))
		if err != nil {
			time.Sleep(250 * time.Millisecond)
		}
		return err == nil
	})
	assert.Equal(t, dumpOnlyGood, string(got))
}

// A hostile or unreadable dump package is skipped with a warning naming it;
// the mount comes up, the good package and the lists serve correct bytes,
// the bad package's members are read from their URIs (or are absent).
func TestHostileDumpPackageNeverStopsTheMount(t *testing.T) {
	cases := []struct {
		name   string
		patch  func(t *testing.T, pkg []byte) hostilePage
		reason string // in the warning
	}{
		{"directory claiming 4294967296 entries", func(t *testing.T, pkg []byte) hostilePage {
			return hostilePage{body: claimEntries(pkg, 1<<32)}
		}, "4294967296 members exceed the limit"},
		{"member offset beyond the file", func(t *testing.T, pkg []byte) hostilePage {
			binary.LittleEndian.PutUint32(pkg[centralHeader(t, pkg, "resources/only.txt")+42:], uint32(len(pkg)+1000))
			return hostilePage{body: pkg}
		}, "overlaps the next member or the directory"},
		{"overlapping members", func(t *testing.T, pkg []byte) hostilePage {
			first := binary.LittleEndian.Uint32(pkg[centralHeader(t, pkg, "manifest.xml")+42:])
			binary.LittleEndian.PutUint32(pkg[centralHeader(t, pkg, "resources/listed.txt")+42:], first)
			return hostilePage{body: pkg}
		}, "overlaps the next member"},
		{"not a ZIP but a tar.xz", func(t *testing.T, pkg []byte) hostilePage {
			xz := append([]byte("\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46"), bytes.Repeat([]byte("tar.xz payload "), 4000)...)
			return hostilePage{body: xz, ctype: "application/x-xz"}
		}, "no end of central directory record"},
		{"no length", func(t *testing.T, pkg []byte) hostilePage {
			return hostilePage{body: pkg, noLength: true}
		}, "the server gives no length"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			site := startHostileSite(t)
			site.text("/caps.xml", `<?xml version="1.0" encoding="UTF-8"?>
<urlset `+hostileNS+`>
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/rl.xml</loc><rs:md capability="resourcelist"/></url>
  <url><loc>{base}/rd.xml</loc><rs:md capability="resourcedump"/></url>
</urlset>`)
			site.text("/rl.xml", fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<urlset `+hostileNS+`>
  <rs:md capability="resourcelist" at="%s"/>
  <url><loc>{base}/files/good.txt</loc><lastmod>%s</lastmod><rs:md hash="sha-256:%s" length="%d"/></url>
  <url><loc>{base}/files/listed.txt</loc><lastmod>%s</lastmod><rs:md hash="sha-256:%s" length="%d"/></url>
</urlset>`, hostileAt, hostileAt, sha256Hex(goodBody), len(goodBody), hostileAt, sha256Hex(listedBody), len(listedBody)))
			site.text("/rd.xml", `<?xml version="1.0" encoding="UTF-8"?>
<urlset `+hostileNS+`>
  <rs:md capability="resourcedump" at="`+hostileAt+`"/>
  <url><loc>{base}/good.zip</loc><rs:md type="application/zip"/></url>
  <url><loc>{base}/bad.zip</loc><rs:md type="application/zip"/></url>
</urlset>`)
			site.text("/files/good.txt", goodBody)
			site.text("/files/listed.txt", listedBody)
			header := `<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + hostileNS + `>
  <rs:md capability="resourcedump-manifest" at="` + hostileAt + `"/>
`
			good := buildDumpPackage(t, site.base, map[string]string{"resources/only.txt": dumpOnlyGood},
				header+manifestEntry("/dump/only-good.txt", dumpOnlyGood, "/resources/only.txt")+"</urlset>\n")
			site.page("/good.zip", hostilePage{body: good})
			bad := buildDumpPackage(t, site.base, map[string]string{"resources/listed.txt": listedBody, "resources/only.txt": dumpOnlyBad},
				header+manifestEntry("/files/listed.txt", listedBody, "/resources/listed.txt")+
					manifestEntry("/dump/only-bad.txt", dumpOnlyBad, "/resources/only.txt")+"</urlset>\n")
			site.page("/bad.zip", tc.patch(t, bad))

			start := time.Now()
			m := mount(t, site.base+"/caps.xml") // exit status 0, or it fails here
			pid := m.pid(t)

			readIs(t, m.path("files/good.txt"), goodBody)
			readIs(t, m.path("dump/only-good.txt"), dumpOnlyGood)
			readIs(t, m.path("files/listed.txt"), listedBody)
			assert.Positive(t, site.gets("/files/listed.txt"), "the bad package's listed member is read from its URI")
			_, err := os.Stat(m.path("dump/only-bad.txt"))
			assert.ErrorIs(t, err, fs.ErrNotExist, "the bad package's dump-only member is absent")

			log, err := os.ReadFile(m.logFile)
			require.NoError(t, err)
			assert.Contains(t, string(log), "dump package skipped", "a warning")
			assert.Contains(t, string(log), "package="+site.base+"/bad.zip", "naming the package")
			assert.Contains(t, string(log), "skipped_packages=1", "one package skipped")
			assert.Contains(t, string(log), tc.reason, "saying why")
			assert.NotContains(t, string(log), "package="+site.base+"/good.zip")

			entries, err := os.ReadDir(m.dir)
			require.NoError(t, err, "the mount is alive")
			assert.Len(t, entries, 2, "files/ and dump/")
			took := time.Since(start)
			hwm := vmHWM(t, pid)
			t.Logf("%s: mounted and read in %s, rsfs VmHWM %d MiB", tc.name, took.Round(time.Millisecond), hwm>>10)
			assert.Less(t, took, time.Minute)
			assert.Less(t, hwm, int64(200<<10), "peak RSS of rsfs, KiB")
		})
	}
}

// Documents built to exhaust memory are refused early: the mount fails with
// a clear error naming the document, in bounded time and memory, and leaves
// no mount behind.
func TestDocumentBombsAreRefusedInBoundedMemory(t *testing.T) {
	const textNode = 200 << 20
	listHead := `<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + hostileNS + `>
  <rs:md capability="resourcelist" at="` + hostileAt + `"/>
`
	cases := []struct {
		name  string
		setup func(s *hostileSite) string // returns the URL to mount
		want  []string
	}{
		{"index of 4 lists of 200 MB text nodes", func(s *hostileSite) string {
			var idx strings.Builder
			idx.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex ` + hostileNS + `>
  <rs:md capability="resourcelist" at="` + hostileAt + `"/>
`)
			for i := range 4 {
				fmt.Fprintf(&idx, "  <sitemap><loc>{base}/l%d.xml</loc></sitemap>\n", i)
				s.page(fmt.Sprintf("/l%d.xml", i), hostilePage{stream: repeatWriter(listHead+"  <url><loc>"+s.base+"/x", "a", textNode, "</loc></url>\n</urlset>\n")})
			}
			idx.WriteString("</sitemapindex>\n")
			s.text("/rli.xml", idx.String())
			return s.base + "/rli.xml"
		}, []string{"/l", ".xml", "longer than 1048576 bytes"}},
		{"gzip bomb", func(s *hostileSite) string {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
			repeatWriter(listHead, "  <!-- a comment, again and again -->\n", 512<<20, "</urlset>\n")(zw)
			require.NoError(t, zw.Close())
			s.page("/rl.xml.gz", hostilePage{body: buf.Bytes(), ctype: "application/gzip"})
			s.text("/caps.xml", `<?xml version="1.0" encoding="UTF-8"?>
<urlset `+hostileNS+`>
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/rl.xml.gz</loc><rs:md capability="resourcelist"/></url>
</urlset>`)
			return s.base + "/caps.xml"
		}, []string{"/rl.xml.gz", "larger than 67108864 bytes"}},
		{"elements nested 70 million deep", func(s *hostileSite) string {
			s.page("/rl.xml", hostilePage{stream: repeatWriter(listHead+"  <url><loc>"+s.base+"/x</loc>", "<x>", textNode, "</url>\n</urlset>\n")})
			return s.base + "/rl.xml"
		}, []string{"/rl.xml", "nested more than 256 deep"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			site := startHostileSite(t)
			url := tc.setup(site)
			dir := filepath.Join(t.TempDir(), "mnt")
			require.NoError(t, os.Mkdir(dir, 0o755))
			t.Cleanup(func() {
				if isMountPoint(dir) {
					_ = syscall.Unmount(dir, syscall.MNT_DETACH)
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			// ru_maxrss of a child this process starts would include this
			// test process's own peak (Linux keeps the larger across exec),
			// so /usr/bin/time, a small process, forks rsfs and reports it.
			peakFile := filepath.Join(t.TempDir(), "peak")
			cmd := exec.CommandContext(ctx, timeBin(t), "-f", "%M", "-o", peakFile,
				rsfsBin, "mount", "--foreground", url, dir, "--cache-dir", "none")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			require.NoError(t, ctx.Err(), "rsfs did not give up in time: %s", stderr.String())
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "rsfs mount must fail: %v\n%s", err, stderr.String())
			assert.NotZero(t, exit.ExitCode())
			for _, w := range tc.want {
				assert.Contains(t, stderr.String(), w)
			}
			peak := readPeakKiB(t, peakFile)
			t.Logf("%s: refused in %s, rsfs peak RSS %d MiB; %s", tc.name, took.Round(time.Millisecond), peak>>10, lastLine(stderr.String()))
			assert.Less(t, took, time.Minute)
			assert.Less(t, peak, int64(150<<10), "peak RSS of rsfs, KiB")
			assert.False(t, isMountPoint(dir), "no mount left behind")
		})
	}
}

// repeatWriter writes head, then body repeated up to n bytes, then tail,
// stopping at the first write error (the client went away).
func repeatWriter(head, body string, n int64, tail string) func(w io.Writer) {
	return func(w io.Writer) {
		if _, err := io.WriteString(w, head); err != nil {
			return
		}
		chunk := []byte(strings.Repeat(body, max(1, (64<<10)/len(body))))
		for n > 0 {
			k := min(n, int64(len(chunk)))
			if _, err := w.Write(chunk[:k]); err != nil {
				return
			}
			n -= k
		}
		_, _ = io.WriteString(w, tail)
	}
}

func readIs(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	require.NoError(t, err, path)
	assert.Equal(t, want, string(got), path)
}

// vmHWM is a process's peak resident set, in KiB.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			return int64(atoi(t, f[1]))
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// timeBin is GNU time, which reports the peak RSS of the command it runs.
func timeBin(t *testing.T) string {
	const bin = "/usr/bin/time"
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s (Debian package time) is needed to measure rsfs's peak RSS: %v", bin, err)
	}
	return bin
}

// readPeakKiB reads the figure /usr/bin/time -f %M wrote: the last line
// of the file, since time writes a "Command exited" line first on failure.
func readPeakKiB(t *testing.T, file string) int64 {
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	lines := strings.Fields(strings.TrimSpace(string(data)))
	require.NotEmpty(t, lines, "no peak RSS from /usr/bin/time")
	kib, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	require.NoError(t, err, "peak RSS from /usr/bin/time: %q", data)
	require.Positive(t, kib)
	return kib
}
