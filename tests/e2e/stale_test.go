package e2e

// Issue 22, "silent staleness": ordinary Source behaviours after which the
// mount once stayed stale for good. Each is a layout of the spec-written
// Source (tests/specsource) followed through a real mount.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/specsource"
)

func startSpec(t *testing.T, cfg specsource.Config) *specsource.Source {
	t.Helper()
	src, err := specsource.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(src.Close)
	return src
}

// followSpec mounts src polling every specPoll, after a mixed batch of
// changes, and checks the tree.
func followSpec(t *testing.T, src *specsource.Source) *mounted {
	t.Helper()
	mixedChanges(t, src, "before", 0)
	m := mount(t, src.URL(), "--poll-interval", specPoll.String())
	sameTree(t, m, src, "the changes made before the mount")
	return m
}

// getStatus answers a document's status code as the Source serves it now.
func getStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// 1. A ResourceSync 1.0 Change List (resync-simulator's 1.0 mode): from
// and until in rs:md, entries dated only by lastmod. Its changes must be
// followed.
func TestSilentStaleV10ChangeList(t *testing.T) {
	t.Parallel()
	src := startSpec(t, specsource.Config{Layout: specsource.V10, Files: 12})
	m := followSpec(t, src)
	mixedChanges(t, src, "after", 6)
	sameTree(t, m, src, "changes in a 1.0 Change List (from, until, lastmod only)")
	time.Sleep(1100 * time.Millisecond)
	require.NoError(t, src.Update("/data/f000.txt", []byte("a second later\n")))
	sameTree(t, m, src, "a 1.0 change a second later")
}

// 2. py-resourcesync's resourcelist run deletes the Change List (404) and
// the Capability List names a new one: changes in it must reach the tree.
func TestSilentStaleDeletedChangeList(t *testing.T) {
	t.Parallel()
	src := startSpec(t, specsource.Config{Layout: specsource.Rebase, Files: 12})
	m := followSpec(t, src)
	old := src.PathOf(0)
	mixedChanges(t, src, "after", 6)
	sameTree(t, m, src, "the changes in the first Change List")

	// A change the follower may not have seen, then the new Resource List:
	// the old Change List is gone.
	src.Publish(func() {
		require.NoError(t, src.Update("/data/f010.txt", []byte("just before the new Resource List\n")))
		src.Rebase()
	})
	rebased := time.Now()
	base := strings.TrimSuffix(src.URL(), "/")
	require.Equal(t, http.StatusNotFound, getStatus(t, base+old), "the old Change List")
	// A poll meets the deleted Change List (the Capability List names none
	// until a change is published).
	waitPollSince(t, m, rebased)
	require.NoError(t, src.Update("/data/f011.txt", []byte("in the new Change List\n")))
	require.NoError(t, src.Create("/data/after-rebase.txt", []byte("created after the new Resource List\n")))
	require.NoError(t, src.Delete("/data/f009.txt"))
	sameTree(t, m, src, "changes in the Change List named after the old one was deleted (and the change only the new Resource List has)")
	t.Logf("old Change List %s asked %d times; new one %s %d times", old, src.Requests(old), src.PathOf(0), src.Requests(src.PathOf(0)))
}

// staleStatus is the part of `rsfs status --json` these tests read.
type staleStatus struct {
	Sets []struct {
		Set           string    `json:"set"`
		Position      time.Time `json:"position"`
		NewestChange  time.Time `json:"newest_change"`
		BehindSeconds float64   `json:"behind_seconds"`
		Degraded      []struct {
			Doc   string    `json:"doc"`
			Error string    `json:"error"`
			Since time.Time `json:"since"`
		} `json:"degraded"`
	} `json:"sets"`
	Polls struct {
		Count  int64      `json:"count"`
		Last   *time.Time `json:"last"` // when the last poll that ended started
		Result string     `json:"last_result"`
	} `json:"polls"`
}

// waitPollSince waits until a poll that started at since or later has
// ended: what the Source served from since on has been seen.
func waitPollSince(t *testing.T, m *mounted, since time.Time) {
	t.Helper()
	pollsSince(t, m, since, 1)
}

func readStaleStatus(t *testing.T, dir string) (staleStatus, string) {
	t.Helper()
	out, stderr, err := run(t, 10*time.Second, rsfsBin, "status", "--json", dir)
	require.NoError(t, err, stderr)
	var st staleStatus
	require.NoError(t, json.Unmarshal([]byte(out), &st), out)
	return st, out
}

