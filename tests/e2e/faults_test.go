package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/hostile"
)

// The fault matrix: one hostile Source and one mount per case. Every case
// checks what a user sees (bytes, exit status of a real tool), that no
// wrong byte is served, that the mount is alive afterwards (stat and read
// of a good file; never ENOTCONN), the time it took against a generous
// bound, and the peak RSS of the rsfs process (VmHWM).

const (
	mib      = 1 << 20
	maxPeak  = 400 << 20 // peak RSS bound for every case, bytes
	goodName = "good.bin"
)

// faultEnv is one case's Source and mount.
type faultEnv struct {
	src   *hostile.Source
	m     *mounted
	files map[string][]byte // name -> published bytes
}

type faultCase struct {
	name  string
	files func() []hostile.Resource // besides good.bin; made when the case runs
	flags []string
	fault map[string]hostile.Fault
	run   func(t *testing.T, e *faultEnv)
	bound time.Duration // generous: "it did not hang"
}

func randomBody(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func corruptAt(b []byte, offs ...int) []byte {
	c := append([]byte(nil), b...)
	for _, o := range offs {
		c[o] ^= 0x5a
	}
	return c
}

func faultSHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// etagOf is the ETag the hostile Source gives a body.
func etagOf(b []byte) string {
	s := sha256.Sum256(b)
	return `"` + hex.EncodeToString(s[:8]) + `"`
}

// Bodies are made per case, to keep the test process small.
func big3() []byte   { return randomBody(3*mib, 1) } // three 1 MiB blocks
func small() []byte  { return randomBody(40000, 2) } // one block
func good() []byte   { return randomBody(100000, 3) }
func big4() []byte   { return randomBody(4*mib, 4) }
func noETag() []byte { return randomBody(3*mib, 5) }

// tool runs a command and returns its stdout and exit status (-1: it did
// not finish within the timeout).
func tool(t *testing.T, timeout time.Duration, name string, args ...string) ([]byte, int) {
	t.Helper()
	var out bytes.Buffer
	code := toolTo(t, timeout, &out, name, args...)
	return out.Bytes(), code
}

// toolTo runs a command with its stdout to w and returns its exit status.
func toolTo(t *testing.T, timeout time.Duration, w io.Writer, name string, args ...string) int {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdout = w
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		require.NoError(t, err)
		return 0
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		t.Errorf("%s %v did not finish within %v", name, args, timeout)
		return -1
	}
}

// prefixWriter checks, without keeping them, that the bytes written are a
// prefix of want.
type prefixWriter struct {
	want []byte
	n    int
	bad  bool
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > len(w.want) || !bytes.Equal(w.want[w.n:w.n+len(p)], p) {
		w.bad = true
	}
	w.n += len(p)
	return len(p), nil
}

// whole reports whether exactly want was written.
func (w *prefixWriter) whole() bool { return !w.bad && w.n == len(w.want) }

// catTo runs cat on a published file, checking its output against the
// published bytes as it comes.
func (e *faultEnv) catTo(t *testing.T, args ...string) (*prefixWriter, int) {
	t.Helper()
	name := args[0]
	w := &prefixWriter{want: e.files[name]}
	code := toolTo(t, 2*time.Minute, w, "cat", append([]string{e.file(name)}, args[1:]...)...)
	return w, code
}

// file is the path of a published file on the mount.
func (e *faultEnv) file(name string) string { return e.m.path("files/" + name) }

// catExact: cat exits 0 with exactly the published bytes.
func (e *faultEnv) catExact(t *testing.T, name string) {
	t.Helper()
	w, code := e.catTo(t, name)
	require.Equal(t, 0, code, "cat %s exit status", name)
	require.False(t, w.bad, "cat %s printed a byte the Source did not publish", name)
	require.Equal(t, len(w.want), w.n, "cat %s: bytes", name)
}

