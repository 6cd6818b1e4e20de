package fs

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"rsfs/catalog"
	"rsfs/resourcesync"
	"rsfs/tests/cachetest"
	"rsfs/tests/wait"
)

// These tests mount in-process, as go-fuse's own tests do, where the
// kernel's part is what is tested: its caches and what reaches rsfs.

// mountTestFS mounts tf at a temporary directory and unmounts it when the
// test ends. readOnly false mounts without MS_RDONLY, so that the kernel
// passes mutating calls on to rsfs.
func mountTestFS(t *testing.T, tf *testFS, readOnly bool) string {
	t.Helper()
	return mountTestFSWith(t, tf, readOnly, nil)
}

// mountTestFSWith is mountTestFS with a last say on the options: edit, if
// not nil, sees them just before the mount.
func mountTestFSWith(t *testing.T, tf *testFS, readOnly bool, edit func(*fuse.MountOptions)) string {
	t.Helper()
	return mountRaw(t, tf, tf.fs, readOnly, edit)
}

// mountRaw is mountTestFSWith serving raw, which answers for tf.fs (a
// wrapper that counts what reaches it).
func mountRaw(t *testing.T, tf *testFS, raw fuse.RawFileSystem, readOnly bool, edit func(*fuse.MountOptions)) string {
	t.Helper()
	dev, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("needs FUSE: %v", err)
	}
	dev.Close()
	opts := tf.fs.MountOptions("rsfs-test", false)
	if !readOnly {
		opts.Options = slices.DeleteFunc(opts.Options, func(o string) bool { return o == "ro" })
		opts.DirectMountFlags &^= syscall.MS_RDONLY
	}
	if edit != nil {
		edit(opts)
	}
	dir := t.TempDir()
	server, err := fuse.NewServer(raw, dir, opts)
	require.NoError(t, err)
	go server.Serve()
	require.NoError(t, server.WaitMount())
	tf.fs.Mounted(server.KernelSettings())
	t.Cleanup(func() {
		if err := server.Unmount(); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	return dir
}

func TestMountedTree(t *testing.T) {
	tf := newTestFS(t)
	dir := mountTestFS(t, tf, true)
	entries, err := os.ReadDir(filepath.Join(dir, "data"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"a.txt", "bad.bin", "sub"}, names)

	got, err := os.ReadFile(filepath.Join(dir, "data", "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello world", string(got))
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(filepath.Join(dir, "data", "a.txt"), &st))
	assert.Equal(t, uint64(aIno), st.Ino)
	assert.Equal(t, int64(11), st.Size)
	assert.Equal(t, uint32(syscall.S_IFREG|0o444), st.Mode)
	assert.Equal(t, aMtime.Unix(), st.Mtim.Sec)
	assert.Equal(t, uint32(testUID), st.Uid)
	require.NoError(t, syscall.Stat(filepath.Join(dir, "data"), &st))
	assert.Equal(t, uint64(dataIno), st.Ino)

	buf := make([]byte, 100)
	n, err := syscall.Getxattr(filepath.Join(dir, "data", "a.txt"), "user.resourcesync.lastmod", buf)
	require.NoError(t, err)
	assert.Equal(t, "2024-05-01T10:20:30.5Z", string(buf[:n]))

	_, err = os.ReadFile(filepath.Join(dir, "data", "bad.bin"))
	assert.ErrorIs(t, err, syscall.EIO)
	_, err = os.Stat(filepath.Join(dir, "nothing"))
	assert.ErrorIs(t, err, syscall.ENOENT)
}

// TestMountedMutationsReachRsfs mounts without MS_RDONLY, so that the
// answers come from rsfs, not from the kernel.
func TestMountedMutationsReachRsfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the files are 0444, so the kernel would answer EACCES first")
	}
	tf := newTestFS(t)
	dir := mountTestFS(t, tf, false)
	a := filepath.Join(dir, "data", "a.txt")
	data := filepath.Join(dir, "data")
	checks := map[string]error{
		"write":   os.WriteFile(a, []byte("x"), 0o644),
		"create":  os.WriteFile(filepath.Join(data, "new.txt"), []byte("x"), 0o644),
		"rename":  os.Rename(a, a+".moved"),
		"remove":  os.Remove(a),
		"mkdir":   os.Mkdir(filepath.Join(data, "newdir"), 0o755),
		"rmdir":   os.Remove(filepath.Join(data, "sub")),
		"chmod":   os.Chmod(a, 0o644),
		"chown":   os.Chown(a, 1, 1),
		"utimes":  os.Chtimes(a, time.Now(), time.Now()),
		"symlink": os.Symlink("x", filepath.Join(data, "link")),
		"link":    os.Link(a, filepath.Join(data, "hardlink")),
		"mkfifo":  syscall.Mkfifo(filepath.Join(data, "fifo"), 0o644),
		"xattr":   syscall.Setxattr(a, "user.x", []byte("1"), 0),
		"rmxattr": syscall.Removexattr(a, "user.resourcesync.uri"),
		"trunc":   os.Truncate(a, 0),
	}
	for name, err := range checks {
		assert.ErrorIs(t, err, syscall.EROFS, name)
	}
	got, err := os.ReadFile(a)
	require.NoError(t, err)
	assert.Equal(t, "hello world", string(got), "unchanged")
}

