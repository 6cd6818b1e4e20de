package fs

import (
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opLog collects go-fuse's debug log of a mount: one "rx" line per request
// that reached rsfs. The server's goroutines write while the test reads.
type opLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *opLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.Split(strings.TrimRight(string(p), "\n"), "\n")...)
	return len(p), nil
}

// reset forgets the requests logged so far.
func (l *opLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = nil
}

// count is the number of requests of opcode op (FLUSH, OPEN…) received.
func (l *opLog) count(op string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "rx" && f[2] == op {
			n++
		}
	}
	return n
}

// mountLogged mounts tf read-only, as rsfs does, and logs every request
// that reaches it once the mount is up; go-fuse's own requests while
// mounting (INIT, its epoll check, which opens and closes a file of its
// own) are left out.
func mountLogged(t *testing.T, tf *testFS) (string, *opLog) {
	t.Helper()
	ops := &opLog{}
	dir := mountTestFSWith(t, tf, true, func(o *fuse.MountOptions) {
		o.Debug = true
		o.Logger = log.New(ops, "", 0)
	})
	ops.reset()
	return dir, ops
}

// TestCloseSendsFLUSHOnlyOnce closes files again and again: FLUSH is
// answered ENOSYS, which the kernel takes as success and as a reason never
// to send FLUSH again, so no close after the first costs a round trip (grep
// and tar close every file they read). An answer of OK would cost one per
// close; an error would fail close(2).
func TestCloseSendsFLUSHOnlyOnce(t *testing.T) {
	tf := newTestFS(t)
	n := tf.file(t, "top.txt")
	assert.Equal(t, fuse.ENOSYS, tf.fs.Flush(nil, &fuse.FlushIn{InHeader: header(n)}), "FLUSH, straight to rsfs")

	tf = newTestFS(t)
	dir, ops := mountLogged(t, tf)
	const closes = 4
	for i := range closes {
		f, err := os.Open(filepath.Join(dir, "top.txt"))
		require.NoError(t, err)
		require.NoError(t, f.Close(), "close %d: the kernel keeps ENOSYS to itself", i)
	}
	got, err := os.ReadFile(filepath.Join(dir, "data", "a.txt"))
	require.NoError(t, err, "a read and close of another file")
	assert.Equal(t, "hello world", string(got))
	assert.Equal(t, 1, ops.count("FLUSH"), "FLUSH requests for %d closes", closes+1)
}