// catFails: cat exits non-zero and what it printed is a prefix of the
// published bytes (no wrong byte); it returns how many bytes it printed.
func (e *faultEnv) catFails(t *testing.T, name string) int {
	t.Helper()
	st, err := os.Stat(e.file(name))
	require.NoError(t, err, "the file is in the tree")
	require.Equal(t, int64(len(e.files[name])), st.Size(), "its published size")
	w, code := e.catTo(t, name)
	require.NotEqual(t, 0, code, "cat %s must fail (printed %d bytes, the published ones: %v)", name, w.n, w.whole())
	require.False(t, w.bad, "cat %s printed a byte the Source did not publish", name)
	require.Positive(t, e.src.Requests(name), "the failure came from the Source")
	return w.n
}

// sha256sumFails: sha256sum exits non-zero and prints no digest.
func (e *faultEnv) sha256sumFails(t *testing.T, name string) {
	t.Helper()
	out, code := tool(t, 2*time.Minute, "sha256sum", e.file(name))
	require.NotEqual(t, 0, code, "sha256sum %s must fail", name)
	require.Positive(t, e.src.Requests(name), "the failure came from the Source, not a missing file")
	assert.Empty(t, strings.TrimSpace(string(out)), "no digest printed")
}

func (e *faultEnv) sha256sumOK(t *testing.T, name string) {
	t.Helper()
	out, code := tool(t, 2*time.Minute, "sha256sum", e.file(name))
	require.Equal(t, 0, code)
	fields := strings.Fields(string(out))
	require.NotEmpty(t, fields, "sha256sum printed a digest")
	require.Equal(t, faultSHA256(e.files[name]), fields[0])
}

// alive: the mount answers stat and a read of the good file; never
// ENOTCONN.
func (e *faultEnv) alive(t *testing.T) {
	t.Helper()
	st, err := os.Stat(e.file(goodName))
	require.NoError(t, err, "stat on the mount after the fault")
	require.Equal(t, int64(len(e.files[goodName])), st.Size())
	got, err := os.ReadFile(e.file(goodName))
	require.NoError(t, err, "read of a good file after the fault")
	require.True(t, bytes.Equal(e.files[goodName], got))
}

// peakRSS returns the peak resident set of a process, in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			return int64(atoi(t, f[1])) << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// matrix collects the figures for the closing log.
var matrix struct {
	mu   sync.Mutex
	rows []string
}

