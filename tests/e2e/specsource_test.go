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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/specsource"
)

// specPoll is the poll interval of the spec Source tests.
const specPoll = time.Second

// specDocsPerPoll bounds the document requests of one idle poll, per
// layout: the Source Description and the Capability List (re-read each
// poll), and the Change List (for Index, the index and its open child: the
// closed children end before the position).
var specDocsPerPoll = map[specsource.Layout]int64{
	specsource.Index:      4,
	specsource.Today:      3,
	specsource.NoFrom:     3,
	specsource.Undated:    3,
	specsource.Future:     3,
	specsource.CapRotate:  3,
	specsource.ChangeDump: 3,
}

func TestSpecSourceLayouts(t *testing.T) {
	t.Parallel()
	for _, layout := range []specsource.Layout{specsource.Index, specsource.Today, specsource.NoFrom, specsource.Undated, specsource.Future, specsource.CapRotate, specsource.ChangeDump} {
		t.Run(layout.String(), func(t *testing.T) {
			t.Parallel() // each waits on its own mount's polls
			followSpecSource(t, layout, false)
		})
	}
	// The index named with the non-standard capability "changelistindex".
	t.Run("changelistindex", func(t *testing.T) {
		t.Parallel()
		followSpecSource(t, specsource.Index, true)
	})
}

func followSpecSource(t *testing.T, layout specsource.Layout, nonStandard bool) {
	cfg := specsource.Config{Layout: layout, Files: 12, NonStandardName: nonStandard}
	if layout == specsource.CapRotate || layout == specsource.ChangeDump {
		// One rotation per batch of changes: a Source that rotates its
		// Change List per run does so far less often than rsfs polls.
		// (Several rotations inside one second cannot be told apart by
		// second-precision from and until.)
		cfg.Rotate = 5
	}
	src, err := specsource.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(src.Close)
	mixedChanges(t, src, "before", 0)
	if layout == specsource.Future {
		src.CreateFuture("/data/future.txt", []byte("dated 9999-12-31\n"))
	}
	m := mount(t, src.URL(), "--poll-interval", specPoll.String())
	sameTree(t, m, src, "the changes made before the mount")

	start := time.Now()
	mixedChanges(t, src, "after", 6)
	sameTree(t, m, src, "the changes made after the mount")
	t.Logf("%s: changes visible within %s", layout, time.Since(start).Round(10*time.Millisecond))
	// One more change a second later: the position is then past every
	// rotated Change List but the open one.
	time.Sleep(1100 * time.Millisecond)
	require.NoError(t, src.Update("/data/f000.txt", []byte("a second later\n")))
	sameTree(t, m, src, "a change a second later")

	// Idle polls: only the Change List (and an index's open child) is asked
	// for, and answered 304. The tree can match before the follower has
	// read every changed document once (the index after its child, say,
	// on a loaded machine): idle starts once a whole poll has sent no
	// document bytes.
	settle(t, m, src)
	n0, b0, polls := idlePolls(t, m, src, 5)
	t.Logf("%s: %d document requests, %d bytes in %d polls", layout, n0, b0, polls)
	assert.LessOrEqual(t, n0, specDocsPerPoll[layout]*polls, "document requests while idle")
	assert.Zero(t, b0, "idle polls are answered 304")
}

// mixedChanges creates two resources, updates two and deletes one. The
// k-th call touches different resources than earlier ones.
func mixedChanges(t *testing.T, src *specsource.Source, tag string, k int) {
	t.Helper()
	require.NoError(t, src.Create(fmt.Sprintf("/data/%s-1.txt", tag), []byte("created "+tag+" the mount\n")))
	require.NoError(t, src.Update(fmt.Sprintf("/data/f%03d.txt", k+1), bytes.Repeat([]byte("updated "+tag+"\n"), 50)))
	require.NoError(t, src.Delete(fmt.Sprintf("/data/f%03d.txt", k+2)))
	require.NoError(t, src.Create(fmt.Sprintf("/new/%s/2.txt", tag), []byte("in a new directory\n")))
	require.NoError(t, src.Update(fmt.Sprintf("/data/f%03d.txt", k+3), []byte("short\n")))
}

// sameTree waits for the mount to equal the Source's current state:
// paths, bytes, sizes and mtimes. It fails only after two polls since the
// call (converges).
func sameTree(t *testing.T, m *mounted, src *specsource.Source, what string) {
	t.Helper()
	converges(t, m, what, func() string { return treeDiff(m.dir, src.State()) })
}

