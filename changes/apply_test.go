package changes

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/resourcesync"
)

// countingRetrier is failHold's memory in a test: it gives a change up
// once it has failed giveUpAt times (never, at 0).
type countingRetrier struct {
	giveUpAt int
	failures map[string]int
	forgot   []string
}

func (r *countingRetrier) giveUp(c *change, _ uint16, _ error) ([]catalog.Effect, bool) {
	r.failures[c.key]++
	return nil, r.giveUpAt > 0 && r.failures[c.key] >= r.giveUpAt
}

func (r *countingRetrier) appliedOnce(c *change) { r.forgot = append(r.forgot, c.key) }

// applyBatch is three created changes, at 01:00, 02:00 and 03:00 on
// 2024-01-02, of a.txt, b.txt and c.txt; b.txt publishes no length and its
// HEAD failed, so it cannot be applied (resourceOf fails).
func applyBatch(t *testing.T) ([]step, *Position) {
	t.Helper()
	day := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	var changes []change
	for i, name := range []string{"a.txt", "b.txt", "c.txt"} {
		e := &resourcesync.Entry{Loc: "http://s.example/" + name,
			MD: resourcesync.MD{Change: resourcesync.ChangeCreated, Length: 3}}
		if name == "b.txt" {
			e.MD.Length = resourcesync.NoLength
		}
		changes = append(changes, change{at: day.Add(time.Duration(i+1) * time.Hour), key: baseKey(e), entry: e, doc: "cl.xml"})
	}
	plan := planApply(changes, nil)
	lengths := map[int]learned{1: {n: -1, err: errors.New("HEAD: 503")}}
	steps := changeSteps(plan, lengths, 1, false)
	require.Error(t, steps[1].err, "b.txt cannot be resolved")
	return steps, &Position{Time: day}
}

// Each failure policy with each position policy, over a batch whose
// middle change fails: what the catalog holds, where the position stands,
// what is marked ahead, and what apply says.
func TestApplyPolicies(t *testing.T) {
	rfc := func(h int) string { return time.Date(2024, 1, 2, h, 0, 0, 0, time.UTC).Format(time.RFC3339) }
	for _, tc := range []struct {
		name     string
		fail     failPolicy
		move     posPolicy
		giveUpAt int
		files    []string // in the catalog after
		position string   // "" for none
		ahead    []string
		err      bool // apply returned an error
		failed   bool // a change was held or skipped
		warned   bool // a warning names b.txt
	}{
		{name: "hold/advance", fail: failHold, move: posAdvance,
			files: []string{"a.txt", "c.txt"}, position: rfc(1), failed: true},
		{name: "hold/advance, given up", fail: failHold, move: posAdvance, giveUpAt: 1,
			files: []string{"a.txt", "c.txt"}, position: rfc(3)},
		{name: "hold/ahead", fail: failHold, move: posAhead,
			files: []string{"a.txt", "c.txt"}, position: rfc(0), ahead: []string{"a.txt", "c.txt"}, failed: true},
		{name: "hold/none", fail: failHold, move: posNone,
			files: []string{"a.txt", "c.txt"}, failed: true},
		{name: "skip/advance", fail: failSkip, move: posAdvance,
			files: []string{"a.txt", "c.txt"}, position: rfc(3), failed: true, warned: true},
		{name: "skip/ahead", fail: failSkip, move: posAhead,
			files: []string{"a.txt", "c.txt"}, position: rfc(0), ahead: []string{"a.txt", "c.txt"}, failed: true, warned: true},
		{name: "skip/none", fail: failSkip, move: posNone,
			files: []string{"a.txt", "c.txt"}, failed: true, warned: true},
		{name: "abort/advance", fail: failAbort, move: posAdvance,
			files: []string{"a.txt"}, position: rfc(1), err: true},
		{name: "abort/ahead", fail: failAbort, move: posAhead,
			files: []string{"a.txt"}, position: rfc(0), ahead: []string{"a.txt"}, err: true},
		{name: "abort/none", fail: failAbort, move: posNone,
			files: []string{"a.txt"}, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps, pos := applyBatch(t)
			cat := catalog.New(catalog.Options{Origin: "http://s.example"})
			var logs bytes.Buffer
			a := &applier{cat: cat, set: 1, fail: tc.fail, move: tc.move, horizon: time.Now().Add(time.Hour),
				retry: &countingRetrier{giveUpAt: tc.giveUpAt, failures: map[string]int{}},
				log:   slog.New(slog.NewTextHandler(&logs, nil)), what: "a change", next: "left out"}
			if tc.move != posNone {
				a.pos = pos
			}
			done, err := a.apply(steps)

			var files []string
			for _, u := range cat.URIs() {
				files = append(files, u[len("http://s.example/"):])
			}
			slices.Sort(files)
			assert.Equal(t, tc.files, files)
			if tc.move != posNone {
				assert.Equal(t, tc.position, pos.Time.UTC().Format(time.RFC3339))
			}
			var ahead []string
			for u := range pos.Ahead {
				ahead = append(ahead, u[len("http://s.example/"):])
			}
			slices.Sort(ahead)
			assert.Equal(t, tc.ahead, ahead)
			if tc.err {
				assert.ErrorContains(t, err, "http://s.example/b.txt: its length is not published and could not be learned: HEAD: 503")
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, tc.failed, done.failed)
			assert.Equal(t, tc.warned, bytes.Contains(logs.Bytes(), []byte("a change not applied; left out")), logs.String())
			if tc.warned {
				assert.Contains(t, logs.String(), "uri=http://s.example/b.txt")
			}
		})
	}
}

