package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"rsfs/tests/randsource"
)

// The convergence invariant (issue 22): once the Source stops changing and
// a poll interval (with its jitter) has passed, the mounted tree is the
// Source's truth: the same paths, sizes, mtimes (the resource's lastmod)
// and bytes, and no directory but those the files need.
//
// Each seed starts a random Source (tests/randsource), does a few
// operations, mounts it (the tree must then be the Source's truth at
// once: the mount caught up before it was ready), does a random sequence of operations with random
// pauses (so polls fall at random points), stops, and waits a bounded time
// for the tree to match.
//
//	go test ./tests/e2e -run TestConverge                         # seeds 1-3
//	RSFS_CONVERGE_SEEDS=50 go test ./tests/e2e -run TestConverge  # seeds 1-50
//	RSFS_CONVERGE_SEED=17 go test ./tests/e2e -run TestConverge -v  # seed 17 only
//
// (or -converge.seeds=50, -converge.seed=17). A seed fixes the operations
// and the pauses; the wall clock still decides which second each change
// falls in and where polls land, so a failing seed may need a few runs:
// TestConvergeScenarios pins the sequences that once failed.
//
// Each seed also picks which of real publishers' ways the Source writes
// in (convergeQuirks): undated deletions, newest-first entries, entries
// without change, Change Lists with from alone, a Resource Dump answering
// 404, a Resource Dump instead of the Resource List, a package per
// resource.
//
// RSFS_CONVERGE_SHARED_BOUNDARY=1 lets changes fall on the instant a
// Change List closes and the next opens (randsource.Config.SharedBoundary),
// a Source the standard's inclusive from and until make ambiguous.

var (
	convergeSeedsFlag = flag.Int("converge.seeds", 0, "run the convergence test for seeds 1..N (RSFS_CONVERGE_SEEDS)")
	convergeSeedFlag  = flag.Int64("converge.seed", 0, "run the convergence test for this one seed (RSFS_CONVERGE_SEED)")
)

const (
	convergePoll = time.Second
)

func convergeSeeds(t *testing.T) []int64 {
	one := *convergeSeedFlag
	if v := os.Getenv("RSFS_CONVERGE_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("RSFS_CONVERGE_SEED=%q: %v", v, err)
		}
		one = n
	}
	if one != 0 {
		return []int64{one}
	}
	n := *convergeSeedsFlag
	if v := os.Getenv("RSFS_CONVERGE_SEEDS"); v != "" {
		k, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("RSFS_CONVERGE_SEEDS=%q: %v", v, err)
		}
		n = k
	}
	if n <= 0 {
		n = 3
	}
	var seeds []int64
	for i := 1; i <= n; i++ {
		seeds = append(seeds, int64(i))
	}
	return seeds
}

func TestConverge(t *testing.T) {
	t.Parallel()
	needFUSE(t)
	seeds := convergeSeeds(t)
	t.Logf("convergence seeds: %v (poll interval %s; each converges by the second poll after the Source stops)", seeds, convergePoll)
	// The seeds run in parallel (each its own Source and mount, waiting on
	// its own polls); the failing ones are said once they have all ended.
	var mu sync.Mutex
	var failed []int64
	t.Cleanup(func() {
		if len(failed) > 0 {
			slices.Sort(failed)
			t.Logf("failing seeds: %v (rerun one with RSFS_CONVERGE_SEED=N)", failed)
		}
	})
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			t.Cleanup(func() {
				t.Logf("seed %d: %s in %s", seed, map[bool]string{false: "converged", true: "FAILED"}[t.Failed()], time.Since(start).Round(10*time.Millisecond))
				if t.Failed() {
					mu.Lock()
					failed = append(failed, seed)
					mu.Unlock()
				}
			})
			convergeSeed(t, seed)
		})
	}
}

