package slogdedup

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/logbuf"
)

func lines(b *logbuf.Buffer) []string {
	s := strings.TrimSpace(b.String())
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestRepeatedErrorsAreFoldedAndCounted(t *testing.T) {
	buf := &logbuf.Buffer{}
	h := New(slog.NewTextHandler(buf, nil))
	log := slog.New(h)
	base := time.Now()
	at := func(d time.Duration, msg string, args ...any) {
		r := slog.NewRecord(base.Add(d), slog.LevelError, msg, 0)
		r.Add(args...)
		_ = h.Handle(t.Context(), r)
	}
	at(0, "read failed", "uri", "a")
	at(time.Second, "read failed", "uri", "a")
	at(2*time.Second, "read failed", "uri", "b")
	at(3*time.Second, "read failed", "uri", "a")
	at(dedupWindow+time.Second, "read failed", "uri", "a")
	log.With("set", "x").Error("poll")
	log.With("set", "y").Error("poll")
	got := lines(buf)
	require.Len(t, got, 5)
	assert.Contains(t, got[0], "uri=a")
	assert.NotContains(t, got[0], "repeated")
	assert.Contains(t, got[1], "uri=b")
	assert.Contains(t, got[2], "uri=a repeated=2")
	assert.Contains(t, got[3], "set=x")
	assert.Contains(t, got[4], "set=y")
}

func TestSeparateInfoEventsAreNeverMerged(t *testing.T) {
	buf := &logbuf.Buffer{}
	log := slog.New(New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	// Two batches of changes, alike, a moment apart: two events.
	log.Info("changes applied", "set", "s", "changes", 1, "effects", 1, "pushed", true)
	log.Info("changes applied", "set", "s", "changes", 1, "effects", 1, "pushed", true)
	log.Debug("fetch: retrying", "url", "u")
	log.Debug("fetch: retrying", "url", "u")
	got := lines(buf)
	require.Len(t, got, 4, buf.String())
	assert.Equal(t, 2, strings.Count(buf.String(), `msg="changes applied"`))
	assert.NotContains(t, buf.String(), "repeated")
}

// fakeTimers stand for the flush timers: a test fires them when it says
// the window has ended, so no test waits on the clock.
type fakeTimers struct {
	mu    sync.Mutex
	all   []*fakeTimer
	after []time.Duration // what each was set for
}

type fakeTimer struct {
	f              func()
	stopped, fired bool
}

func (t *fakeTimer) Stop() bool {
	was := !t.stopped && !t.fired
	t.stopped = true
	return was
}

func (ft *fakeTimers) afterFunc(d time.Duration, f func()) stopper {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	t := &fakeTimer{f: f}
	ft.all = append(ft.all, t)
	ft.after = append(ft.after, d)
	return t
}

// fire runs every timer not run yet and not stopped, or stopped too if
// late (a flush already waiting for the lock when Stop came), and returns
// how many it ran.
func (ft *fakeTimers) fire(late bool) int {
	ft.mu.Lock()
	var due []*fakeTimer
	for _, t := range ft.all {
		if !t.fired && (late || !t.stopped) {
			t.fired = true
			due = append(due, t)
		}
	}
	ft.mu.Unlock()
	for _, t := range due {
		t.f()
	}
	return len(due)
}

// foldingHandler is a Handler whose flush timers are ft's, and log, which
// writes a warning or error at a time after base.
func foldingHandler(t *testing.T) (*logbuf.Buffer, *fakeTimers, func(level slog.Level, d time.Duration, msg string, args ...any)) {
	buf := &logbuf.Buffer{}
	h := New(slog.NewTextHandler(buf, nil))
	ft := &fakeTimers{}
	h.seen.afterFunc = ft.afterFunc
	base := time.Now()
	return buf, ft, func(level slog.Level, d time.Duration, msg string, args ...any) {
		r := slog.NewRecord(base.Add(d), level, msg, 0)
		r.Add(args...)
		require.NoError(t, h.Handle(t.Context(), r))
	}
}

func TestAFoldWithNothingAfterItIsCountedWhenTheWindowEnds(t *testing.T) {
	buf, timers, log := foldingHandler(t)
	const msg = "copy failed; trying the next"
	log(slog.LevelWarn, 0, msg, "copy", "c")
	log(slog.LevelWarn, time.Second, msg, "copy", "c")
	log(slog.LevelWarn, 2*time.Second, msg, "copy", "c")
	require.Len(t, lines(buf), 1, "the repeats are folded")
	require.Equal(t, []time.Duration{dedupWindow - time.Second}, timers.after, "one flush, when the window ends")
	require.Equal(t, 1, timers.fire(false))
	got := lines(buf)
	require.Len(t, got, 2)
	assert.Contains(t, got[1], `msg="copy failed; trying the next" copy=c repeated=2`)

	// The window is over: the same warning is written again, and counted
	// once (not again by a late flush, even one that was waiting).
	log(slog.LevelWarn, dedupWindow+time.Second, msg, "copy", "c")
	timers.fire(true)
	got = lines(buf)
	require.Len(t, got, 3)
	assert.NotContains(t, got[2], "repeated")
}

// A line like a folded one, after the window, carries the count alone,
// whichever comes first: the flush, or the line (then a flush already
// waiting writes nothing).
func TestAWarningAfterTheWindowCarriesTheCountAlone(t *testing.T) {
	t.Run("the flush first", func(t *testing.T) {
		buf, timers, log := foldingHandler(t)
		log(slog.LevelError, 0, "read failed", "uri", "a")
		log(slog.LevelError, time.Second, "read failed", "uri", "a")
		require.Equal(t, 1, timers.fire(false)) // the flush writes repeated=1
		log(slog.LevelError, dedupWindow+time.Second, "read failed", "uri", "a")
		timers.fire(true)
		assert.Equal(t, 1, strings.Count(buf.String(), "repeated="), "the count is written once: %s", buf.String())
		assert.Len(t, lines(buf), 3)
	})
	t.Run("the line first", func(t *testing.T) {
		buf, timers, log := foldingHandler(t)
		log(slog.LevelError, 0, "read failed", "uri", "a")
		log(slog.LevelError, time.Second, "read failed", "uri", "a")
		log(slog.LevelError, dedupWindow+time.Second, "read failed", "uri", "a")
		require.Equal(t, 1, timers.fire(true), "the flush was waiting when the line stopped it")
		assert.Equal(t, 1, strings.Count(buf.String(), "repeated=1"), "the count is written once: %s", buf.String())
		got := lines(buf)
		require.Len(t, got, 2)
		assert.Contains(t, got[1], "repeated=1")
	})
}

// The flush runs on the clock (time.AfterFunc) when no test stands in.
func TestTheFlushRunsOnTheClock(t *testing.T) {
	buf := &logbuf.Buffer{}
	h := New(slog.NewTextHandler(buf, nil))
	h.seen.window = 50 * time.Millisecond
	log := slog.New(h)
	log.Warn("copy failed", "copy", "c")
	log.Warn("copy failed", "copy", "c")
	require.Eventually(t, func() bool { return len(lines(buf)) == 2 }, 10*time.Second, 10*time.Millisecond)
	assert.Contains(t, lines(buf)[1], "repeated=1")
}
