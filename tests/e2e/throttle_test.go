package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 38, servers that defend themselves: a Source that answers 429 or
// 503 when asked too fast, or says when to come back (Retry-After), is read
// without failed reads and without hammering it; --max-rate, --bwlimit and
// --user-agent are what the server sees. Every test asserts what a user or
// the Source's operator sees: bytes, errno, what `rsfs status` prints, and
// the requests at the server; none times rsfs's speed.

// TestThrottleNginxLimitReq: stock nginx with limit_req (200 r/s, burst 100,
// nodelay) refusing with 429, or 503, the excess. Reading 800 files, 8 at a
// time, every file's bytes are right, and at most 5 % of the requests nginx
// logged were refused: rsfs slows down to what the server allows instead of
// retrying into the limit. (Finding the limit costs the requests in flight
// when the first refusal comes, 5 to 17 measured: hence 800 files, as the
// issue's 2,000 would take 10 s.)
func TestThrottleNginxLimitReq(t *testing.T) {
	for _, code := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			needFUSE(t)
			src := startLimitedNginx(t, 800, code)
			m := mount(t, src.url)
			results := readAll(m, src.files, src.paths(), 8)
			total, byStatus := src.statuses(t)
			refused := byStatus[strconv.Itoa(code)]
			t.Logf("nginx logged %d requests: %v", total, byStatus)
			checkAllRead(t, results)
			assert.LessOrEqual(t, refused*100, 5*total,
				"%d of the %d requests nginx logged were refused with %d (at most 5%%)", refused, total, code)
		})
	}
}