func faultCases() []faultCase {
	return []faultCase{
		{
			name:  "reset mid-body, with ETag",
			files: func() []hostile.Resource { return []hostile.Resource{{Name: "f", Body: big3()}} },
			fault: map[string]hostile.Fault{"f": hostile.First(2, hostile.ResetAfter(300000, etagOf(big3())))},
			run:   func(t *testing.T, e *faultEnv) { e.catExact(t, "f") },
		},
		{
			name:  "reset mid-body, without ETag",
			files: func() []hostile.Resource { return []hostile.Resource{{Name: "f", Body: noETag(), NoETag: true}} },
			fault: map[string]hostile.Fault{"f": hostile.First(2, hostile.ResetAfter(300000, ""))},
			run:   func(t *testing.T, e *faultEnv) { e.catExact(t, "f") },
		},
		{
			// O_DIRECT: no kernel readahead, so no kernel retry hides a
			// failed read; rsfs must resume the body itself.
			name:  "reset mid-body, without ETag, O_DIRECT",
			files: func() []hostile.Resource { return []hostile.Resource{{Name: "f", Body: noETag(), NoETag: true}} },
			flags: []string{"--read-ahead", "-1", "--verify-whole-below", "0"},
			fault: map[string]hostile.Fault{"f": hostile.First(1, hostile.ResetAfter(300000, ""))},
			run: func(t *testing.T, e *faultEnv) {
				out, code := tool(t, time.Minute, "dd", "if="+e.file("f"), "iflag=direct", "bs=1M", "status=none")
				require.Equal(t, 0, code, "dd iflag=direct")
				require.True(t, bytes.Equal(noETag(), out))
			},
		},
		{
			name:  "5xx burst with Retry-After",
			files: func() []hostile.Resource { return []hostile.Resource{{Name: "f", Body: big3()}} },
			fault: map[string]hostile.Fault{"f": hostile.First(3, hostile.Status(503, "1"))},
			run:   func(t *testing.T, e *faultEnv) { e.catExact(t, "f") },
		},
		{
			name:  "truncated body, once",
			files: func() []hostile.Resource { return []hostile.Resource{{Name: "f", Body: big3()}} },
			fault: map[string]hostile.Fault{"f": hostile.First(1, hostile.Truncate(1000))},
			run:   func(t *testing.T, e *faultEnv) { e.catExact(t, "f") },
		},
		{
			name:  "truncated body, always",
			files: func() []hostile.Resource { return []hostile.Resource{{Name: "f", Body: big3()}} },
			flags: []string{"--retries", "1"},
			fault: map[string]hostile.Fault{"f": hostile.Truncate(1000)},
			run:   func(t *testing.T, e *faultEnv) { e.catFails(t, "f") },
		},
		{
			// A short outage of the Source does not leave the file failing:
			// bytes that could not be had are not a bad version, and a
			// later reader, on the same mount and within the 30 s the
			// version's stream stays open, reads it whole.
			name:  "truncated body until fixed, then read again",
			files: func() []hostile.Resource { return []hostile.Resource{{Name: "f", Body: big3()}} },
			flags: []string{"--retries", "1"},
			fault: map[string]hostile.Fault{"f": hostile.Truncate(1000)},
			run: func(t *testing.T, e *faultEnv) {
				e.catFails(t, "f")
				e.src.SetFault("f", nil)
				e.catExact(t, "f")
			},
		},
		{
			name: "overlong body",
			files: func() []hostile.Resource {
				return []hostile.Resource{{Name: "f", Body: big3(), Served: append(append([]byte(nil), big3()...), "tail"...)}}
			},
			run: func(t *testing.T, e *faultEnv) { e.catFails(t, "f") },
		},
		{
			name: "length mismatch: a shorter file",
			files: func() []hostile.Resource {
				return []hostile.Resource{{Name: "f", Body: big3(), Served: big3()[:2*mib+5]}}
			},
			run: func(t *testing.T, e *faultEnv) { e.catFails(t, "f") },
		},
		{
			name: "hash mismatch, one byte of a multi-block file",
			files: func() []hostile.Resource {
				return []hostile.Resource{{Name: "f", Body: big3(), Served: corruptAt(big3(), mib+12345)}}
			},
			run: func(t *testing.T, e *faultEnv) {
				e.sha256sumFails(t, "f")
				e.sha256sumFails(t, "f") // and again: the version is bad
				assert.Equal(t, 0, e.catFails(t, "f"), "not one byte of a bad copy")
			},
		},
		{
			name: "hash mismatch, streamed file",
			files: func() []hostile.Resource {
				return []hostile.Resource{{Name: "f", Body: big3(), Served: corruptAt(big3(), 2*mib+3)}}
			},
			flags: []string{"--verify-whole-below", "1MiB"},
			run: func(t *testing.T, e *faultEnv) {
				e.sha256sumFails(t, "f") // the read completing the pass fails
				e.sha256sumFails(t, "f") // the version is bad now
				e.catFails(t, "f")
			},
		},
		{
			name: "hash mismatch, many blocks",
			files: func() []hostile.Resource {
				return []hostile.Resource{{Name: "f", Body: big3(), Served: corruptAt(big3(), 10, mib+10, 2*mib+10)}}
			},
			run: func(t *testing.T, e *faultEnv) {
				e.sha256sumFails(t, "f")
				assert.Equal(t, 0, e.catFails(t, "f"))
			},
		},
		{
			name: "hash mismatch, one-block file",
			files: func() []hostile.Resource {
				return []hostile.Resource{{Name: "f", Body: small(), Served: corruptAt(small(), 777)}}
			},
			run: func(t *testing.T, e *faultEnv) {
				e.sha256sumFails(t, "f")
				assert.Equal(t, 0, e.catFails(t, "f"))
			},
		},
		{
			name: "hash mismatch, good mirror",
			files: func() []hostile.Resource {
				return []hostile.Resource{{Name: "f", Body: big3(), Served: corruptAt(big3(), 2*mib+1), Mirror: true}}
			},
			run: func(t *testing.T, e *faultEnv) {
				e.sha256sumOK(t, "f")
				e.catExact(t, "f")
			},
		},
		{
			name:  "redirect loop",
			files: func() []hostile.Resource { return []hostile.Resource{{Name: "f", Body: small()}} },
			fault: map[string]hostile.Fault{"f": hostile.RedirectLoop()},
			run:   func(t *testing.T, e *faultEnv) { assert.Equal(t, 0, e.catFails(t, "f")) },
		},
		{
			name:  "Source killed mid-read and restarted",
			files: func() []hostile.Resource { return []hostile.Resource{{Name: "f", Body: big4()}} },
			flags: []string{"--retries", "6"},
			run:   killMidRead,
		},
		{
			name:  "16 parallel readers, 5% of requests fail",
			files: parallelFiles,
			fault: parallelFaults(),
			run:   parallelReaders,
		},
		{
			name:  "drip of 1 byte/s",
			files: func() []hostile.Resource { return []hostile.Resource{{Name: "f", Body: big3()}} },
			flags: []string{"--timeout", "2s", "--retries", "1"},
			fault: map[string]hostile.Fault{"f": hostile.Drip(time.Second)},
			run:   func(t *testing.T, e *faultEnv) { e.catFails(t, "f") },
			bound: 90 * time.Second,
		},
	}
}