func convergeSeed(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed ^ 0x5eed))
	cfg := randsource.Config{
		Seed:           seed,
		Files:          3 + rng.Intn(10),
		Dating:         randsource.Dating(rng.Intn(3)),
		Index:          rng.Intn(2) == 0,
		SharedBoundary: os.Getenv("RSFS_CONVERGE_SHARED_BOUNDARY") != "",
	}
	convergeQuirks(&cfg, seed)
	src, err := randsource.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	t.Logf("seed %d: %d files, dating %s, index %v, shared boundaries %v, undated deletions %v, newest first %v, entries without change %v, only from %v, resource dump 404 %v, dump only %v, per-item dumps %v",
		seed, cfg.Files, cfg.Dating, cfg.Index, cfg.SharedBoundary, cfg.UndatedDeletions, cfg.NewestFirst, cfg.NoChange, cfg.OnlyFrom,
		cfg.Dumps404, cfg.DumpOnly, cfg.PerItemDumps)

	before := rng.Intn(5)
	for i := 0; i < before; i++ {
		src.RandomOp()
	}
	atMount := src.Truth()
	m := mount(t, src.URL(), "--poll-interval", convergePoll.String())
	src.Note("mounted")
	// A fresh mount catches up through the Change Lists before it reports
	// ready (DESIGN §10): the moment rsfs mount returns, the tree is the
	// Source's truth, with no poll since.
	if diff := convergeDiff(m.dir, atMount); diff != "" {
		t.Errorf("seed %d: when rsfs mount returned the tree was not the Source's truth (%d operations before it):\n%s\n\noperations:\n%s\n\ndocuments now:\n%s",
			seed, before, diff, strings.Join(src.Log(), "\n"), src.Documents())
	}

	ops := 12 + rng.Intn(16)
	for i := 0; i < ops; i++ {
		time.Sleep(convergePause(rng))
		// Keep datetimes from running more than 2 s into the future.
		if ahead := src.Ahead(); ahead > 2*time.Second {
			time.Sleep(ahead - 2*time.Second)
		}
		src.RandomOp()
		if rng.Intn(3) == 0 {
			// Read the tree meanwhile: cached pages and blocks of old
			// versions must not outlive them, and a read that meets a
			// changed file makes the mount poll early.
			convergeReadAll(m.dir)
		}
	}
	src.Note("stopped")
	convergeWait(t, m, src, fmt.Sprintf("seed %d", seed), fmt.Sprintf("RSFS_CONVERGE_SEED=%d go test ./tests/e2e -run 'TestConverge$' -v", seed))
}

// convergeQuirks picks, per seed, which of real publishers' ways the
// Source writes its Change Lists in (issue 32), each in about a third of
// the seeds, from a generator of its own so that the other choices a seed
// fixes stay as they were.
func convergeQuirks(cfg *randsource.Config, seed int64) {
	rng := rand.New(rand.NewSource(seed ^ 0x9e1f))
	cfg.UndatedDeletions = rng.Intn(3) == 0
	cfg.NewestFirst = rng.Intn(3) == 0
	cfg.NoChange = rng.Intn(3) == 0
	cfg.OnlyFrom = rng.Intn(3) == 0
	if !convergeDumpQuirks {
		return
	}
	switch rng.Intn(6) {
	case 0:
		cfg.Dumps404 = true
	case 1:
		cfg.DumpOnly = true
	case 2:
		cfg.PerItemDumps = true
	case 3:
		cfg.DumpOnly, cfg.PerItemDumps = true, true
	}
}

// convergeDumpQuirks lets the seeds pick the Resource Dump quirks: a
// Resource Dump that answers 404, a Resource Dump instead of the Resource
// List, a package per resource (issue 32 rows 1 and 6).
const convergeDumpQuirks = true

// convergeWait waits, from now (the Source has stopped), for the tree to
// be the Source's truth, and fails with the difference, the operations and
// the documents if it is not once the mount has ended two polls since
// (converges): one begun after the last operation, and one more.
func convergeWait(t *testing.T, m *mounted, src *randsource.Source, what, rerun string) {
	t.Helper()
	truth := src.Truth()
	var diff string
	t.Cleanup(func() {
		if t.Failed() && diff != "" {
			t.Logf("%s: operations:\n%s\n\ndocuments now:\n%s\nrerun: %s", what, strings.Join(src.Log(), "\n"), src.Documents(), rerun)
		}
	})
	took := converges(t, m, what, func() string {
		diff = convergeDiff(m.dir, truth)
		return diff
	})
	t.Logf("%s: converged %s after the last operation", what, took.Round(10*time.Millisecond))
	if testing.Verbose() {
		t.Logf("operations:\n%s", strings.Join(src.Log(), "\n"))
	}
}

// convergeReadAll reads every file in the tree, ignoring errors (a file
// changed since it was listed fails with EIO until the change is applied).
func convergeReadAll(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			_, _ = os.ReadFile(p)
		}
		return nil
	})
}

// convergePause is a random pause between operations: mostly short, so
// several fall between two polls, sometimes longer than the interval.
func convergePause(rng *rand.Rand) time.Duration {
	switch r := rng.Intn(10); {
	case r < 3:
		return 0
	case r < 8:
		return time.Duration(rng.Intn(400)) * time.Millisecond
	default:
		return time.Duration(400+rng.Intn(1200)) * time.Millisecond
	}
}