// A dry run (no catalog, as Plan does) moves the position as applying
// would, and applies nothing.
func TestApplyDryRun(t *testing.T) {
	steps, pos := applyBatch(t)
	a := &applier{fail: failHold, move: posAdvance, pos: pos, horizon: time.Now()}
	done, err := a.apply(steps)
	require.NoError(t, err)
	assert.False(t, done.failed, "nothing is applied, so nothing fails")
	assert.Equal(t, "2024-01-02T03:00:00Z", pos.Time.UTC().Format(time.RFC3339))
}

// A change the position has passed (a poll moved it while a push learned
// its lengths) is not applied again, nor one covered by a later change
// applied ahead; applied regardless (a Resource List's differences), both
// are.
func TestApplyPassesOverWhatThePositionPassed(t *testing.T) {
	for _, regardless := range []bool{false, true} {
		steps, pos := applyBatch(t)
		steps = []step{steps[0], steps[2]}                     // a.txt at 01:00, c.txt at 03:00
		pos.Time = time.Date(2024, 1, 2, 2, 0, 0, 0, time.UTC) // past a.txt
		pos.markAhead(&change{at: pos.Time.Add(2 * time.Hour), key: "updated c", entry: steps[1].c.entry})
		cat := catalog.New(catalog.Options{Origin: "http://s.example"})
		a := &applier{cat: cat, set: 1, fail: failHold, move: posAhead, pos: pos, horizon: time.Now(), regardless: regardless}
		done, err := a.apply(steps)
		require.NoError(t, err)
		if regardless {
			assert.Equal(t, 2, done.changes)
			assert.Equal(t, 2, cat.Len())
		} else {
			assert.Equal(t, 0, done.changes, "a.txt passed, c.txt covered by the later one applied ahead")
			assert.Equal(t, 0, cat.Len())
		}
	}
}

// A Resource List difference that cannot be applied (it publishes no
// length and its HEAD fails) is skipped, never in silence: a warning in
// the log (TestApplyPolicies) and among its set's warnings in the status,
// naming the list, the resource and the error, until a poll reads every
// document.
func TestSkippedChangeShownInStatus(t *testing.T) {
	src, f, cat := startTwoSets(t)
	src.mu.Lock()
	src.listed[2] = `<url><loc>http://127.0.0.1:1/elsewhere.txt</loc><lastmod>2024-01-03T00:00:00Z</lastmod></url>`
	src.mu.Unlock()
	before := cat.Len()
	framework(t, f, f.s.Sets()[1], fmt.Sprintf(`<url><loc>%s/rl2.xml</loc><rs:md change="updated" capability="resourcelist"/></url>`, src.base))
	assert.Equal(t, before, cat.Len(), "nothing applied")
	warnings := f.Status().Sets[1].Warnings
	require.Len(t, warnings, 1, "%v", warnings)
	assert.Equal(t, src.base+"/rl2.xml", warnings[0].Doc)
	assert.Contains(t, warnings[0].Msg, "a change to http://127.0.0.1:1/elsewhere.txt not applied: its length is not published and could not be learned")
	assert.True(t, strings.HasSuffix(warnings[0].Msg, "; the polls will carry it"), warnings[0].Msg)

	pollOnce(t, f)
	assert.Empty(t, f.Status().Sets[1].Warnings, "a poll that read and applied everything clears it")
}
