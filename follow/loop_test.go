package follow

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/logbuf"
)

// recorder is a PollFunc that records each poll: when, and for which sets.
type recorder struct {
	mu    sync.Mutex
	at    []time.Time
	sets  [][]uint16
	err   error
	block chan struct{} // if set, a poll waits for it
}

func (r *recorder) poll(_ context.Context, sets []uint16) error {
	if r.block != nil {
		<-r.block
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at = append(r.at, time.Now())
	r.sets = append(r.sets, sets)
	return r.err
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.at)
}

// waitFor waits until cond holds, at most 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "timed out waiting for %s", what)
		time.Sleep(5 * time.Millisecond)
	}
}

// run starts l.Run and stops it when the test ends.
func run(t *testing.T, l *Loop) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func TestJitterIsTenPercentEitherWay(t *testing.T) {
	d := time.Minute
	seen := map[time.Duration]bool{}
	below, above := false, false
	for range 1000 {
		j := jittered(d)
		require.GreaterOrEqual(t, j, 54*time.Second)
		require.LessOrEqual(t, j, 66*time.Second)
		seen[j] = true
		below = below || j < 57*time.Second
		above = above || j > 63*time.Second
	}
	assert.Greater(t, len(seen), 900, "the intervals differ: many mounts of one Source do not poll in step")
	assert.True(t, below && above, "the jitter reaches both ways")
}