// 2b. One of two Change Lists the Capability List names answers an error:
// the other one's changes are applied, and the status names the failing
// document.
func TestSilentStaleFailingChangeList(t *testing.T) {
	t.Parallel()
	for _, code := range []int{http.StatusInternalServerError, http.StatusNotFound} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			t.Parallel()
			src := startSpec(t, specsource.Config{Layout: specsource.TwoLists, Files: 12})
			m := followSpec(t, src)
			src.FailDoc("/changelist-1.xml", code)
			failed := time.Now()
			waitPollSince(t, m, failed) // a poll that meets the failure
			mixedChanges(t, src, "after", 6)
			sameTree(t, m, src, "changes in the Change List that answers")

			// Every poll since the failure met it: the status says so now.
			failing := strings.TrimSuffix(src.URL(), "/") + "/changelist-1.xml"
			st, js := readStaleStatus(t, m.dir)
			var found bool
			for _, set := range st.Sets {
				for _, d := range set.Degraded {
					found = found || d.Doc == failing && d.Error != "" && !d.Since.IsZero()
				}
			}
			assert.True(t, found, "status --json names %s as degraded:\n%s", failing, js)
			out, stderr, err := run(t, 10*time.Second, rsfsBin, "status", m.dir)
			require.NoError(t, err, stderr)
			assert.Contains(t, out, "    degraded: "+failing+" failing since ", "rsfs status")
		})
	}
}

// 3. The Source starts naming a Change List Index that names the Change
// List it named until then, in the publication that adds entries to the
// list: the list is met twice in one poll. The last state of each resource
// must be in the tree.
func TestSilentStaleChangeListReadTwice(t *testing.T) {
	t.Parallel()
	src := startSpec(t, specsource.Config{Layout: specsource.IndexSwitch, Files: 12})
	m := followSpec(t, src)
	time.Sleep(1100 * time.Millisecond)
	// Publish just after a poll read the Change List, so that the next
	// poll meets the new Capability List and the list's new entries
	// together (not the list before the Capability List that names the
	// index).
	n := src.Requests("/changelist.xml")
	waitFor(t, hangBound, "a poll", func() bool { return src.Requests("/changelist.xml") > n })
	src.Publish(func() {
		require.NoError(t, src.Update("/data/f007.txt", []byte("first of two updates\n")))
		require.NoError(t, src.Update("/data/f007.txt", []byte("second of two updates, the last\n")))
		require.NoError(t, src.Delete("/data/f008.txt"))
		require.NoError(t, src.Create("/data/f008.txt", []byte("created again after its deletion\n")))
		require.NoError(t, src.Create("/data/created-then-deleted.txt", []byte("gone at once\n")))
		require.NoError(t, src.Delete("/data/created-then-deleted.txt"))
		require.NoError(t, src.Update("/data/f009.txt", bytes.Repeat([]byte("longer\n"), 30)))
		src.NameIndex()
	})
	sameTree(t, m, src, "the publication that named the index")
	time.Sleep(1100 * time.Millisecond)
	require.NoError(t, src.Update("/data/f007.txt", []byte("after the switch\n")))
	require.NoError(t, src.Delete("/data/f008.txt"))
	sameTree(t, m, src, "a change after the switch")
}

// 4. A fresh mount of a Source whose Resource List is older than its
// changes: the tree is exact when `rsfs mount` returns, following or not.
func TestSilentStaleFreshMount(t *testing.T) {
	t.Parallel()
	for _, interval := range []string{"10m", "0"} {
		t.Run("poll-interval="+interval, func(t *testing.T) {
			src := startSpec(t, specsource.Config{Layout: specsource.OldList, Files: 12})
			mixedChanges(t, src, "before", 0)
			m := mount(t, src.URL(), "--poll-interval", interval)
			// No wait: the tree is checked the moment the mount is ready.
			assert.Empty(t, treeDiff(m.dir, src.State()), "the tree when rsfs mount returned")
			_, err := os.Stat(m.path("data/f002.txt"))
			assert.True(t, errors.Is(err, fs.ErrNotExist), "stat of the deleted file: %v", err)
			got, err := os.ReadFile(m.path("data/f001.txt"))
			assert.NoError(t, err)
			assert.Equal(t, strings.Repeat("updated before\n", 50), string(got), "the updated file")
			got, err = os.ReadFile(m.path("new/before/2.txt"))
			assert.NoError(t, err)
			assert.Equal(t, "in a new directory\n", string(got), "the created file")
		})
	}
}

