package e2e

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// With --no-open the kernel opens files without asking rsfs (it answers
// the first OPEN with ENOSYS): every file still reads as published, small
// and multi-block alike, and a second pass is served by the kernel's page
// cache, with no OPEN and no request.
func TestNoOpenReadsEveryFileWithoutOpens(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 40, MinSize: 100, MaxSize: 3 << 20})
	addr := freeAddr(t)
	m := mount(t, src.URL(), "--no-open", "--poll-interval", "0", "--metrics-addr", addr)
	files := walkFiles(t, m.dir)
	require.Len(t, files, 40)
	readAll := func(pass string) {
		for uri, path := range files {
			want, ok := src.Body(uri)
			require.True(t, ok, uri)
			got, err := os.ReadFile(path)
			require.NoError(t, err, "%s pass: %s", pass, path)
			require.True(t, bytes.Equal(want, got), "%s pass: %s: %d bytes, want the %d published", pass, path, len(got), len(want))
		}
	}
	readAll("first")
	src.ResetCounters()
	readAll("second")
	assert.Zero(t, src.Counters().ContentGets(), "requests on the second pass")

	metrics, _ := scrape(t, addr)
	opens := metrics[`rsfs_fuse_operation_duration_seconds_count{op="open"}`]
	assert.LessOrEqual(t, opens, 1.0, "OPENs rsfs answered: the kernel asks once, is told ENOSYS, and stops")
}

// A file the Source changes after it was read shows its new version once
// nobody has read it for a while (fs/noopen.go: 2 s; 30 s at most), the
// kernel's pages of the old one dropped.
func TestNoOpenChangeShows(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 2, MinSize: 2 << 20, MaxSize: 2 << 20})
	m := mount(t, src.URL(), append(pollFlags, "--no-open")...)
	files := walkFiles(t, m.dir)
	uri := src.Resources()[0].URI
	old, _ := src.Body(uri)
	got, err := os.ReadFile(files[uri])
	require.NoError(t, err)
	require.True(t, bytes.Equal(old, got), "the first version")

	require.NoError(t, src.Update(uri, newBody))
	start := time.Now()
	// 20 s: several times what it takes (the poll, staleIdle, the reaper),
	// and less than readIdle, so a stale handle kept until idle fails.
	waitFor(t, 20*time.Second, "the new version", func() bool {
		got, err := os.ReadFile(files[uri])
		return err == nil && bytes.Equal(got, newBody)
	})
	t.Logf("the new version showed after %s", time.Since(start))
}

// Integrity does not depend on OPEN: the fault cases that publish a hash
// or a length the bytes disagree with, and the ones that break the
// transfer, give the same answers with --no-open.
func TestFaultMatrixNoOpen(t *testing.T) {
	for _, fc := range faultCases() {
		if !strings.HasPrefix(fc.name, "hash mismatch") && !strings.HasPrefix(fc.name, "length mismatch") &&
			!strings.HasPrefix(fc.name, "truncated") && fc.name != "reset mid-body, with ETag" &&
			!strings.HasPrefix(fc.name, "16 parallel readers") {
			continue
		}
		fc.flags = append(fc.flags, "--no-open")
		t.Run(fc.name, func(t *testing.T) { runFaultCase(t, fc) })
	}
}
