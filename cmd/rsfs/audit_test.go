package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/audit"
	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/source"
	"rsfs/statedir"
	"rsfs/tests/sourcetest"
)

// runAuditCmd runs `rsfs audit args...` in process and returns its
// output and exit status.
func runAuditCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	root := rootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(append([]string{"audit"}, args...))
	code, msg := exitCode(root.ExecuteContext(context.Background()))
	if msg != nil {
		fmt.Fprintln(&errb, "rsfs:", oneLine(msg))
	}
	return out.String(), errb.String(), code
}

// snapshotOf saves the Source at url as a mount would remember it under
// cacheDir.
func snapshotOf(t *testing.T, url, cacheDir string) {
	t.Helper()
	src, err := source.Discover(context.Background(), url, source.Options{Client: fetch.New(fetch.Options{})})
	require.NoError(t, err)
	cat := catalog.New(catalog.Options{Origin: src.Origin})
	_, err = src.Load(context.Background(), cat, nil)
	require.NoError(t, err)
	stateDir, err := (&mountFlags{cacheDir: cacheDir}).stateDir(url)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(stateDir, 0o700))
	require.NoError(t, cat.SaveSnapshot(statedir.SnapshotPath(stateDir), nil))
}

func TestAuditSnapshot(t *testing.T) {
	src, err := sourcetest.Start(sourcetest.Config{Resources: 50})
	require.NoError(t, err)
	defer src.Close()
	cacheDir := t.TempDir()

	_, stderr, code := runAuditCmd(t, src.URL(), "--cache-dir", cacheDir)
	assert.Equal(t, auditError, code)
	assert.Contains(t, stderr, "rsfs: no snapshot of "+src.URL())

	snapshotOf(t, src.URL(), cacheDir)
	out, _, code := runAuditCmd(t, src.URL(), "--cache-dir", cacheDir, "--bytes", "3")
	assert.Equal(t, auditClean, code)
	assert.Contains(t, out, ": 50 files\nDrift:    none\nBytes:    3 files read, 0 wrong\n")

	res := src.Resources()
	require.NoError(t, src.Update(res[1].URI, []byte("new version\n")))
	require.NoError(t, src.Delete(res[2].URI))
	out, _, code = runAuditCmd(t, src.URL(), "--cache-dir", cacheDir)
	assert.Equal(t, auditDrift, code)
	assert.Contains(t, out, "Drift:    0 created, 1 deleted, 1 updated\n  deleted  data/d000/r000002.txt\n  updated  data/d000/r000001.txt\n")

	out, _, code = runAuditCmd(t, src.URL(), "--cache-dir", cacheDir, "--json")
	assert.Equal(t, auditDrift, code)
	var rep audit.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, []string{}, rep.Created)
	assert.Equal(t, []string{"data/d000/r000001.txt"}, rep.Updated)
	assert.Equal(t, []string{"data/d000/r000002.txt"}, rep.Deleted)
	assert.Equal(t, 2, rep.Drift)
	assert.Equal(t, 49, rep.Truth)
	assert.Equal(t, 50, rep.Files)

	_, stderr, code = runAuditCmd(t, src.URL(), "--cache-dir", "none")
	assert.Equal(t, auditError, code)
	assert.Contains(t, stderr, "remembers nothing")
}
