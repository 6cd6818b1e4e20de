// Package slogdedup is a slog.Handler that drops a record identical
// (level, message, attributes; time aside) to one written within a window
// (10 s), and says, on the next one written after the window, how many
// were dropped (repeated=N). The kernel retries a failed page read at once,
// so one failed read(2) reaches rsfs as two reads that fail alike.
package slogdedup

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// dedupWindow is how long a log line identical to one just written is
// dropped. The kernel retries a failed page read at once, so one failed
// read(2) reaches rsfs as two reads that fail alike.
const dedupWindow = 10 * time.Second

// Handler drops a record identical (level, message, attributes, time
// aside) to one handled within dedupWindow; the next one written after the
// window says how many were dropped (repeated=N). Its WithAttrs and
// WithGroup handlers share what it has seen.
type Handler struct {
	next   slog.Handler
	prefix string // the attributes and groups added by WithAttrs and WithGroup
	seen   *dedupSeen
}

type dedupSeen struct {
	mu   sync.Mutex
	last map[string]dedupEntry
}

type dedupEntry struct {
	at      time.Time
	dropped int
}

// New returns a Handler writing to next.
func New(next slog.Handler) *Handler {
	return &Handler{next: next, seen: &dedupSeen{last: map[string]dedupEntry{}}}
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%s", h.prefix, r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, "\x00%s=%v", a.Key, a.Value)
		return true
	})
	if dropped, ok := h.seen.pass(b.String(), r.Time); !ok {
		return nil
	} else if dropped > 0 {
		r.AddAttrs(slog.Int("repeated", dropped))
	}
	return h.next.Handle(ctx, r)
}

// pass reports whether the record with key is written, and how many like
// it were dropped before it.
func (s *dedupSeen) pass(key string, now time.Time) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.last[key]
	if ok && now.Sub(e.at) < dedupWindow {
		e.dropped++
		s.last[key] = e
		return 0, false
	}
	if len(s.last) >= 4096 {
		s.last = map[string]dedupEntry{}
	}
	s.last[key] = dedupEntry{at: now}
	return e.dropped, true
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.prefix)
	for _, a := range as {
		fmt.Fprintf(&b, "\x00%s=%v", a.Key, a.Value)
	}
	return &Handler{next: h.next.WithAttrs(as), prefix: b.String(), seen: h.seen}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), prefix: h.prefix + "\x00group " + name, seen: h.seen}
}