// treeDiff compares a mounted tree with the Source's state.
func treeDiff(dir string, want map[string]specsource.File) string {
	var out []string
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel := strings.TrimPrefix(p, dir)
		seen[rel] = true
		w, ok := want[rel]
		if !ok {
			out = append(out, "extra "+rel)
			return nil
		}
		st, err := os.Stat(p)
		if err != nil {
			out = append(out, fmt.Sprintf("stat %s: %v", rel, err))
			return nil
		}
		got, err := os.ReadFile(p)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("read %s: %v", rel, err))
		case !bytes.Equal(got, w.Body):
			out = append(out, fmt.Sprintf("bytes of %s: %q, want %q", rel, trim(got), trim(w.Body)))
		case st.Size() != int64(len(w.Body)):
			out = append(out, fmt.Sprintf("size of %s: %d, want %d", rel, st.Size(), len(w.Body)))
		case st.ModTime().Unix() != w.Lastmod.Unix():
			out = append(out, fmt.Sprintf("mtime of %s: %s, want %s", rel, st.ModTime().UTC(), w.Lastmod))
		}
		return nil
	})
	if err != nil {
		out = append(out, "walk: "+err.Error())
	}
	for p := range want {
		if !seen[p] {
			out = append(out, "missing "+p)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func trim(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

// A read that finds a file changed since it was listed makes the mount
// poll at once: with a 60 s poll interval the new version shows within
// seconds.
func TestReadOfChangedFilePollsEarly(t *testing.T) {
	t.Parallel()
	src, err := specsource.Start(specsource.Config{Layout: specsource.Index, Files: 4})
	require.NoError(t, err)
	t.Cleanup(src.Close)
	m := mount(t, src.URL(), "--poll-interval", "60s")
	p := filepath.Join(m.dir, "data", "f001.txt")
	newBody := []byte("a new version of another length\n")
	require.NoError(t, src.Update("/data/f001.txt", newBody))
	start := time.Now()
	_, err = os.ReadFile(p) // the listed length no longer matches: EIO, and a poll
	require.Error(t, err)
	becomes(t, m, "the new version after the early poll", func() bool {
		got, err := os.ReadFile(p)
		return err == nil && bytes.Equal(got, newBody)
	})
	t.Logf("new version readable %s after the failed read", time.Since(start).Round(10*time.Millisecond))
	st, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, int64(len(newBody)), st.Size())
}

// 100,000 changes at one instant are applied once, and the polls after
// them stay cheap.
func TestHundredThousandChangesAtOneInstant(t *testing.T) {
	t.Parallel()
	src, err := specsource.Start(specsource.Config{Layout: specsource.Undated, Files: 4})
	require.NoError(t, err)
	t.Cleanup(src.Close)
	m := mount(t, src.URL(), "--poll-interval", specPoll.String())
	const n = 100_000
	start := time.Now()
	src.CreateBurst(n)
	dir := filepath.Join(m.dir, "burst")
	becomes(t, m, "100,000 new files", func() bool {
		names, err := os.ReadDir(dir)
		return err == nil && len(names) == n
	})
	t.Logf("100,000 creations visible after %s", time.Since(start).Round(10*time.Millisecond))
	for _, i := range []int{0, 4242, n - 1} {
		p := fmt.Sprintf("/burst/b%06d.txt", i)
		got, err := os.ReadFile(filepath.Join(m.dir, p))
		require.NoError(t, err)
		assert.Equal(t, p+"\n", string(got))
	}
	// The Change List now holds 100,000 entries: each poll that finds it
	// changed reads and parses all of it (several seconds on a loaded
	// 2-core machine).
	require.NoError(t, src.Update("/data/f001.txt", []byte("after the burst\n")))
	start = time.Now()
	becomes(t, m, "a change after the burst", func() bool {
		got, err := os.ReadFile(filepath.Join(m.dir, "data", "f001.txt"))
		return err == nil && string(got) == "after the burst\n"
	})
	t.Logf("a change after the burst visible after %s", time.Since(start).Round(10*time.Millisecond))
	// A poll that read the 100,000 entries again would cost far more
	// than an idle poll's documents.
	settle(t, m, src)
	reqs, _, polls := idlePolls(t, m, src, 3)
	assert.LessOrEqual(t, reqs, specDocsPerPoll[specsource.Undated]*polls, "document requests of %d idle polls after the burst", polls)
}

// settle waits until a whole poll of the mount passes in which the Source
// sends no document bytes (only 304s); it fails after 10 polls that each
// read some.
func settle(t *testing.T, m *mounted, src *specsource.Source) {
	t.Helper()
	for range 10 {
		_, before := src.DocRequests()
		pollsSince(t, m, time.Now(), 1)
		if _, after := src.DocRequests(); after == before {
			return
		}
	}
	t.Fatal("the follower kept reading changed documents for 10 polls after the last change")
}

// idlePolls waits for n whole polls and answers the document requests and
// bytes the Source served meanwhile, and how many polls may have sent
// them: those begun in the window, and one that straddles its start.
func idlePolls(t *testing.T, m *mounted, src *specsource.Source, n int) (reqs, bytes, polls int64) {
	t.Helper()
	c0 := pollCount(t, m)
	n0, b0 := src.DocRequests()
	pollsSince(t, m, time.Now(), n)
	n1, b1 := src.DocRequests()
	return n1 - n0, b1 - b0, pollCount(t, m) - c0 + 1
}
