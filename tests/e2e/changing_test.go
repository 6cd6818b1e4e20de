package e2e

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// A file that changes upstream while a tool copies it: the tool ends with
// the whole old version, the whole new one, or an error; never a short or
// mixed copy. The file is larger than --verify-whole-below (set to 1 MiB
// here, to keep the test process small), so it is streamed, and
// --read-ahead 1 keeps rsfs close behind the reader, so the change lands
// mid-copy.

const bigFile = 8 << 20

// newBody is the new version: smaller, as in issue 11 (1,189,463 bytes).
var newBody = bytes.Repeat([]byte("new version\n"), 1189463/12+1)[:1189463]

type changing struct {
	src          *sourcetest.Source
	m            *mounted
	path, marker string
	uri, markURI string
	old          []byte
	markMtime    time.Time
}

func startChanging(t *testing.T) *changing {
	src := startSource(t, sourcetest.Config{Resources: 2, MinSize: bigFile, MaxSize: bigFile})
	m := mount(t, src.URL(), append(pollFlags, "--verify-whole-below", "1MiB", "--read-ahead", "1")...)
	files := walkFiles(t, m.dir)
	res := src.Resources()
	old, _ := src.Body(res[0].URI)
	st, err := os.Stat(files[res[1].URI])
	require.NoError(t, err)
	return &changing{src: src, m: m, path: files[res[0].URI], marker: files[res[1].URI],
		uri: res[0].URI, markURI: res[1].URI, old: old, markMtime: st.ModTime()}
}

// change publishes the new version (and touches the marker) and waits
// until the mount has applied it: the marker, which nobody holds open,
// shows its new version.
func (c *changing) change(t *testing.T) {
	require.NoError(t, c.src.Update(c.uri, newBody))
	require.NoError(t, c.src.Update(c.markURI, []byte("marker\n")))
	eventually(t, "the change to be applied", func() bool {
		st, err := os.Stat(c.marker)
		return err == nil && st.Size() == int64(len("marker\n"))
	})
}

// newVersionShows: readers that open the file by name see the new version.
func (c *changing) newVersionShows(t *testing.T) {
	eventually(t, "the new version by name", func() bool {
		got, err := os.ReadFile(c.path)
		return err == nil && bytes.Equal(got, newBody)
	})
}

// oneVersion asserts what a copy that exited with code got: with 0, a
// whole version; else a prefix of the old one.
func oneVersion(t *testing.T, code int, got, old []byte) {
	t.Helper()
	if code == 0 {
		assert.True(t, bytes.Equal(got, old) || bytes.Equal(got, newBody),
			"exit 0 with %d bytes: neither version (old %d, new %d)", len(got), len(old), len(newBody))
		return
	}
	require.LessOrEqual(t, len(got), len(old))
	assert.True(t, bytes.Equal(got, old[:len(got)]), "a failed copy printed bytes of no version")
	t.Logf("the copy failed (exit %d) after %d of %d bytes", code, len(got), len(old))
}

// throughFIFO runs name args (writing to a FIFO), reads head bytes of its
// output, changes the file, then reads the rest; it returns the output and
// exit status.
func (c *changing) throughFIFO(t *testing.T, head int, name string, args ...string) ([]byte, int) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	cmd := exec.Command(name, append(args, fifo)...)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	out, err := os.Open(fifo)
	require.NoError(t, err)
	defer out.Close()
	first := make([]byte, head)
	_, err = io.ReadFull(out, first)
	require.NoError(t, err)
	c.change(t)
	rest, _ := io.ReadAll(out)
	select {
	case err := <-done:
		return append(first, rest...), exitCode(t, err)
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("%s did not finish", name)
	}
	return nil, -1
}

func exitCode(t *testing.T, err error) int {
	var ee *exec.ExitError
	if err == nil {
		return 0
	}
	require.ErrorAs(t, err, &ee)
	return ee.ExitCode()
}

func TestChangeWhileCopyingCp(t *testing.T) {
	t.Parallel()
	c := startChanging(t)
	got, code := c.throughFIFO(t, 1<<20, "cp", c.path)
	oneVersion(t, code, got, c.old)
	c.newVersionShows(t)
}

func TestChangeWhileCopyingTar(t *testing.T) {
	t.Parallel()
	c := startChanging(t)
	got, code := c.throughFIFO(t, 1<<20, "tar", "-C", filepath.Dir(c.path), "-c", filepath.Base(c.path), "-f")
	if code == 0 {
		tr := tar.NewReader(bytes.NewReader(got))
		hdr, err := tr.Next()
		require.NoError(t, err)
		body, err := io.ReadAll(tr)
		require.NoError(t, err, "a tar stream that ends early")
		assert.Equal(t, hdr.Size, int64(len(body)))
		oneVersion(t, 0, body, c.old)
	} else {
		t.Logf("tar failed (exit %d)", code)
	}
	c.newVersionShows(t)
}

func TestChangeWhileCopyingRsync(t *testing.T) {
	t.Parallel()
	c := startChanging(t)
	dest := filepath.Join(t.TempDir(), "copy")
	cmd := exec.Command("rsync", "--bwlimit=2000", c.path, dest) // ~4 s for 8 MiB
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(time.Second) // rsync is a few MiB in
	c.change(t)
	var code int
	select {
	case err := <-done:
		code = exitCode(t, err)
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("rsync did not finish")
	}
	got, err := os.ReadFile(dest)
	if code == 0 {
		require.NoError(t, err)
		oneVersion(t, 0, got, c.old)
	} else {
		// rsync reports the read error with its exit status (23); what it
		// leaves at dest is its own affair (it pads what it could not
		// read with zeros).
		t.Logf("rsync failed (exit %d), leaving %d bytes (err %v)", code, len(got), err)
	}
	c.newVersionShows(t)
}

// An open descriptor keeps reading its version after the change: its
// size stays the old one, and it reads the old bytes to the end or fails.
func TestOpenDescriptorKeepsItsVersion(t *testing.T) {
	t.Parallel()
	c := startChanging(t)
	f, err := os.Open(c.path)
	require.NoError(t, err)
	head := make([]byte, 1<<20)
	_, err = io.ReadFull(f, head)
	require.NoError(t, err)
	c.change(t)
	st, err := f.Stat()
	require.NoError(t, err)
	assert.Equal(t, int64(len(c.old)), st.Size(), "fstat: the version this descriptor reads")
	rest, err := io.ReadAll(f)
	if err == nil {
		assert.True(t, bytes.Equal(c.old, append(head, rest...)), "the whole old version")
	} else {
		assert.ErrorIs(t, err, syscall.EIO, "or an error, never a short copy")
		assert.True(t, bytes.Equal(c.old[1<<20:1<<20+len(rest)], rest))
	}
	require.NoError(t, f.Close())
	c.newVersionShows(t)
}