// TestThrottleWindowThenRecovers: for 4 s the Source answers 429 (no
// Retry-After) to every request for file bytes, then recovers. A read
// started in the window may fail, but only with EIO, only after retries
// (the Source saw at least 3 requests for its file), and the log then
// names --max-rate; every read started after the window reads the right
// bytes; the mount stays alive; `rsfs status` showed the throttling while
// it lasted, in its text and in its JSON, and the metrics counted it.
func TestThrottleWindowThenRecovers(t *testing.T) {
	needFUSE(t)
	// 8 directories of 5: each read in the window is the first of its own
	// directory, so a directory warmed by one read does not add requests
	// for another read's file.
	src := startGoSource(t, smallFiles(40, 5))
	metricsAddr := freeAddr(t)
	m := mount(t, src.base, "--metrics-addr", metricsAddr)

	var until atomic.Int64
	src.setRefuse(func(w http.ResponseWriter, r *http.Request) bool {
		if isFileBytes(r.URL.Path) && time.Now().UnixNano() < until.Load() {
			http.Error(w, "too many requests", http.StatusTooManyRequests)
			return true
		}
		return false
	})

	// Watch rsfs status (text and JSON) and the metrics from the start of
	// the window until the reads after it are done.
	var (
		mu          sync.Mutex
		textLines   []string
		jsonEntries []throttled
		metricLines []string
		statusRead  int // status texts and metric pages read: the watch worked
		metricsRead int
	)
	stop := make(chan struct{})
	var watching sync.WaitGroup
	watching.Add(1)
	go func() {
		defer watching.Done()
		for {
			text := statusOnce(m.dir, false)
			entries := throttledOf(statusOnce(m.dir, true))
			metrics := scrapeText(metricsAddr)
			mu.Lock()
			if text != "" {
				statusRead++
			}
			if metrics != "" {
				metricsRead++
			}
			for _, line := range strings.Split(text, "\n") {
				if strings.Contains(line, "throttled by the Source:") {
					textLines = append(textLines, strings.TrimSpace(line))
				}
			}
			for _, e := range entries {
				if e.Origin == src.origin {
					jsonEntries = append(jsonEntries, e)
				}
			}
			for _, line := range strings.Split(metrics, "\n") {
				if strings.HasPrefix(line, "rsfs_fetch_throttled_total{") || strings.HasPrefix(line, "rsfs_fetch_limit_") {
					metricLines = append(metricLines, line)
				}
			}
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()

	windowEnd := time.Now().Add(4 * time.Second)
	until.Store(windowEnd.UnixNano())
	var inWindow []string
	for d := range 6 {
		inWindow = append(inWindow, fmt.Sprintf("f/%02d/%04d.txt", d, d*5))
	}
	results := readAll(m, src.files, inWindow, len(inWindow))
	failed := 0
	for _, r := range results {
		if r.err == nil {
			assert.True(t, r.good, "%s: read in the window succeeded with wrong bytes", r.rel)
			continue
		}
		failed++
		t.Logf("%s failed after %d requests for it: %v", r.rel, src.count("/"+r.rel), r.err)
		assert.ErrorIs(t, r.err, syscall.EIO, "%s: a read refused by the Source fails with EIO", r.rel)
		// Without retries a failed read costs 2 requests (measured before
		// issue 38: the kernel asks again for a page whose read failed).
		assert.GreaterOrEqual(t, src.count("/"+r.rel), 3, "%s failed without retries: a 429 is retried", r.rel)
	}
	t.Logf("%d of %d reads started in the window failed", failed, len(results))
	if failed > 0 {
		log, err := os.ReadFile(m.logFile)
		require.NoError(t, err)
		assert.True(t, strings.Contains(string(log), "--max-rate"),
			"a read that failed because the Source kept refusing: the log names --max-rate (the log is printed below)")
	}

	time.Sleep(time.Until(windowEnd) + 100*time.Millisecond)
	checkAllRead(t, readAll(m, src.files, src.paths(), 8))
	entries, err := os.ReadDir(m.path("f/07"))
	require.NoError(t, err, "ls after the window: the mount is alive")
	assert.Len(t, entries, 5)

	// Keep watching a little after the window, for a status that shows it
	// just after.
	time.Sleep(time.Until(windowEnd.Add(2 * time.Second)))
	close(stop)
	watching.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("status lines seen: %q", firstOf(textLines, 3))
	t.Logf("status --json throttled entries seen: %+v", firstOf(jsonEntries, 3))
	t.Logf("metric lines seen: %q", firstOf(metricLines, 6))
	require.Positive(t, statusRead, "rsfs status %s answered", m.dir)
	require.Positive(t, metricsRead, "the metrics at %s answered", metricsAddr)
	require.NotEmpty(t, textLines, "rsfs status showed no line 'throttled by the Source:' during or just after the window")
	assert.True(t, anyContains(textLines, "answers 429/503 in the last minute"), "%q", textLines)
	assert.True(t, anyContains(textLines, "requests in flight (limit"), "%q", textLines)
	assert.True(t, anyContains(textLines, src.origin), "the line names the origin: %q", textLines)
	require.NotEmpty(t, jsonEntries, "rsfs status --json had no throttled entry for %s", src.origin)
	maxAnswers := 0
	for _, e := range jsonEntries {
		maxAnswers = max(maxAnswers, e.Answers)
		assert.GreaterOrEqual(t, e.Limit, 1, "an in-flight limit is at least 1: %+v", e)
		assert.GreaterOrEqual(t, e.InFlight, 0, "%+v", e)
		assert.GreaterOrEqual(t, e.Rate, 0.0, "%+v", e)
	}
	assert.Positive(t, maxAnswers, "the 429s counted in the last minute: %+v", jsonEntries)
	origin := `origin="` + src.origin + `"`
	assert.True(t, anyContains(filterContains(metricLines, "rsfs_fetch_throttled_total{"), origin, `code="429"`),
		"rsfs_fetch_throttled_total{origin,code=\"429\"}: %q", metricLines)
	assert.True(t, anyContains(metricLines, "rsfs_fetch_limit_in_flight{", origin), "%q", metricLines)
	assert.True(t, anyContains(metricLines, "rsfs_fetch_limit_rate{", origin), "%q", metricLines)
}

// TestThrottleRetryAfterPausesOrigin: the Source answers the first request
// for file bytes with 429 and Retry-After: 2. The whole origin pauses: no
// request reaches it for the next 2 s (1.8 s checked, after a 150 ms grace
// for requests already on the wire when the 429 was written), including
// those of reads started 300 ms after the 429 in another directory; then
// every read succeeds with the right bytes.
func TestThrottleRetryAfterPausesOrigin(t *testing.T) {
	needFUSE(t)
	src := startGoSource(t, smallFiles(16, 8)) // f/00: the first wave, f/01: the second
	m := mount(t, src.base)
	var refused atomic.Bool
	var at429 atomic.Int64
	src.setRefuse(func(w http.ResponseWriter, r *http.Request) bool {
		if !isFileBytes(r.URL.Path) || !refused.CompareAndSwap(false, true) {
			return false
		}
		w.Header().Set("Retry-After", "2")
		http.Error(w, "slow down", http.StatusTooManyRequests)
		w.(http.Flusher).Flush()
		at429.Store(time.Now().UnixNano())
		return true
	})
	paths := src.paths()
	wave1, wave2 := paths[:8], paths[8:]
	var first []readResult
	done := make(chan struct{})
	go func() {
		defer close(done)
		first = readAll(m, src.files, wave1, len(wave1))
	}()
	waitFor(t, time.Minute, "the 429", func() bool { return at429.Load() != 0 })
	refusedAt := time.Unix(0, at429.Load())
	time.Sleep(time.Until(refusedAt.Add(300 * time.Millisecond)))
	second := readAll(m, src.files, wave2, len(wave2))
	<-done
	checkAllRead(t, first)
	checkAllRead(t, second)

	var within []string
	after := 0
	for _, r := range src.requests() {
		d := r.at.Sub(refusedAt)
		if d >= 150*time.Millisecond && d < 1800*time.Millisecond {
			within = append(within, r.method+" "+r.path+" at +"+d.Round(time.Millisecond).String())
		}
		if d >= 1800*time.Millisecond && strings.HasPrefix(r.path, "/f/01/") {
			after++
		}
	}
	assert.Empty(t, within, "requests reached the Source within 1.8 s of its 429 with Retry-After: 2")
	assert.Positive(t, after, "the second wave's files were fetched after the pause")
}

// TestMaxRateAtTheServer: with --max-rate 20, reading 100 files 8 at a
// time, the server sees requests at 20 a second, never faster
// (checkRateAtServer).
func TestMaxRateAtTheServer(t *testing.T) {
	needFUSE(t)
	src := startGoSource(t, smallFiles(100, 10))
	m := mount(t, src.base, "--max-rate", "20")
	checkAllRead(t, readAll(m, src.files, src.paths(), 8))
	checkRateAtServer(t, src.requests(), 20, "--max-rate 20")
}

// checkRateAtServer checks that reqs arrived at rate a second, never
// faster, in two ways that no delay of single arrivals can fail (a loaded
// machine delays some and so bunches them: 21 in a window of 900 ms was
// seen under stress-ng with sends 51 ms apart):
//   - over them all, at most rate a second (one spare for the first, which
//     the bucket sends at once): a client sending faster, or with a burst,
//     fails it;
//   - the median gap between arrivals is at least 0.9 of 1/rate: a client
//     that sends in pairs or more, however slowly on average, fails it,
//     while a delayed arrival shortens one gap and lengthens the one
//     before, which leaves the median where it was.
//
// The busiest second is logged, not asserted.
func checkRateAtServer(t *testing.T, reqs []seen, rate int, what string) {
	t.Helper()
	require.Greater(t, len(reqs), 4, "%s: too few requests to judge a rate", what)
	at := make([]time.Time, len(reqs))
	for i, r := range reqs {
		at[i] = r.at
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	gaps := make([]time.Duration, len(at)-1)
	for i := range gaps {
		gaps[i] = at[i+1].Sub(at[i])
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	median := (gaps[(len(gaps)-1)/2] + gaps[len(gaps)/2]) / 2
	span := at[len(at)-1].Sub(at[0])
	n, from := busiestWindow(reqs, time.Second)
	t.Logf("%d requests over %v, median gap %v; the busiest second, from +%v, held %d",
		len(reqs), span.Round(time.Millisecond), median.Round(time.Millisecond), from.Round(time.Millisecond), n)
	assert.LessOrEqual(t, float64(len(reqs)-1), float64(rate)*span.Seconds()+1,
		"requests over the whole read (%v) with %s", span, what)
	assert.GreaterOrEqual(t, median, time.Duration(0.9*float64(time.Second)/float64(rate)),
		"the median gap between requests with %s", what)
}

// TestBwlimitAtTheServer: with --bwlimit 1MiB, cat of an 8 MiB file reads
// the right bytes, and the server took at least 6.5 s from the file's first
// request to its last byte written (at most ~1.25 MiB/s, leaving room for a
// first burst and what the kernel buffers).
//
// The limit is on the wire, not only on what rsfs hands the reader: the
// server's send buffer is kept at 64 KiB, but the client's receive buffer
// grows with how much rsfs takes from the socket at once. Measured with a
// plain Go client pacing its reads to 1 MiB/s: reads of up to 128 KiB at a
// time, the server saw 7.5-7.8 s for 8 MiB; reads of 256 KiB or 1 MiB at a
// time, 4.1-4.4 s (the kernel held 3.5 MiB ahead of the reader).
func TestBwlimitAtTheServer(t *testing.T) {
	needFUSE(t)
	const name = "f/big.bin"
	src := startGoSource(t, func(base string) []staticFile {
		return []staticFile{{loc: base + name, path: name, body: randomBody(8*mib, 38)}}
	})
	m := mount(t, src.base, "--bwlimit", "1MiB")
	out, code := tool(t, 2*time.Minute, "cat", m.path(name))
	require.Equal(t, 0, code, "cat exit status")
	require.True(t, bytes.Equal(out, src.files[name]), "cat printed the published bytes (%d bytes)", len(out))
	var first time.Time
	for _, r := range src.requests() {
		if r.path == "/"+name {
			first = r.at
			break
		}
	}
	src.mu.Lock()
	last := src.lastWrite
	src.mu.Unlock()
	took := last.Sub(first)
	t.Logf("8 MiB served in %v at the server (%.2f MiB/s)", took.Round(time.Millisecond), 8/took.Seconds())
	assert.GreaterOrEqual(t, took, 6500*time.Millisecond, "8 MiB with --bwlimit 1MiB")
}

// TestUserAgent: by default every request carries rsfs/VERSION (+URL); with
// --user-agent every request of mount, inspect and audit carries exactly
// the string given.
func TestUserAgent(t *testing.T) {
	needFUSE(t)
	src := startGoSource(t, smallFiles(6, 3))
	m := mount(t, src.base)
	checkAllRead(t, readAll(m, src.files, src.paths(), 2))
	reqs := src.requests()
	require.NotEmpty(t, reqs)
	bad := map[string]int{}
	for _, r := range reqs {
		if !strings.HasPrefix(r.ua, "rsfs/") || !strings.Contains(r.ua, "(+") {
			bad[r.ua]++
		}
	}
	assert.Empty(t, bad, "the default User-Agent is rsfs/VERSION (+URL): requests by User-Agent sent, of %d", len(reqs))
	m.unmount(t)

	const ua = "mybot/1.0 (+mailto:me@example.org)"
	n := len(src.requests())
	m = mount(t, src.base, "--user-agent", ua)
	checkAllRead(t, readAll(m, src.files, src.paths(), 2))
	checkUserAgent(t, "mount --user-agent", src.requests()[n:], ua)

	n = len(src.requests())
	_, stderr, err := run(t, time.Minute, rsfsBin, "inspect", src.base, "--user-agent", ua)
	require.NoError(t, err, stderr)
	checkUserAgent(t, "inspect --user-agent", src.requests()[n:], ua)

	n = len(src.requests())
	_, stderr, err = run(t, time.Minute, rsfsBin, "audit", m.dir, "--user-agent", ua)
	require.NoError(t, err, stderr)
	checkUserAgent(t, "audit --user-agent", src.requests()[n:], ua)
}

// TestThrottleMountOptions: the mount(8) form, `rsfs URL DIR -o
// max_rate=5,bwlimit=1MiB,user_agent=x/1`, is accepted; the server sees
// the user agent, and requests at 5 a second, never faster
// (checkRateAtServer).
func TestThrottleMountOptions(t *testing.T) {
	needFUSE(t)
	src := startGoSource(t, smallFiles(6, 6))
	dir := t.TempDir()
	m := &mounted{url: src.base, dir: filepath.Join(dir, "mnt"), logFile: filepath.Join(dir, "rsfs.log")}
	require.NoError(t, os.Mkdir(m.dir, 0o755))
	opts := "ro,nodev,max_rate=5,bwlimit=1MiB,user_agent=x/1,log_file=" + m.logFile + ",cache_dir=" + filepath.Join(dir, "cache")
	_, stderr, err := run(t, 2*time.Minute, rsfsBin, src.base, m.dir, "-o", opts)
	require.NoError(t, err, "rsfs URL DIR -o %s: %s", opts, stderr)
	t.Cleanup(func() { m.unmount(t) })
	checkAllRead(t, readAll(m, src.files, src.paths(), 3))
	reqs := src.requests()
	checkUserAgent(t, "-o user_agent=x/1", reqs, "x/1")
	checkRateAtServer(t, reqs, 5, "-o max_rate=5")
}

// checkAllRead: every read succeeded with the published bytes (the test
// goes on either way).
func checkAllRead(t *testing.T, results []readResult) {
	t.Helper()
	var bad []string
	for _, r := range results {
		switch {
		case r.err != nil:
			bad = append(bad, r.rel+": "+r.err.Error())
		case !r.good:
			bad = append(bad, r.rel+": wrong bytes")
		}
	}
	assert.Empty(t, bad, "%d of %d reads failed", len(bad), len(results))
}

// checkUserAgent: there were requests, and every one carried ua.
func checkUserAgent(t *testing.T, what string, reqs []seen, ua string) {
	t.Helper()
	require.NotEmpty(t, reqs, "%s: no request reached the Source", what)
	other := map[string]int{}
	for _, r := range reqs {
		if r.ua != ua {
			other[r.ua]++
		}
	}
	assert.Empty(t, other, "%s: requests with another User-Agent than %q, of %d", what, ua, len(reqs))
}

// busiestWindow is the most requests that arrived within one window of
// length w (half-open: [t, t+w)), and when it started, from the first
// request.
func busiestWindow(reqs []seen, w time.Duration) (int, time.Duration) {
	if len(reqs) == 0 {
		return 0, 0
	}
	at := make([]time.Time, len(reqs))
	for i, r := range reqs {
		at[i] = r.at
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	best, from, j := 0, time.Duration(0), 0
	for i := range at {
		for j < len(at) && at[j].Sub(at[i]) < w {
			j++
		}
		if j-i > best {
			best, from = j-i, at[i].Sub(at[0])
		}
	}
	return best, from
}

// scrapeText is the /metrics page at addr, or "" (no test failure: it runs
// in a goroutine).
func scrapeText(addr string) string {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// anyContains reports whether one of lines contains every one of subs.
func anyContains(lines []string, subs ...string) bool {
	for _, l := range lines {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(l, s)
		}
		if all {
			return true
		}
	}
	return false
}

// filterContains is the lines that contain sub.
func filterContains(lines []string, sub string) []string {
	var out []string
	for _, l := range lines {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

func firstOf[T any](s []T, n int) []T { return s[:min(n, len(s))] }
