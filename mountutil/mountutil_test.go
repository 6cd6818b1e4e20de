package mountutil

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrepare(t *testing.T) {
	dir := t.TempDir()
	assert.NoError(t, Prepare(dir, false))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x"), nil, 0o644))
	err := Prepare(dir, false)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrNotEmpty)
	assert.NoError(t, Prepare(dir, true))
	err = Prepare(filepath.Join(dir, "x"), true)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a directory")
	err = Prepare(filepath.Join(dir, "missing"), false)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.False(t, IsStale(dir))
}

func TestHoldAndRelease(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	dir := t.TempDir()
	path := HoldPath(dir)
	assert.Equal(t, path, HoldPath(dir+"/"), "the same mount point, spelled otherwise")
	assert.NotEqual(t, path, HoldPath(t.TempDir()), "another mount point")
	require.NoError(t, PrepareHoldDir(path))
	require.NoError(t, CheckHoldFile(path, os.Getuid()))
	assert.False(t, Held(path))
	until := time.Now().Add(time.Hour)
	require.NoError(t, WriteHold(path, until))
	assert.True(t, Held(path))
	got, ok := HeldUntil(path)
	assert.True(t, ok)
	assert.True(t, got.Equal(until.UTC()), "%s %s", got, until)
	require.NoError(t, RemoveHold(path))
	assert.False(t, Held(path))
	require.NoError(t, RemoveHold(path), "releasing twice is fine")

	require.NoError(t, WriteHold(path, time.Now().Add(-time.Second))) // already expired
	assert.False(t, Held(path))
	_, err := os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "an expired hold is removed")
}

// A hold file a mount announces is checked before anything is written
// there: rsfs hold may run as root.
func TestCheckHoldFileRefusesWhatIsNoHoldFile(t *testing.T) {
	base := t.TempDir()
	good := filepath.Join(base, "rsfs", "hold-0123456789abcdef")
	require.NoError(t, PrepareHoldDir(good))
	assert.NoError(t, CheckHoldFile(good, -1))
	assert.ErrorContains(t, CheckHoldFile("/etc/passwd", -1), "not a hold file's name")
	assert.ErrorContains(t, CheckHoldFile("rel/hold-0123456789abcdef", -1), "not a hold file's name")
	open := filepath.Join(base, "open")
	require.NoError(t, os.Mkdir(open, 0o777))
	require.NoError(t, os.Chmod(open, 0o777))
	assert.ErrorContains(t, CheckHoldFile(filepath.Join(open, "hold-0123456789abcdef"), -1), "others may write")
	// A directory its group may write to is refused too: the group's
	// members are others to the mount's user.
	shared := filepath.Join(base, "shared")
	require.NoError(t, os.Mkdir(shared, 0o700))
	require.NoError(t, os.Chmod(shared, 0o770))
	assert.ErrorContains(t, CheckHoldFile(filepath.Join(shared, "hold-0123456789abcdef"), -1), "others may write")
	require.NoError(t, os.Chmod(shared, 0o750))
	assert.NoError(t, CheckHoldFile(filepath.Join(shared, "hold-0123456789abcdef"), -1), "read by the group, written by the owner only")
	link := filepath.Join(base, "link")
	require.NoError(t, os.Symlink(filepath.Join(base, "rsfs"), link))
	assert.ErrorContains(t, CheckHoldFile(filepath.Join(link, "hold-0123456789abcdef"), -1), "not a directory")
}

// fakeServer is a FUSE server whose unmount and end the test controls.
type fakeServer struct {
	unmountErr error
	ended      chan struct{}
	calls      chan string
}

func newFakeServer(unmountErr error) *fakeServer {
	return &fakeServer{unmountErr: unmountErr, ended: make(chan struct{}), calls: make(chan string, 10)}
}

func (s *fakeServer) Wait() { <-s.ended }

func (s *fakeServer) Unmount() error {
	s.calls <- "unmount"
	if s.unmountErr == nil {
		close(s.ended)
	}
	return s.unmountErr
}

// serveInBackground runs serveUntil and returns a channel closed when it
// returns.
func serveInBackground(srv *fakeServer, sigs chan os.Signal, grace time.Duration) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		serveUntil("/nonexistent/mnt", srv, sigs, func() { srv.calls <- "shutdown" }, grace, slog.New(slog.DiscardHandler))
	}()
	return done
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still waiting after 10s", what)
	}
}

func TestServeUntilUnmountedByUser(t *testing.T) {
	srv := newFakeServer(nil)
	done := serveInBackground(srv, make(chan os.Signal), time.Hour)
	close(srv.ended) // umount DIR
	waitClosed(t, done, "return after the server ended")
	assert.Empty(t, srv.calls, "neither shutdown nor unmount")
}

func TestServeUntilUnmountedOnSignal(t *testing.T) {
	srv := newFakeServer(nil)
	sigs := make(chan os.Signal, 1)
	done := serveInBackground(srv, sigs, time.Hour)
	sigs <- syscall.SIGTERM
	waitClosed(t, done, "return once unmounted")
	assert.Equal(t, "shutdown", <-srv.calls, "reads fail first")
	assert.Equal(t, "unmount", <-srv.calls)
}

// A mount that stays busy (its unmount fails, and its server never ends)
// is given up after grace: serveUntil returns to let the caller save its
// state, instead of exiting the process.
func TestServeUntilUnmountedGivesUpAfterGrace(t *testing.T) {
	srv := newFakeServer(syscall.EBUSY)
	sigs := make(chan os.Signal, 2)
	done := serveInBackground(srv, sigs, 50*time.Millisecond)
	sigs <- syscall.SIGINT
	sigs <- syscall.SIGINT // a second ^C is ignored, not fatal
	waitClosed(t, done, "return after grace")
	assert.Equal(t, "shutdown", <-srv.calls)
	assert.Equal(t, "unmount", <-srv.calls)
}

// A signal that comes while the Source loads, or between the mount and
// the serving, is held: it stops the loading, and the serving unmounts at
// once instead of the process dying with the mount left dead.
func TestSignalBeforeServingIsNotLost(t *testing.T) {
	sigs := CatchSignals(context.Background(), nil)
	t.Cleanup(sigs.Stop)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	waitClosed(t, sigs.Context().Done(), "the loading context to be cancelled")
	assert.EqualError(t, context.Cause(sigs.Context()), "terminated signal received")

	srv := newFakeServer(nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ServeUntilUnmounted("/nonexistent/mnt", srv, sigs, func() { srv.calls <- "shutdown" }, time.Hour, slog.New(slog.DiscardHandler))
	}()
	waitClosed(t, done, "return once unmounted")
	assert.Equal(t, "shutdown", <-srv.calls)
	assert.Equal(t, "unmount", <-srv.calls)
}

func TestMountedAt(t *testing.T) {
	fstype, _, ok := MountedAt("/proc")
	assert.True(t, ok)
	assert.Equal(t, "proc", fstype)
	_, _, ok = MountedAt(t.TempDir())
	assert.False(t, ok, "a plain directory")
	assert.Equal(t, "/mnt/my data", unescapeMountinfo(`/mnt/my\040data`))
	err := Prepare("/proc", true)
	assert.ErrorContains(t, err, "mountpoint /proc: already a mount point (of proc, type proc)", "even with --allow-non-empty")
}
