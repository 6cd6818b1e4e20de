package e2e

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/fs"
	"rsfs/prefetch"
	"rsfs/tests/sourcetest"
)

// warm runs `rsfs warm ARGS...` and returns its stdout, stderr and exit
// status.
func warm(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	out, stderr, err := run(t, 2*time.Minute, rsfsBin, append([]string{"warm"}, args...)...)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err, stderr)
	}
	return out, stderr, code
}

// warmJSON runs `rsfs warm --json PATH` and decodes its object.
func warmJSON(t *testing.T, path string) (prefetch.Job, int) {
	t.Helper()
	out, stderr, code := warm(t, "--json", path)
	var j prefetch.Job
	require.NoError(t, json.Unmarshal([]byte(out), &j), "%s\n%s", out, stderr)
	return j, code
}

// filesUnder is the files under dir (relative paths' absolute form).
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		if d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	}))
	return out
}

// grepAll reads every file under dir as grep -r does, and counts EIO.
func grepAll(t *testing.T, dir string) (files, eio int) {
	t.Helper()
	for _, p := range filesUnder(t, dir) {
		files++
		if _, err := os.ReadFile(p); errors.Is(err, syscall.EIO) {
			eio++
		} else {
			require.NoError(t, err, p)
		}
	}
	return files, eio
}

// rsfs warm over a Source with Resource Dumps fills the disk cache from
// the packages (no content GET), every file checked; a second warm fetches
// nothing; with the Source gone, a walk reading every file makes no
// request and meets no EIO, and the bytes are the Source's.
func TestWarmFromDumpsThenOffline(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 600, Dumps: true, PerDump: 200, Hashes: []string{"sha-256"}})
	m := mount(t, src.URL(), "--timeout", "1s")
	before := src.Counters()
	out, stderr, code := warm(t, m.path("data"))
	require.Equal(t, 0, code, "%s\n%s", out, stderr)
	assert.Contains(t, out, "600 of 600 files on disk")
	c := src.Counters()
	assert.Equal(t, before.ContentGets(), c.ContentGets(), "every file from the dump packages")
	assert.Positive(t, c.DumpRanges-before.DumpRanges)
	assert.Regexp(t, `^600 of 600 files, \d+ of \d+ bytes on disk$`, getxattr(t, m.path("data"), fs.XattrCached))

	src.ResetCounters()
	j, code := warmJSON(t, m.path("data"))
	require.Equal(t, 0, code)
	assert.Equal(t, 600, j.OnDiskFiles, "a second warm finds every file on disk")
	assert.Zero(t, j.FetchedFiles)
	c = src.Counters()
	assert.Zero(t, c.ContentGets()+c.DumpRanges+c.DumpWholeGets, "a second warm makes no content request")

	truth := map[string][]byte{}
	for uri, p := range walkFiles(t, m.dir) {
		body, _ := src.Body(uri)
		truth[p] = body
	}
	src.Close()
	files, eio := grepAll(t, m.path("data"))
	assert.Equal(t, 600, files)
	assert.Zero(t, eio, "every warmed file reads with the Source gone")
	for p, want := range truth {
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Equal(t, want, got, p)
	}
}

// Without dumps, rsfs warm fetches file by file, each once; warming a
// directory then its parent fetches only the rest (it resumes from what
// is on disk); a file the Source refuses is named, exit status 1.
func TestWarmFileByFileResumes(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 300})
	m := mount(t, src.URL())
	dirs, err := filepath.Glob(m.path("data/d*"))
	require.NoError(t, err)
	require.Len(t, dirs, 3)
	first := len(filesUnder(t, dirs[0]))
	src.ResetCounters()
	j, code := warmJSON(t, dirs[0])
	require.Equal(t, 0, code)
	assert.Equal(t, first, j.FetchedFiles)
	assert.EqualValues(t, first, src.Counters().ContentGets(), "one request per file")

	src.ResetCounters()
	j, code = warmJSON(t, m.path("data"))
	require.Equal(t, 0, code)
	assert.Equal(t, 300, j.Files)
	assert.Equal(t, first, j.OnDiskFiles, "what the first warm fetched is not fetched again")
	assert.Equal(t, 300-first, j.FetchedFiles)
	assert.EqualValues(t, 300-first, src.Counters().ContentGets())

	// A file the Source refuses.
	src2 := startSource(t, sourcetest.Config{Resources: 20})
	src2.FailPrimary(src2.Resources()[3].URI, 404)
	m2 := mount(t, src2.URL())
	out, _, code := warm(t, m2.path("data"))
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "19 of 20 files on disk")
	assert.Contains(t, out, "not fetched: data/d000/r000003.txt")
}