// An early poll reads only the sets asked for, and never sooner than
// MinGap after the last poll.
func TestEarlyPollsAskForTheirSetsAndKeepTheMinimumGap(t *testing.T) {
	rec := &recorder{}
	const gap = 300 * time.Millisecond
	l := New(rec.poll, Options{Interval: time.Hour, MinGap: gap})
	run(t, l)
	l.PollSoon(2)
	waitFor(t, "the first early poll", func() bool { return rec.count() == 1 })
	l.PollSoon(3)
	l.PollSoon(3)
	waitFor(t, "the second early poll", func() bool { return rec.count() == 2 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Equal(t, [][]uint16{{2}, {3}}, rec.sets, "only the sets asked for, each once")
	assert.GreaterOrEqual(t, rec.at[1].Sub(rec.at[0]), gap, "the minimum gap between two polls")
	st := l.Polling()
	assert.Equal(t, int64(2), st.Polls)
	assert.False(t, st.NextPoll.IsZero(), "the next timed poll is known")
}

// Timed polls are whole polls, one every Interval (jittered by at most
// 10%): the n-th comes no sooner than n intervals less the jitter after
// Run starts, however late the machine runs it, so a loop that polls back
// to back (or without waiting out the interval) fails.
func TestTimedPollsAreWholeAndEveryInterval(t *testing.T) {
	rec := &recorder{}
	const interval = 50 * time.Millisecond
	l := New(rec.poll, Options{Interval: interval, MinGap: time.Millisecond})
	start := time.Now()
	run(t, l)
	waitFor(t, "four polls", func() bool { return rec.count() >= 4 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i, s := range rec.sets[:4] {
		assert.Nil(t, s, "a timed poll is a whole poll")
		least := time.Duration(i+1) * interval * 9 / 10
		assert.GreaterOrEqual(t, rec.at[i].Sub(start), least, "timed poll %d comes %d intervals, less the jitter, after the start", i+1, i+1)
	}
}

// While changes are held back neither a timed poll nor an early one runs;
// the first timed poll after the hold does, whole. The loop is seen to
// consult the hold for both kinds before the test looks for polls, so the
// test waits for the polls that were skipped, not for time to pass.
func TestHeldPollsAreSkipped(t *testing.T) {
	rec := &recorder{}
	var held atomic.Bool
	var asked atomic.Int32
	held.Store(true)
	l := New(rec.poll, Options{Interval: 10 * time.Millisecond, MinGap: time.Millisecond, Held: func() bool {
		asked.Add(1)
		return held.Load()
	}})
	run(t, l)
	waitFor(t, "three timed polls held back (or one run)", func() bool { return asked.Load() >= 3 || rec.count() > 0 })
	assert.Equal(t, 0, rec.count(), "no timed poll while changes are held back")
	l.PollSoon(2)
	waitFor(t, "the early poll taken up", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.soonSets) == 0
	})
	// Two more calls of Held: the early poll's and a timed one's, or two
	// timed ones after the early poll was held back.
	n := asked.Load()
	waitFor(t, "the early poll held back (or run)", func() bool { return asked.Load() >= n+2 || rec.count() > 0 })
	assert.Equal(t, 0, rec.count(), "no poll, early or timed, while changes are held back")
	assert.Equal(t, int64(0), l.Polling().Polls)
	held.Store(false)
	waitFor(t, "a poll after the hold", func() bool { return rec.count() > 0 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Nil(t, rec.sets[0], "the first poll after the hold is a whole one: it applies what was held back")
}

func TestPollsNeverOverlap(t *testing.T) {
	rec := &recorder{block: make(chan struct{})}
	l := New(rec.poll, Options{})
	first := make(chan error)
	go func() { first <- l.Poll(context.Background()) }()
	waitFor(t, "the first poll to start", func() bool { return l.polling.Load() })
	second := make(chan error, 1)
	go func() { second <- l.Poll(context.Background()) }()
	select {
	case err := <-second:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Error("a poll asked for while one runs must return at once")
	}
	close(rec.block)
	require.NoError(t, <-first)
	assert.Equal(t, 1, rec.count())
	assert.Equal(t, int64(1), l.Polling().Polls)
}

func TestFailedPollsAreCountedAndLoggedWithBackoff(t *testing.T) {
	rec := &recorder{err: errors.New("poll change list: 503")}
	var buf logbuf.Buffer
	l := New(rec.poll, Options{Interval: 5 * time.Millisecond, MinGap: time.Millisecond,
		Log: slog.New(slog.NewTextHandler(&buf, nil))})
	run(t, l)
	waitFor(t, "five failed polls", func() bool { return l.Polling().PollFailures >= 5 })
	st := l.Polling()
	assert.Equal(t, "poll change list: 503", st.LastPollErr)
	assert.False(t, st.LastPoll.IsZero())
	lines := strings.Count(buf.String(), "following changes")
	assert.Less(t, int64(lines), st.PollFailures, "not a line per failure")
	assert.Contains(t, buf.String(), "failed_polls=1")
	assert.Contains(t, buf.String(), "failed_polls=4")
	assert.NotContains(t, buf.String(), "failed_polls=3")
}

func TestRunSavesEverySaveEveryAndAtTheEnd(t *testing.T) {
	var mu sync.Mutex
	var saves []bool
	l := New(func(context.Context, []uint16) error { return nil }, Options{
		SaveEvery: 10 * time.Millisecond,
		Save: func(final bool) {
			mu.Lock()
			saves = append(saves, final)
			mu.Unlock()
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	waitFor(t, "two periodic saves", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(saves) >= 2
	})
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	assert.False(t, saves[0], "a periodic save saves only what changed")
	assert.True(t, saves[len(saves)-1], "Run's last act is a final save")
	assert.Equal(t, int64(0), l.Polling().Polls, "Interval 0 never polls")
}

func TestPollNowWaitsForAWholePollEvenWithPollingOff(t *testing.T) {
	rec := &recorder{block: make(chan struct{})}
	var held atomic.Bool
	l := New(rec.poll, Options{MinGap: 50 * time.Millisecond, Held: held.Load}) // Interval 0: no timed polls
	run(t, l)

	done := make(chan error, 1)
	go func() { done <- l.PollNow(context.Background()) }()
	waitFor(t, "the poll to start", func() bool { return l.Polling().Polls == 1 })
	select {
	case err := <-done:
		t.Fatalf("PollNow returned before its poll ended: %v", err)
	default:
	}
	close(rec.block)
	require.NoError(t, <-done)
	require.Equal(t, 1, rec.count())
	assert.Nil(t, rec.sets[0], "a whole poll")

	// The next one keeps MinGap, and says how it ended.
	first := l.Polling().LastPoll
	rec.mu.Lock()
	rec.err = errors.New("the Change List is gone")
	rec.mu.Unlock()
	require.ErrorIs(t, l.PollNow(context.Background()), rec.err)
	assert.GreaterOrEqual(t, l.Polling().LastPoll.Sub(first), 50*time.Millisecond, "started MinGap after the last")

	held.Store(true)
	require.ErrorIs(t, l.PollNow(context.Background()), ErrHeld)
	assert.Equal(t, 2, rec.count(), "no poll while held")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, l.PollNow(ctx), context.Canceled)
}
