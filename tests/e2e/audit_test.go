package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// auditReport is `rsfs audit --json`.
type auditReport struct {
	Source       string   `json:"source"`
	Mount        string   `json:"mount"`
	Snapshot     string   `json:"snapshot"`
	Files        int      `json:"files"`
	Truth        int      `json:"truth"`
	Created      []string `json:"created"`
	Updated      []string `json:"updated"`
	Deleted      []string `json:"deleted"`
	BytesChecked int      `json:"bytes_checked"`
	WrongBytes   []struct {
		Path, URI, Reason string
	} `json:"wrong_bytes"`
	Drift int `json:"drift"`
}

// audit runs `rsfs audit ARGS` and returns its output and exit status.
func audit(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	stdout, stderr, err := run(t, 2*time.Minute, rsfsBin, append([]string{"audit"}, args...)...)
	code = exitCode(t, err)
	t.Logf("rsfs audit %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	return stdout, stderr, code
}

func auditJSON(t *testing.T, args ...string) (auditReport, int) {
	t.Helper()
	out, _, code := audit(t, append(args, "--json")...)
	var rep auditReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep), "audit --json: %s", out)
	return rep, code
}

// pathOf is where a sourcetest resource is mounted.
func pathOf(src *sourcetest.Source, uri string) string { return strings.TrimPrefix(uri, src.URL()) }

// waitForSnapshot waits for the snapshot a fresh mount saves at once.
func waitForSnapshot(t *testing.T, cacheDir string) {
	t.Helper()
	waitFor(t, hangBound, "the snapshot", func() bool {
		found, _ := filepath.Glob(filepath.Join(cacheDir, "*", "catalog.snap"))
		return len(found) == 1
	})
}

func TestAuditConvergedMountHasNoDrift(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 300, PerList: 100})
	base := t.TempDir()
	dir, cacheDir := filepath.Join(base, "mnt"), filepath.Join(base, "cache")
	require.NoError(t, os.Mkdir(dir, 0o755))
	m := mountAt(t, src.URL(), dir, cacheDir)

	out, _, code := audit(t, m.dir, "--bytes", "20")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "Mount:    "+m.dir+": 300 files\n")
	assert.Contains(t, out, "Drift:    none\n")
	assert.Contains(t, out, "Bytes:    20 files read, 0 wrong\n")

	rep, code := auditJSON(t, m.dir)
	assert.Equal(t, 0, code)
	assert.Equal(t, 300, rep.Files)
	assert.Equal(t, 300, rep.Truth)
	assert.Zero(t, rep.Drift)
	assert.Equal(t, src.URL(), rep.Source, "the Source the mount's status names")

	waitForSnapshot(t, cacheDir)
	out, _, code = audit(t, src.URL(), "--cache-dir", cacheDir, "--bytes", "5")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "Drift:    none\n")
	assert.Contains(t, out, "Bytes:    5 files read, 0 wrong\n")
}

func TestAuditStaleSnapshotAndStaleMount(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 300, PerList: 100})
	base := t.TempDir()
	dir, cacheDir := filepath.Join(base, "mnt"), filepath.Join(base, "cache")
	require.NoError(t, os.Mkdir(dir, 0o755))
	m := mountAt(t, src.URL(), dir, cacheDir, "--poll-interval", "0")
	m.unmount(t)
	waitFor(t, hangBound, "the unmount", func() bool { return !isMountPoint(dir) })

	res := src.Resources()
	require.NoError(t, src.Update(res[10].URI, []byte("changed while unmounted\n")))
	require.NoError(t, src.Delete(res[11].URI))
	require.NoError(t, src.Delete(res[250].URI))
	created, err := src.Create("/new/file.txt", []byte("new\n"))
	require.NoError(t, err)

	out, _, code := audit(t, src.URL(), "--cache-dir", cacheDir)
	assert.Equal(t, 1, code, "drift")
	assert.Contains(t, out, "Snapshot: ")
	assert.Contains(t, out, ": 300 files\n")
	assert.Contains(t, out, "Drift:    1 created, 2 deleted, 1 updated\n")
	assert.Contains(t, out, "  created  new/file.txt\n")
	assert.Contains(t, out, "  updated  "+pathOf(src, res[10].URI)+"\n")

	rep, code := auditJSON(t, src.URL(), "--cache-dir", cacheDir)
	assert.Equal(t, 1, code)
	assert.Equal(t, []string{pathOf(src, created)}, rep.Created)
	assert.Equal(t, []string{pathOf(src, res[10].URI)}, rep.Updated)
	assert.Equal(t, []string{pathOf(src, res[11].URI), pathOf(src, res[250].URI)}, rep.Deleted)
	assert.Equal(t, 4, rep.Drift)
	assert.Equal(t, 300, rep.Files)
	assert.Equal(t, 299, rep.Truth)

	// A remount catches up from the snapshot: no drift. It does not follow
	// (--poll-interval 0), so what changes next is drift, by path.
	m = mountAt(t, src.URL(), dir, cacheDir, "--poll-interval", "0")
	out, _, code = audit(t, m.dir)
	assert.Equal(t, 0, code, "the remount caught up from the snapshot")
	assert.Contains(t, out, "Drift:    none\n")

	require.NoError(t, src.Update(res[20].URI, []byte("changed while mounted\n")))
	require.NoError(t, src.Delete(res[21].URI))
	rep, code = auditJSON(t, m.dir)
	assert.Equal(t, 1, code)
	assert.Empty(t, rep.Created)
	assert.Equal(t, []string{pathOf(src, res[20].URI)}, rep.Updated)
	assert.Equal(t, []string{pathOf(src, res[21].URI)}, rep.Deleted)
	assert.Equal(t, 2, rep.Drift)
	assert.Equal(t, 299, rep.Files)
	assert.Equal(t, 298, rep.Truth)
}

func TestAuditWrongBytes(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 20, Hashes: []string{"md5", "sha-256"}})
	m := mount(t, src.URL())
	bad := src.Resources()[3]
	body, ok := src.Body(bad.URI)
	require.True(t, ok)
	wrong := []byte(strings.Repeat("x", len(body)))
	src.Corrupt(bad.URI, wrong)

	rep, code := auditJSON(t, m.dir, "--bytes", "1000")
	assert.Equal(t, 1, code)
	assert.Equal(t, 20, rep.BytesChecked, "every file, when asked for more than there are")
	require.Len(t, rep.WrongBytes, 1)
	assert.Equal(t, pathOf(src, bad.URI), rep.WrongBytes[0].Path)
	assert.Contains(t, rep.WrongBytes[0].Reason, "could not be read", "the mount refuses bytes that fail its check")
	assert.Equal(t, 1, rep.Drift)

	cacheDir := filepath.Join(filepath.Dir(m.dir), "cache")
	waitForSnapshot(t, cacheDir)
	out, _, code := audit(t, src.URL(), "--cache-dir", cacheDir, "--bytes", "1000")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "Drift:    none\n")
	assert.Contains(t, out, "Bytes:    20 files read, 1 wrong\n")
	assert.Contains(t, out, "  wrong bytes "+pathOf(src, bad.URI)+": md5 is ")
}

func TestAuditErrors(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 5})
	_, stderr, code := audit(t, src.URL(), "--cache-dir", t.TempDir())
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "rsfs: no snapshot of "+src.URL())

	_, stderr, code = audit(t, t.TempDir())
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "is not the root of an rsfs mount")
}