// What rsfs warm put on disk stays there while other reads push the disk
// cache to its limit; after --release it ages out as any other file.
func TestWarmPinnedUnderPressure(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 300, MinSize: 3000, MaxSize: 4000})
	m := mount(t, src.URL(), "--block-size", "4KiB", "--cache-max-size", "400KiB")
	dirs, err := filepath.Glob(m.path("data/d*"))
	require.NoError(t, err)
	require.Len(t, dirs, 3)
	warmed := filepath.Join(dirs[0])
	// 100 files of 3-4 KB: ~360 KiB of 400; a second directory read
	// must evict.
	_, code := warmJSON(t, warmed)
	require.Equal(t, 0, code)
	require.Regexp(t, `^100 of 100 files`, getxattr(t, warmed, fs.XattrCached))
	for _, d := range dirs[1:] {
		for _, p := range filesUnder(t, d) {
			_, err := os.ReadFile(p)
			require.NoError(t, err)
		}
	}
	waitFor(t, 30*time.Second, "the other reads written to disk", func() bool {
		return report(t, m.dir).Cache.Disk.Writes >= 300 // 100 warmed, 200 read
	})
	assert.Positive(t, report(t, m.dir).Cache.Disk.Evictions, "the disk cache was at its limit")
	assert.Regexp(t, `^100 of 100 files`, getxattr(t, warmed, fs.XattrCached), "warmed files stay ahead of LRU eviction")

	out, _, code := warm(t, "--release", warmed)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "released 100 files")
	for _, p := range filesUnder(t, dirs[1]) {
		_, err := os.ReadFile(p) // from disk or the Source: recency only
		require.NoError(t, err)
	}
}

// A subtree larger than --cache-max-size is refused before anything is
// fetched, saying how much more it needs; a PATH outside any mount is a
// usage error.
func TestWarmDoesNotFitAndUsage(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 200, MinSize: 3000, MaxSize: 4000})
	m := mount(t, src.URL(), "--block-size", "4KiB", "--cache-max-size", "256KiB")
	src.ResetCounters()
	out, _, code := warm(t, m.path("data"))
	assert.Equal(t, 1, code)
	assert.Regexp(t, `data: 200 files, .* do not fit --cache-max-size 256\.0 KiB: it needs .* more; nothing fetched`, out)
	assert.Zero(t, src.Counters().ContentGets())

	_, stderr, code := warm(t, t.TempDir())
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "is not inside an rsfs mount")
	_, _, code = warm(t)
	assert.Equal(t, 2, code)
}

// rsfs warm behind stock nginx limit_req (200 r/s, burst 100, 429): every
// file on disk and exact, and as polite as every other request (at most
// 5% refused, as TestThrottleNginxLimitReq asks of reads).
func TestWarmBehindLimitReq(t *testing.T) {
	needFUSE(t)
	src := startLimitedNginx(t, 1500, http.StatusTooManyRequests)
	m := mount(t, src.url)
	j, code := warmJSON(t, m.dir)
	require.Equal(t, 0, code, "%+v", j)
	assert.Equal(t, 1500, j.Files)
	total, byStatus := src.statuses(t)
	refused := byStatus["429"]
	t.Logf("nginx logged %d requests: %v; warm took %.2f s", total, byStatus, j.Took)
	assert.LessOrEqual(t, refused*100, 5*total, "%d of %d refused", refused, total)
	for p, want := range src.files {
		got, err := os.ReadFile(m.path(p))
		require.NoError(t, err, p)
		require.Equal(t, want, got, p)
	}
	total2, _ := src.statuses(t)
	assert.Equal(t, total, total2, "every file read from disk after the warm")
}
