package slogdedup

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestDedupDropsRepeatsWithinTheWindow(t *testing.T) {
	var buf bytes.Buffer
	h := New(slog.NewTextHandler(&buf, nil))
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
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	assert.Len(t, lines, 5)
	assert.Contains(t, lines[0], "uri=a")
	assert.Contains(t, lines[1], "uri=b")
	assert.Contains(t, lines[2], "uri=a repeated=2")
	assert.Contains(t, lines[3], "set=x")
	assert.Contains(t, lines[4], "set=y")
}