// TestNotifyReachesTheKernel changes the catalog under a mount whose kernel
// caches last a minute: only rsfs's notifications can make the changes
// show within the test.
func TestNotifyReachesTheKernel(t *testing.T) {
	tf := newTestFS(t)
	dir := mountTestFS(t, tf, true)
	a := filepath.Join(dir, "data", "a.txt")
	created := filepath.Join(dir, "data", "new.txt")
	top := filepath.Join(dir, "top.txt")
	// Fill the kernel's caches: attributes, pages, a negative entry, the
	// listing.
	got, err := os.ReadFile(a)
	require.NoError(t, err)
	require.Equal(t, "hello world", string(got))
	_, err = os.Stat(created)
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Stat(top)
	require.NoError(t, err)
	entries, err := os.ReadDir(filepath.Join(dir, "data"))
	require.NoError(t, err)
	require.Len(t, entries, 3)

	newBody := []byte("hello again, world")
	tf.origin.Set(aURI, newBody)
	tf.fs.Notify(tf.cat.Upsert(&catalog.Resource{URI: aURI, Length: int64(len(newBody)), Lastmod: aMtime.Add(time.Hour),
		Hashes: []resourcesync.Hash{{Alg: "sha-256", Value: cachetest.SHA256Hex(newBody)}}}))
	newURI := testOrigin + "/data/new.txt"
	tf.origin.Set(newURI, []byte("new\n"))
	tf.fs.Notify(tf.cat.Upsert(&catalog.Resource{URI: newURI, Length: 4}))
	tf.fs.Notify(tf.cat.Remove(topURI))

	wait.For(t, "the new version", func() bool {
		got, err := os.ReadFile(a)
		return err == nil && string(got) == string(newBody)
	})
	st, err := os.Stat(a)
	require.NoError(t, err)
	assert.Equal(t, int64(len(newBody)), st.Size())
	assert.Equal(t, aMtime.Add(time.Hour).Unix(), st.ModTime().Unix())
	wait.For(t, "the created file", func() bool {
		got, err := os.ReadFile(created)
		return err == nil && string(got) == "new\n"
	})
	wait.For(t, "the removed file to go", func() bool {
		_, err := os.Stat(top)
		return errors.Is(err, os.ErrNotExist)
	})
	wait.For(t, "the listing", func() bool {
		entries, err := os.ReadDir(filepath.Join(dir, "data"))
		return err == nil && len(entries) == 4
	})
}

// An open file keeps reading the version it was opened at, from rsfs (its
// pages dropped from the kernel's cache), while its name leads to the new
// version; the old inode is unlinked and goes with its last close.
func TestOpenFileKeepsItsVersionWhileItsNameShowsTheNew(t *testing.T) {
	tf := newTestFS(t)
	dir := mountTestFS(t, tf, true)
	uri := testOrigin + "/data/three-blocks.bin"
	oldBody := bytes.Repeat([]byte("old."), 3*4096/4)
	newBody := bytes.Repeat([]byte("new!"), 2*4096/4)
	publish := func(body []byte, mtime time.Time) {
		tf.origin.Set(uri, body)
		tf.fs.Notify(tf.cat.Upsert(&catalog.Resource{URI: uri, Length: int64(len(body)), Lastmod: mtime,
			Hashes: []resourcesync.Hash{{Alg: "sha-256", Value: cachetest.SHA256Hex(body)}}}))
	}
	publish(oldBody, aMtime)
	path := filepath.Join(dir, "data", "three-blocks.bin")
	var f *os.File
	wait.For(t, "the first version", func() bool {
		var err error
		f, err = os.Open(path)
		return err == nil
	})
	defer f.Close()
	got, err := io.ReadAll(f)
	require.NoError(t, err)
	require.Equal(t, oldBody, got)

	publish(newBody, aMtime.Add(time.Hour))
	wait.For(t, "the new version by name", func() bool {
		got, err := os.ReadFile(path)
		return err == nil && bytes.Equal(got, newBody)
	})
	var st syscall.Stat_t
	wait.For(t, "the open version to be unlinked", func() bool {
		require.NoError(t, syscall.Fstat(int(f.Fd()), &st))
		return st.Nlink == 0
	})
	assert.Equal(t, int64(len(oldBody)), st.Size, "fstat: the open version's size")
	// Drop the kernel's pages of the open inode: what it reads now comes
	// from rsfs, which must answer the open version, not the Source's new
	// bytes.
	require.NoError(t, unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED))
	again := make([]byte, len(oldBody)+10)
	n, err := f.ReadAt(again, 0)
	require.ErrorIs(t, err, io.EOF)
	assert.Equal(t, oldBody, again[:n], "the open version, whole")
	require.NoError(t, f.Close())
	wait.For(t, "the kernel to forget the old version", func() bool {
		tf.fs.versions.mu.Lock()
		defer tf.fs.versions.mu.Unlock()
		for _, v := range tf.fs.versions.m {
			if v.kept {
				return false
			}
		}
		return true
	})
}

// A file opened and not yet read when its new version is applied still
// reads the version it was opened at: rsfs kept that version (the change's
// Effect.Old) for the inode. Here the Source has not yet replaced the bytes
// its new listing describes, so the old version, and only it, can be read
// whole.
func TestFileOpenedBeforeAChangeReadsItsVersion(t *testing.T) {
	tf := newTestFS(t)
	dir := mountTestFS(t, tf, true)
	path := filepath.Join(dir, "top.txt")
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()

	next := []byte("the listing's next version\n")
	tf.fs.Notify(tf.cat.Upsert(&catalog.Resource{URI: topURI, Length: int64(len(next)), Lastmod: aMtime.Add(time.Hour),
		Hashes: []resourcesync.Hash{{Alg: "sha-256", Value: cachetest.SHA256Hex(next)}}}))
	wait.For(t, "the new version's size by name", func() bool {
		st, err := os.Stat(path)
		return err == nil && st.Size() == int64(len(next))
	})
	got, err := io.ReadAll(f)
	require.NoError(t, err, "the descriptor reads the version it was opened at")
	assert.Equal(t, topBody, got)
	_, err = os.ReadFile(path)
	assert.ErrorIs(t, err, syscall.EIO, "the new version's bytes are not served yet")
}