func parallelFiles() []hostile.Resource {
	var rs []hostile.Resource
	for i := range 16 {
		rs = append(rs, hostile.Resource{Name: fmt.Sprintf("p%02d", i), Body: randomBody(mib+i*100000, uint64(100+i))})
	}
	return rs
}

func parallelFaults() map[string]hostile.Fault {
	faults := map[string]hostile.Fault{}
	for _, r := range parallelFiles() {
		status, reset := hostile.Status(500, ""), hostile.ResetAfter(1000, etagOf(r.Body))
		faults[r.Name] = hostile.Sometimes(0.05, func(w http.ResponseWriter, req *http.Request, body []byte, n int64) bool {
			if n%2 == 0 {
				return status(w, req, body, n)
			}
			return reset(w, req, body, n)
		})
	}
	return faults
}

func parallelReaders(t *testing.T, e *faultEnv) {
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range 16 {
		name := fmt.Sprintf("p%02d", i)
		wg.Go(func() {
			w := &prefixWriter{want: e.files[name]}
			cmd := exec.Command("cat", e.file(name))
			cmd.Stdout = w
			err := cmd.Run()
			if err == nil && !w.whole() {
				err = fmt.Errorf("%s: %d bytes, not the published ones", name, w.n)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		assert.NoError(t, err, "each reader gets the published bytes")
	}
}

// killMidRead stops the Source while the first range is half sent, and
// starts it again 300 ms later.
func killMidRead(t *testing.T, e *faultEnv) {
	var once sync.Once
	stopped := make(chan struct{})
	e.src.SetFault("f", func(w http.ResponseWriter, r *http.Request, body []byte, n int64) bool {
		fired := false
		once.Do(func() {
			fired = true
			go func() {
				time.Sleep(50 * time.Millisecond)
				e.src.Stop()
				close(stopped)
				time.Sleep(300 * time.Millisecond)
				assert.NoError(t, e.src.Restart())
			}()
		})
		if !fired {
			return false
		}
		return hostile.Drip(time.Millisecond)(w, r, body, n)
	})
	w, code := e.catTo(t, "f")
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatalf("the Source was never stopped (%d requests for f)", e.src.Requests("f"))
	}
	require.False(t, w.bad, "no wrong byte")
	if code == 0 {
		require.True(t, w.whole(), "exit 0 means the published bytes")
	}
	e.catExact(t, "f") // the Source is back
}

func TestFaultMatrix(t *testing.T) {
	for _, fc := range faultCases() {
		t.Run(fc.name, func(t *testing.T) { runFaultCase(t, fc) })
	}
	t.Run("Source down at mount", sourceDownAtMount)
	t.Run("hostile URIs", hostileURIs)
	matrix.mu.Lock()
	defer matrix.mu.Unlock()
	t.Logf("fault matrix:\n%-48s %-5s %8s %10s\n%s", "case", "pass", "time", "peak RSS", strings.Join(matrix.rows, "\n"))
}

func runFaultCase(t *testing.T, fc faultCase) {
	rs := append([]hostile.Resource{{Name: goodName, Body: good()}}, fc.files()...)
	src, err := hostile.Start(rs)
	require.NoError(t, err)
	t.Cleanup(src.Close)
	e := &faultEnv{src: src, files: map[string][]byte{}}
	for _, r := range rs {
		e.files[r.Name] = r.Body
	}
	flags := append([]string{"--poll-interval", "0", "--cache-dir", "none"}, fc.flags...)
	e.m = mount(t, src.URL(), flags...)
	pid := e.m.pid(t)
	for name, f := range fc.fault {
		src.SetFault(name, f)
	}
	bound := fc.bound
	if bound == 0 {
		bound = 60 * time.Second
	}
	start := time.Now()
	fc.run(t, e)
	took := time.Since(start)
	e.alive(t)
	peak := peakRSS(t, pid)
	assert.Less(t, took, bound, "the case took too long")
	assert.Less(t, peak, int64(maxPeak), "peak RSS")
	record(t, fc.name, took, peak)
}

func record(t *testing.T, name string, took time.Duration, peak int64) {
	t.Cleanup(func() {
		pass := "pass"
		if t.Failed() {
			pass = "FAIL"
		}
		matrix.mu.Lock()
		defer matrix.mu.Unlock()
		matrix.rows = append(matrix.rows, fmt.Sprintf("%-48s %-5s %8s %7.1f MiB", name, pass, took.Round(10*time.Millisecond), float64(peak)/mib))
	})
}

// sourceDownAtMount: rsfs mount exits non-zero with a clear error, and
// leaves no mount behind.
func sourceDownAtMount(t *testing.T) {
	src, err := hostile.Start([]hostile.Resource{{Name: goodName, Body: good()}})
	require.NoError(t, err)
	src.Stop()
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	start := time.Now()
	_, stderr, err := run(t, 2*time.Minute, rsfsBin, "mount", src.URL(), mnt, "--log-file", filepath.Join(dir, "log"),
		"--cache-dir", "none", "--retries", "1")
	took := time.Since(start)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "rsfs mount must fail")
	assert.NotEqual(t, 0, ee.ExitCode())
	assert.Contains(t, stderr, "connection refused", "the error says why")
	assert.False(t, isMountPoint(mnt), "no mount left behind")
	_, err = os.Stat(mnt)
	assert.False(t, errors.Is(err, syscall.ENOTCONN))
	assert.Less(t, took, time.Minute)
	record(t, "Source down at mount", took, 0)
}

// hostileURIs: a Resource List whose <loc>s point outside the Source, at
// local files, at other schemes, at paths that climb out of the tree, or
// carry bytes no file name may hold. The mount comes up, no name it shows
// is one a file system cannot hold, nothing is fetched from a host the
// Source did not name, no local file's bytes are ever served, and the
// <loc>s that are not http or https (file:, javascript:, gopher:) are not in
// the tree at all.
func hostileURIs(t *testing.T) {
	var trapHits atomic.Int64
	trap := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		trapHits.Add(1)
		_, _ = w.Write([]byte("trap"))
	})}
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no second loopback address for the trap host: %v", err)
	}
	go func() { _ = trap.Serve(ln) }()
	t.Cleanup(func() { _ = trap.Close() })

	passwd, err := os.ReadFile("/etc/passwd")
	require.NoError(t, err)
	locs := map[string]struct {
		loc  string
		body []byte
	}{
		// Published with the local file's own hash and length: if rsfs
		// ever read it, verification would pass and the bytes would show.
		"local":    {"file:///etc/passwd", passwd},
		"trap":     {"http://" + ln.Addr().String() + "/files/x", []byte("trap")},
		"dots":     {"{base}files/../../../../etc/passwd", passwd},
		"encdots":  {"{base}files/%2e%2e/%2e%2e/etc/passwd", passwd},
		"slashes":  {"{base}files/%2F..%2F..%2Fescape", randomBody(100, 11)},
		"nul":      {"{base}files/a%00b", randomBody(100, 12)},
		"newline":  {"{base}files/line%0Abreak", randomBody(100, 13)},
		"long":     {"{base}files/" + strings.Repeat("x", 3000), randomBody(100, 14)},
		"js":       {"javascript:alert(1)", randomBody(100, 15)},
		"gopher":   {"gopher://127.0.0.1:70/x", randomBody(100, 16)},
		"userinfo": {"http://user:secret@" + ln.Addr().String() + "/files/y", []byte("trap")},
	}
	rs := []hostile.Resource{{Name: goodName, Body: good()}}
	for name, l := range locs {
		rs = append(rs, hostile.Resource{Name: name, Body: l.body, Loc: l.loc})
	}
	src, err := hostile.Start(rs)
	require.NoError(t, err)
	t.Cleanup(src.Close)
	e := &faultEnv{src: src, files: map[string][]byte{goodName: good()}}
	start := time.Now()
	e.m = mount(t, src.URL(), "--poll-interval", "0", "--cache-dir", "none")
	pid := e.m.pid(t)

	var names, readable int
	err = filepath.WalkDir(e.m.dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err, "walking the mount")
		names++
		require.LessOrEqual(t, len(d.Name()), 255, "a name longer than NAME_MAX: %q", p)
		require.NotContains(t, d.Name(), "\x00")
		if !d.Type().IsRegular() {
			return nil
		}
		uri := getxattr(t, p, "user.resourcesync.uri")
		require.True(t, strings.HasPrefix(uri, "http://") || strings.HasPrefix(uri, "https://"), "%s is %s: only http and https <loc>s are in the tree", p, uri)
		out, code := tool(t, time.Minute, "cat", p)
		if code != 0 {
			return nil
		}
		readable++
		require.False(t, bytes.Equal(out, passwd), "%s served the bytes of the local /etc/passwd", p)
		require.NotEqual(t, "trap", string(out), "%s served bytes from a host the Source did not name", p)
		return nil
	})
	require.NoError(t, err)
	assert.Positive(t, names)
	top, err := os.ReadDir(e.m.dir)
	require.NoError(t, err)
	for _, d := range top {
		for _, gone := range []string{"@", "@javascript:", "@127.0.0.1:70"} {
			assert.NotEqual(t, gone, d.Name(), "a <loc> that is not http or https is left out")
		}
	}
	assert.Equal(t, int64(0), trapHits.Load(), "requests to a host the Source did not name")
	e.alive(t)
	assert.GreaterOrEqual(t, readable, 1, "good.bin at least")
	took := time.Since(start)
	peak := peakRSS(t, pid)
	assert.Less(t, took, 2*time.Minute)
	assert.Less(t, peak, int64(maxPeak), "peak RSS")
	record(t, "hostile URIs", took, peak)
}