// 5. py-resourcesync's incremental Change List overflows: the new list's
// from is the Resource List's time, before the follower's position, and
// its entries carry no datetime (a deletion no time at all). Its changes
// must reach the tree.
func TestSilentStalePyOverflow(t *testing.T) {
	t.Parallel()
	src := startSpec(t, specsource.Config{Layout: specsource.PyOverflow, Files: 12, Rotate: 4})
	m := mount(t, src.URL(), "--poll-interval", specPoll.String())
	sameTree(t, m, src, "the Resource List")

	require.NoError(t, src.Update("/data/f001.txt", []byte("run 1\n")))
	require.Equal(t, 1, src.PyRun())
	sameTree(t, m, src, "run 1 (the first Change List)")
	time.Sleep(1100 * time.Millisecond)
	require.NoError(t, src.Update("/data/f002.txt", []byte("run 2\n")))
	require.NoError(t, src.Create("/data/run2.txt", []byte("created at run 2\n")))
	require.Equal(t, 2, src.PyRun())
	sameTree(t, m, src, "run 2 (the first Change List)")
	time.Sleep(1100 * time.Millisecond)

	// Run 3 fills the first list (4 entries) and begins the second.
	require.NoError(t, src.Update("/data/f003.txt", []byte("run 3\n")))
	require.NoError(t, src.Delete("/data/f004.txt"))
	require.Equal(t, 2, src.PyRun())
	sameTree(t, m, src, "run 3 (a deletion in a second Change List from before the position)")
	time.Sleep(1100 * time.Millisecond)
	require.NoError(t, src.Update("/data/f005.txt", bytes.Repeat([]byte("run 4\n"), 20)))
	require.NoError(t, src.Delete("/data/run2.txt"))
	require.NoError(t, src.Create("/data/run4.txt", []byte("created at run 4\n")))
	require.Equal(t, 3, src.PyRun())
	sameTree(t, m, src, "run 4 (the second Change List)")
	assert.Positive(t, src.Requests(src.PathOf(1)), "the second Change List was read")
}

// 6. A rotating Change List Index: the closed child that holds the
// position answers 304, the new child starts after the position. No
// Resource List is read for it (it has no validators, so each read is
// whole), and the tree stays exact.
func TestSilentStaleRotatingIndexReadsNoResourceList(t *testing.T) {
	t.Parallel()
	src := startSpec(t, specsource.Config{Layout: specsource.RotateIndex, Files: 12, RotateEvery: 2 * time.Second})
	m := followSpec(t, src)
	rl := src.Requests("/resourcelist.xml")
	start := time.Now()
	for i := 0; i < 3; i++ {
		// A change, then quiet for over a rotation: the child holding the
		// position closes, and polls meet it unchanged (304).
		began := time.Now()
		require.NoError(t, src.Update("/data/f010.txt", []byte(strings.Repeat("x", i+1)+"\n")))
		sameTree(t, m, src, "a change in the open child")
		time.Sleep(time.Until(began.Add(3300 * time.Millisecond)))
	}
	require.NoError(t, src.Delete("/data/f011.txt"))
	sameTree(t, m, src, "the last change")
	t.Logf("followed a rotating index for %s: %d index requests", time.Since(start).Round(100*time.Millisecond), src.Requests("/changelist-index.xml"))
	assert.Equal(t, int64(0), src.Requests("/resourcelist.xml")-rl, "Resource List requests while following a rotating index")
}

// A change dated 9999-12-31 (by datetime, or in 1.0 by lastmod): the
// status shows no negative lag, and later changes are still followed.
func TestSilentStaleFutureChange(t *testing.T) {
	t.Parallel()
	for _, layout := range []specsource.Layout{specsource.Future, specsource.V10} {
		t.Run(layout.String(), func(t *testing.T) {
			t.Parallel()
			src := startSpec(t, specsource.Config{Layout: layout, Files: 12})
			m := followSpec(t, src)
			src.CreateFuture("/data/future.txt", []byte("dated 9999-12-31\n"))
			// In 1.0 the file's lastmod is the far date too: its mtime may
			// be the latest a Go time.Duration from 1970 reaches (2262),
			// but it must not wrap into the past.
			farMtime := func(want map[string]specsource.File) map[string]specsource.File {
				if f, ok := want["/data/future.txt"]; ok && f.Lastmod.Year() == 9999 {
					if st, err := os.Stat(m.path("data/future.txt")); err == nil && st.ModTime().Year() >= 2262 {
						f.Lastmod = st.ModTime()
						want["/data/future.txt"] = f
					}
				}
				return want
			}
			converges(t, m, "the change dated 9999-12-31 in the tree", func() string {
				return treeDiff(m.dir, farMtime(src.State()))
			})
			waitPollSince(t, m, time.Now()) // a poll after it
			st, js := readStaleStatus(t, m.dir)
			require.NotEmpty(t, st.Sets, js)
			for _, set := range st.Sets {
				assert.GreaterOrEqual(t, set.BehindSeconds, 0.0, "behind_seconds of %s:\n%s", set.Set, js)
				assert.Less(t, set.BehindSeconds, 3600.0, "behind_seconds of %s, every change applied:\n%s", set.Set, js)
			}
			time.Sleep(1100 * time.Millisecond)
			require.NoError(t, src.Update("/data/f001.txt", []byte("after the far-future change\n")))
			require.NoError(t, src.Create("/data/later.txt", []byte("created after it\n")))
			converges(t, m, "changes after the one dated 9999-12-31", func() string {
				return treeDiff(m.dir, farMtime(src.State()))
			})
			st, js = readStaleStatus(t, m.dir)
			for _, set := range st.Sets {
				assert.GreaterOrEqual(t, set.BehindSeconds, 0.0, "behind_seconds of %s:\n%s", set.Set, js)
				assert.Less(t, set.BehindSeconds, 3600.0, "behind_seconds of %s, every change applied:\n%s", set.Set, js)
			}
		})
	}
}
