package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Helpers of throttle_test.go: a Source on a Go server that records every
// request and can refuse some, a Source on stock nginx with limit_req, and
// readers that report what a user sees.

// seen is one request as a Source saw it arrive.
type seen struct {
	at     time.Time // when the handler started: the request's arrival
	method string
	path   string
	ua     string
	rng    string // the Range header
	status int
}

// goSource is a static Source (written by writeStaticSource, served by
// http.FileServer, Range included) on 127.0.0.1 that records every request.
// refuse, when set, may answer a request itself (true) instead.
type goSource struct {
	base   string // http://127.0.0.1:PORT/
	origin string // http://127.0.0.1:PORT
	files  map[string][]byte

	mu        sync.Mutex
	reqs      []seen
	lastWrite time.Time // the last write of file bytes returned
	refuse    func(w http.ResponseWriter, r *http.Request) bool
}

// smallFiles are n small files, perDir to a directory: f/DD/NNNN.txt.
func smallFiles(n, perDir int) func(base string) []staticFile {
	return func(base string) []staticFile {
		out := make([]staticFile, n)
		for i := range out {
			p := fmt.Sprintf("f/%02d/%04d.txt", i/perDir, i)
			out[i] = staticFile{loc: base + p, path: p, body: fmt.Appendf(nil, "file %d %s\n", i, strings.Repeat("y", i%300))}
		}
		return out
	}
}

// smallSendBuffer keeps what the kernel holds of a response small (64 KiB
// send buffer, no autotuning), so that the time a write of file bytes
// returns at the server is close to the time the client took them.
type smallSendBuffer struct{ net.Listener }

func (l smallSendBuffer) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(64 << 10)
	}
	return c, err
}

// startGoSource serves the files gen(base) returns; it stops when the test
// ends.
func startGoSource(t *testing.T, gen func(base string) []staticFile) *goSource {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	srv.Listener = smallSendBuffer{srv.Listener}
	s := &goSource{origin: "http://" + srv.Listener.Addr().String(), files: map[string][]byte{}}
	s.base = s.origin + "/"
	root := t.TempDir()
	list := gen(s.base)
	for _, f := range list {
		s.files[f.path] = f.body
	}
	writeStaticSource(t, root, s.base, list)
	files := http.FileServer(http.Dir(root))
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		i := len(s.reqs)
		s.reqs = append(s.reqs, seen{at: time.Now(), method: r.Method, path: r.URL.Path, ua: r.Header.Get("User-Agent"), rng: r.Header.Get("Range")})
		refuse := s.refuse
		s.mu.Unlock()
		rw := &recordingWriter{ResponseWriter: w, s: s, file: isFileBytes(r.URL.Path)}
		if refuse == nil || !refuse(rw, r) {
			files.ServeHTTP(rw, r)
		}
		s.mu.Lock()
		s.reqs[i].status = rw.status
		s.mu.Unlock()
	})
	srv.Start()
	t.Cleanup(srv.Close)
	return s
}

// isFileBytes reports whether a request path is one of the files' (not a
// ResourceSync document).
func isFileBytes(path string) bool { return strings.HasPrefix(path, "/f/") }

// recordingWriter notes the status and when the last file bytes were
// written.
type recordingWriter struct {
	http.ResponseWriter
	s      *goSource
	file   bool
	status int
}

func (w *recordingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	if w.file && n > 0 {
		w.s.mu.Lock()
		w.s.lastWrite = time.Now()
		w.s.mu.Unlock()
	}
	return n, err
}

func (w *recordingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// setRefuse installs (or, with nil, removes) the refusal hook.
func (s *goSource) setRefuse(f func(w http.ResponseWriter, r *http.Request) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = f
}

// requests is a copy of the requests seen so far, in arrival order.
func (s *goSource) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.reqs...)
}

// count is how many requests for path arrived.
func (s *goSource) count(path string) int {
	n := 0
	for _, r := range s.requests() {
		if r.path == path {
			n++
		}
	}
	return n
}

