package e2e

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"rsfs/tests/publishers"
	"rsfs/tests/specsource"
)

// pubPoll is the poll interval of the publisher tests.
const pubPoll = time.Second

// pubSameTree waits for the mount to equal want(): paths, bytes, sizes
// and mtimes. It fails only after two polls since the call (converges).
func pubSameTree(t *testing.T, m *mounted, want func() map[string]publishers.File, what string) {
	t.Helper()
	converges(t, m, what, func() string {
		return firstLines(treeDiff(m.dir, asSpecFiles(want())), 30)
	})
}

func asSpecFiles(in map[string]publishers.File) map[string]specsource.File {
	out := make(map[string]specsource.File, len(in))
	for p, f := range in {
		out[p] = specsource.File{Body: f.Body, Lastmod: f.Lastmod}
	}
	return out
}

// pubSameNames waits for the mount to hold exactly want's paths with
// want's mtimes (failing only after two polls since the call), and reads
// the bytes of every step-th file only: for trees too large to read whole
// on every check.
func pubSameNames(t *testing.T, m *mounted, want map[string]publishers.File, step int, what string) {
	t.Helper()
	converges(t, m, what, func() string { return firstLines(namesDiff(m.dir, want), 30) })
	paths := make([]string, 0, len(want))
	for p := range want {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for i := 0; i < len(paths); i += step {
		got, err := os.ReadFile(m.path(paths[i]))
		require.NoError(t, err, "read %s", paths[i])
		require.Equal(t, string(want[paths[i]].Body), string(got), "bytes of %s", paths[i])
	}
}

// namesDiff compares the paths and mtimes under dir with want's.
func namesDiff(dir string, want map[string]publishers.File) string {
	var out []string
	seen := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(p, dir)
		w, ok := want[rel]
		if !ok {
			out = append(out, "extra "+rel)
			return nil
		}
		seen++
		info, err := d.Info()
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("stat %s: %v", rel, err))
		case info.ModTime().Unix() != w.Lastmod.Unix():
			out = append(out, fmt.Sprintf("mtime of %s: %s, want %s", rel, info.ModTime().UTC(), w.Lastmod.UTC()))
		}
		return nil
	})
	if err != nil {
		out = append(out, "walk: "+err.Error())
	}
	if seen != len(want) {
		out = append(out, fmt.Sprintf("%d of %d files", seen, len(want)))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("... and %d more", len(lines)-n))
	}
	return strings.Join(lines, "\n")
}

// Hyrax: a Change List with only from, newest first, no hashes, no .xml in
// any URL. A new work and edited works show within a poll or so.
func TestPublisherHyrax(t *testing.T) {
	t.Parallel()
	h, err := publishers.NewHyrax(12)
	require.NoError(t, err)
	t.Cleanup(h.Close)
	m := mount(t, h.URL()+"/", "--poll-interval", pubPoll.String())
	pubSameTree(t, m, h.State, "the works at the mount")

	h.CreateWork()
	pubSameTree(t, m, h.State, "a new work")
	require.Equal(t, 4, h.UpdateAll(4)) // works 0, 4, 8 and 12 of 13
	pubSameTree(t, m, h.State, "four edited works")
}

// Hyrax with nothing public yet: the Change List's from is 1970-01-01 and it
// has no entries; the first works deposited show.
func TestPublisherHyraxEmpty(t *testing.T) {
	t.Parallel()
	h, err := publishers.NewHyrax(0)
	require.NoError(t, err)
	t.Cleanup(h.Close)
	m := mount(t, h.URL()+"/", "--poll-interval", pubPoll.String())
	pubSameTree(t, m, h.State, "an empty repository")
	h.CreateWork()
	h.CreateWork()
	pubSameTree(t, m, h.State, "the first two works")
}

// Hyrax's Change List of 50,000 entries and no index (24,999 works, as
// many file sets, two collections).
func TestPublisherHyrax50000(t *testing.T) {
	t.Parallel()
	h, err := publishers.NewHyrax(24_999)
	require.NoError(t, err)
	t.Cleanup(h.Close)
	require.Len(t, h.State(), 50_000)
	start := time.Now()
	m := mount(t, h.URL()+"/", "--poll-interval", pubPoll.String())
	pubSameNames(t, m, h.State(), 997, "50,000 objects")
	t.Logf("50,000 objects mounted and listed in %s", time.Since(start).Round(10*time.Millisecond))

	start = time.Now()
	path := "/" + h.CreateWork()
	n := h.UpdateAll(1000)
	pubSameNames(t, m, h.State(), 997, "a new work and edited works")
	t.Logf("a new work and %d edited works shown after %s", n, time.Since(start).Round(10*time.Millisecond))
	got, err := os.ReadFile(m.path(path))
	require.NoError(t, err)
	require.True(t, bytes.Equal(h.State()[path].Body, got), "bytes of the new work %s", path)
}

