package slogdedup

import (
	"log/slog"
	"strings"
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

func TestAFoldWithNothingAfterItIsCountedWhenTheWindowEnds(t *testing.T) {
	buf := &logbuf.Buffer{}
	h := New(slog.NewTextHandler(buf, nil))
	h.seen.window = 100 * time.Millisecond
	log := slog.New(h)
	log.Warn("copy failed; trying the next", "copy", "c")
	log.Warn("copy failed; trying the next", "copy", "c")
	log.Warn("copy failed; trying the next", "copy", "c")
	require.Len(t, lines(buf), 1, "the repeats are folded")
	require.Eventually(t, func() bool { return len(lines(buf)) == 2 }, 10*time.Second, 10*time.Millisecond)
	got := lines(buf)
	assert.Contains(t, got[1], `msg="copy failed; trying the next" copy=c repeated=2`)

	// The window is over: the same warning is written again, and counted
	// once (not again by a late flush).
	log.Warn("copy failed; trying the next", "copy", "c")
	time.Sleep(300 * time.Millisecond)
	got = lines(buf)
	require.Len(t, got, 3)
	assert.NotContains(t, got[2], "repeated")
}

func TestAWarningAfterTheWindowCarriesTheCountAlone(t *testing.T) {
	buf := &logbuf.Buffer{}
	h := New(slog.NewTextHandler(buf, nil))
	h.seen.window = 100 * time.Millisecond
	log := slog.New(h)
	log.Error("read failed", "uri", "a")
	log.Error("read failed", "uri", "a")
	time.Sleep(150 * time.Millisecond) // the flush writes repeated=1
	log.Error("read failed", "uri", "a")
	time.Sleep(150 * time.Millisecond)
	assert.Equal(t, 1, strings.Count(buf.String(), "repeated="), "the count is written once: %s", buf.String())
	assert.Len(t, lines(buf), 3)
}