// paths are the relative paths of the files, sorted.
func (s *goSource) paths() []string {
	out := make([]string, 0, len(s.files))
	for p := range s.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// readResult is what one read of a file on the mount gave.
type readResult struct {
	rel  string
	err  error
	good bool // the bytes read are the published ones
}

// readFileWithin reads a file on the mount, giving up (an error) after d:
// a hung read fails the test instead of hanging it.
func readFileWithin(path string, want []byte, d time.Duration) readResult {
	done := make(chan readResult, 1)
	go func() {
		got, err := os.ReadFile(path)
		done <- readResult{err: err, good: err == nil && bytes.Equal(got, want)}
	}()
	select {
	case r := <-done:
		return r
	case <-time.After(d):
		return readResult{err: fmt.Errorf("read of %s did not finish within %s", path, d)}
	}
}

// readAll reads rels (paths relative to the mount and to the Source's root)
// with workers readers at once, like `xargs -P`, and returns each result.
func readAll(m *mounted, files map[string][]byte, rels []string, workers int) []readResult {
	out := make([]readResult, len(rels))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := readFileWithin(m.path(rels[i]), files[rels[i]], 2*time.Minute)
				r.rel = rels[i]
				out[i] = r
			}
		}()
	}
	for i := range rels {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// throttled is one entry of `rsfs status --json`'s throttled array.
type throttled struct {
	Origin   string  `json:"origin"`
	Answers  int     `json:"answers"`
	InFlight int     `json:"in_flight"`
	Limit    int     `json:"limit"`
	Rate     float64 `json:"rate"`
}

// statusOnce runs `rsfs status [--json] DIR` without failing the test (it
// runs in a goroutine): its stdout, or "" on any error.
func statusOnce(dir string, asJSON bool) string {
	args := []string{"status", dir}
	if asJSON {
		args = []string{"status", "--json", dir}
	}
	cmd := exec.Command(rsfsBin, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		return ""
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return ""
		}
		return out.String()
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return ""
	}
}

// throttledOf parses the throttled array of a `status --json` output.
func throttledOf(out string) []throttled {
	var st struct {
		Throttled []throttled `json:"throttled"`
	}
	if json.Unmarshal([]byte(out), &st) != nil {
		return nil
	}
	return st.Throttled
}

// findNginx is the nginx binary; the test is skipped without one.
func findNginx(t *testing.T) string {
	t.Helper()
	if bin, err := exec.LookPath("nginx"); err == nil {
		return bin
	}
	for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("needs nginx (Debian: apt-get install nginx; .ci/run installs it)")
	return ""
}

// limitedNginx is a static Source served over plain HTTP by stock nginx
// with limit_req on every location.
type limitedNginx struct {
	url       string
	accessLog string
	files     map[string][]byte
}

// startLimitedNginx serves n small files behind
//
//	limit_req_zone $binary_remote_addr zone=rs:1m rate=200r/s;
//	limit_req zone=rs burst=100 nodelay;
//	limit_req_status STATUS;
//
// and stops when the test ends.
func startLimitedNginx(t *testing.T, n, status int) *limitedNginx {
	t.Helper()
	bin := findNginx(t)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	addr := freeAddr(t)
	src := &limitedNginx{url: "http://" + addr + "/", accessLog: filepath.Join(dir, "access.log"), files: map[string][]byte{}}
	list := smallFiles(n, 100)(src.url)
	for _, f := range list {
		src.files[f.path] = f.body
	}
	root := filepath.Join(dir, "www")
	writeStaticSource(t, root, src.url, list)
	conf := nginxPreamble(dir, `$msec $request_method $uri $status`) + fmt.Sprintf(`	limit_req_zone $binary_remote_addr zone=rs:1m rate=200r/s;
	server {
		listen %[1]s;
		root %[2]s;
		location / {
			limit_req zone=rs burst=100 nodelay;
			limit_req_status %[3]d;
		}
		location /.well-known/ {
			limit_req zone=rs burst=100 nodelay;
			limit_req_status %[3]d;
		}
	}
}
`, addr, root, status)
	runNginx(t, bin, dir, conf, addr)
	return src
}

// statuses counts the access log's lines by status.
func (s *limitedNginx) statuses(t *testing.T) (total int, byStatus map[string]int) {
	t.Helper()
	data, err := os.ReadFile(s.accessLog)
	require.NoError(t, err)
	byStatus = map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		total++
		byStatus[f[3]]++
	}
	return total, byStatus
}

// paths are the relative paths of the files, sorted.
func (s *limitedNginx) paths() []string {
	out := make([]string, 0, len(s.files))
	for p := range s.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