// DSpace: prefixed sitemap namespace, local times with a literal Z, a
// Resource List dated by from, a new Change List per update run (the
// Capability List names only the newest), undated deletions first. New
// items, replaced bitstreams and a withdrawal show after each run, and
// after a rebase.
func TestPublisherDSpace(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		entry string
		dumps bool
	}{{"sourcedescription.xml", false}, {"capabilitylist.xml", false}, {"sourcedescriptionindex.xml", false}, {"sourcedescription.xml", true}} {
		entry, dumps := c.entry, c.dumps
		name := entry
		if dumps {
			name = "dumps"
		}
		t.Run(name, func(t *testing.T) {
			d, err := publishers.NewDSpace(12, dumps)
			require.NoError(t, err)
			t.Cleanup(d.Close)
			m := mount(t, d.URL()+"/dspace-resourcesync/"+entry, "--poll-interval", pubPoll.String())
			pubSameTree(t, m, d.State, "the items at the mount")

			d.Create()
			d.Replace(3)
			d.Update()
			pubSameTree(t, m, d.State, "the first update run")
			d.Withdraw(5)
			d.Replace(3)
			d.Create()
			d.Update()
			pubSameTree(t, m, d.State, "the second update run")
			d.Rebase()
			pubSameTree(t, m, d.State, "a rebase (every Change List gone, a new one from 1969 holding every event)")
			d.Replace(7)
			d.Create()
			d.Update()
			pubSameTree(t, m, d.State, "an update run after the rebase")
			// Every change document is read (with dumps, the Change Dump
			// named by its package too), so the position reaches the
			// newest change.
			var st status
			becomes(t, m, "the position at the newest change", func() bool {
				st = readStatus(t, m.dir)
				return len(st.Sets) == 1 && !st.Sets[0].Position.IsZero() && st.Sets[0].Position.Equal(st.Sets[0].NewestChange)
			})
		})
	}
}

// POD: xsi:schemaLocation on every root, <rs:md> before <loc>, three
// Capability Lists, Resource List Indexes, and no Change List: an upload
// and a delta dump change only the Resource Lists.
func TestPublisherPOD(t *testing.T) {
	t.Parallel()
	p, err := publishers.NewPOD()
	require.NoError(t, err)
	t.Cleanup(p.Close)
	m := mount(t, p.URL()+"/", "--poll-interval", pubPoll.String())
	pubSameTree(t, m, p.State, "the uploads and dumps at the mount")
	p.Upload(1)
	p.Delta(2)
	pubSameTree(t, m, p.State, "an upload and a delta dump")
}

// The resync-simulator with the resync library before 1.0.6: md5 in
// base64, microsecond times, the same loc once per change, undated
// deletions, a Resource List sorted by URI.
func TestPublisherResync(t *testing.T) {
	t.Parallel()
	r, err := publishers.NewResync(20)
	require.NoError(t, err)
	t.Cleanup(r.Close)
	m := mount(t, r.URL()+"/", "--poll-interval", pubPoll.String())
	pubSameTree(t, m, r.State, "the resources at the mount")
	r.Simulate([]string{"3", "7", "3"}, 2, []string{"11"})
	pubSameTree(t, m, r.State, "updates (one twice), creations and a deletion")
	r.Simulate([]string{"20", "5"}, 1, []string{"3", "0"})
	pubSameTree(t, m, r.State, "a second round")
}

// WEKO3: capability="capability" in the Source Description, no at, a
// Resource Dump of one package per item, each pointing at its own manifest
// with rel="contents". A new deposit and a replaced file show.
func TestPublisherWEKO(t *testing.T) {
	t.Parallel()
	w, err := publishers.NewWEKO(8)
	require.NoError(t, err)
	t.Cleanup(w.Close)
	m := mount(t, w.URL()+"/", "--poll-interval", pubPoll.String())
	pubSameTree(t, m, w.State, "the items and their files at the mount")
	w.Deposit()
	w.ReplaceFile(2)
	pubSameTree(t, m, w.State, "a deposit and a replaced file")
}