// convergeDiff compares the mounted tree with the truth: files missing,
// extra, of the wrong size, mtime or bytes, and directories no file needs
// (or missing).
func convergeDiff(dir string, truth map[string]randsource.File) string {
	var out []string
	wantDirs := map[string]bool{}
	for p := range truth {
		for d := filepath.Dir(p); d != "/"; d = filepath.Dir(d) {
			wantDirs[d] = true
		}
	}
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			out = append(out, fmt.Sprintf("walk %s: %v", p, err))
			return nil
		}
		rel := strings.TrimPrefix(p, dir)
		if rel == "" {
			return nil
		}
		seen[rel] = true
		if d.IsDir() {
			if !wantDirs[rel] {
				out = append(out, "extra directory "+rel)
			}
			return nil
		}
		w, ok := truth[rel]
		if !ok {
			out = append(out, "extra "+rel)
			return nil
		}
		st, err := os.Stat(p)
		if err != nil {
			out = append(out, fmt.Sprintf("stat %s: %v", rel, err))
			return nil
		}
		if st.Size() != int64(len(w.Body)) {
			out = append(out, fmt.Sprintf("size of %s: %d, want %d", rel, st.Size(), len(w.Body)))
		}
		if st.ModTime().Unix() != w.Lastmod.Unix() {
			out = append(out, fmt.Sprintf("mtime of %s: %s, want %s", rel, st.ModTime().UTC().Format(time.RFC3339), w.Lastmod.UTC().Format(time.RFC3339)))
		}
		got, err := os.ReadFile(p)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("read %s: %v", rel, err))
		case !bytes.Equal(got, w.Body):
			out = append(out, fmt.Sprintf("bytes of %s: %d bytes %q, want %d bytes %q", rel, len(got), convergeHead(got), len(w.Body), convergeHead(w.Body)))
		}
		return nil
	})
	if err != nil {
		out = append(out, "walk: "+err.Error())
	}
	for p := range truth {
		if !seen[p] {
			out = append(out, fmt.Sprintf("missing %s (%d bytes, lastmod %s)", p, len(truth[p].Body), truth[p].Lastmod.UTC().Format(time.RFC3339)))
		}
	}
	for d := range wantDirs {
		if !seen[d] {
			out = append(out, "missing directory "+d)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// convergeHead is the first line of a body, at most 20 bytes of it.
func convergeHead(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	if len(b) > 20 {
		b = b[:20]
	}
	return b
}

// Hand-picked sequences that exposed bugs the random seeds hit only when
// the polls fell just so; each pins its timing with waits for the mount.
func TestConvergeScenarios(t *testing.T) {
	t.Parallel()
	needFUSE(t)
	// A Change List opened and closed between two polls, while the
	// Capability List names the open Change List itself: the mount never
	// sees it named, reads the one it followed once more (closed at T1) and
	// the new one (from T2); the Resource List republished at T2 is the
	// only document with the change in between. Seen as seed 21 (a
	// deletion lost, the file left in the tree).
	t.Run("list-between-polls", func(t *testing.T) {
		t.Parallel()
		src, err := randsource.Start(randsource.Config{Seed: 1, Files: 4, Dating: randsource.Dating11})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(src.Close)
		m := mount(t, src.URL(), "--poll-interval", convergePoll.String())
		src.Note("mounted")
		mustOp(t)(src.Create("/r/seen.txt", []byte("read from Change List 1\n")))
		becomes(t, m, "the first change", func() bool {
			_, err := os.Stat(m.path("r/seen.txt"))
			return err == nil
		})
		victim := ""
		for p := range src.Truth() {
			if p != "/r/seen.txt" {
				victim = p
				break
			}
		}
		src.Rotate()
		mustOp(t)(src.Delete(victim))
		src.Rotate()
		mustOp(t)(src.Create("/r/after.txt", []byte("in Change List 3\n")))
		src.Note("stopped")
		convergeWait(t, m, src, "list-between-polls", "go test ./tests/e2e -run 'TestConvergeScenarios/list-between-polls' -v")
	})
	// A reader retrying a file whose new version is listed only in a
	// Change List the Capability List has just started to name: each
	// failed read (EIO, the listed length no longer served) asks for an
	// early poll; the mount must still read the Capability List and
	// follow the new list. Seen as seed 33 (EIO and the old size and mtime
	// 3 s after the change).
	t.Run("reader-across-rotation", func(t *testing.T) {
		t.Parallel()
		src, err := randsource.Start(randsource.Config{Seed: 1, Files: 3, Dating: randsource.Dating10})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(src.Close)
		m := mount(t, src.URL(), "--poll-interval", convergePoll.String())
		src.Note("mounted")
		mustOp(t)(src.Create("/r/a/f5.txt", bytes.Repeat([]byte("first version\n"), 300)))
		becomes(t, m, "the first version", func() bool {
			_, err := os.ReadFile(m.path("r/a/f5.txt"))
			return err == nil
		})
		src.Rotate()
		mustOp(t)(src.Update("/r/a/f5.txt", []byte("second version, shorter\n")))
		src.Note("stopped")
		convergeWait(t, m, src, "reader-across-rotation", "go test ./tests/e2e -run 'TestConvergeScenarios/reader-across-rotation' -v")
	})
	// A Source with no Resource List, only a Resource Dump (and a Change
	// Dump): a file updated (in Change Dump package 1), then deleted, and
	// the Resource Dump republished without it, the Change List that
	// listed the deletion no longer named, all before the mount. The
	// Resource Dump's at is the set's list time, and the Change Dump's
	// copy, older than the Resource Dump that leaves it out, is not
	// mounted. Seen as seed 4 with the dump quirks (the file left in the
	// tree for good).
	t.Run("dump-only-republished", func(t *testing.T) {
		t.Parallel()
		src, err := randsource.Start(randsource.Config{Seed: 1, Files: 3, Dating: randsource.Dating11, DumpOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(src.Close)
		victim := ""
		for p := range src.Truth() {
			victim = p
			break
		}
		mustOp(t)(src.Update(victim, []byte("in Change Dump package 1\n")))
		src.Dump()
		mustOp(t)(src.Delete(victim))
		src.Rotate()
		m := mount(t, src.URL(), "--poll-interval", convergePoll.String())
		src.Note("mounted")
		if diff := convergeDiff(m.dir, src.Truth()); diff != "" {
			t.Errorf("when rsfs mount returned the tree was not the Source's truth:\n%s\n\noperations:\n%s\n\ndocuments now:\n%s",
				diff, strings.Join(src.Log(), "\n"), src.Documents())
		}
		src.Note("stopped")
		convergeWait(t, m, src, "dump-only-republished", "go test ./tests/e2e -run 'TestConvergeScenarios/dump-only-republished' -v")
	})
	t.Run("removed-lists", func(t *testing.T) { t.Parallel(); removedLists(t, false) })
	t.Run("removed-lists-behind-dump", func(t *testing.T) { t.Parallel(); removedLists(t, true) })
}

// removedLists publishes, on a Source whose Capability List names a
// Change List Index, a deletion in a Change List that is closed and
// removed (with the one before it) before the mount polls again, the
// Resource List republished to cover it: the index then starts after the
// mount's position. With dump, a Change Dump (from the start, its one
// package ending before the deletion) is named too: its from must not
// hide that the Change Lists no longer reach back.
func removedLists(t *testing.T, dump bool) {
	src, err := randsource.Start(randsource.Config{Seed: 1, Files: 4, Dating: randsource.Dating11, Index: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	mustOp(t)(src.Create("/r/seen.txt", []byte("read from Change List 1\n")))
	if dump {
		src.Dump()
	}
	m := mount(t, src.URL(), "--poll-interval", convergePoll.String())
	src.Note("mounted")
	mustOp(t)(src.Create("/r/seen2.txt", []byte("read from Change List 1 too\n")))
	becomes(t, m, "the first change", func() bool {
		_, err := os.Stat(m.path("r/seen2.txt"))
		return err == nil
	})
	victim := ""
	for p := range src.Truth() {
		if !strings.HasPrefix(p, "/r/seen") {
			victim = p
			break
		}
	}
	src.Rotate()
	mustOp(t)(src.Delete(victim))
	src.Rotate()
	src.RemoveList()
	src.RemoveList()
	mustOp(t)(src.Create("/r/after.txt", []byte("in Change List 3\n")))
	src.Note("stopped")
	name := map[bool]string{false: "removed-lists", true: "removed-lists-behind-dump"}[dump]
	convergeWait(t, m, src, name, "go test ./tests/e2e -run 'TestConvergeScenarios/"+name+"' -v")
}

func mustOp(t *testing.T) func(string, error) {
	return func(_ string, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}
