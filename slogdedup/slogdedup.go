// Package slogdedup is a slog.Handler that folds repeats of one failing
// condition into a count, and never merges separate events.
//
// The rule: a warning or an error identical (level, message, attributes;
// time aside) to one written less than 10 s before is folded: it is not
// written, but counted. The count is always written, as repeated=N: on the
// next identical line after the 10 s, or, if none comes, on a copy of the
// last folded line written when the 10 s end. Records below Warn (info,
// debug) are events, each written as it comes: two "changes applied" lines
// alike are two batches, not one.
//
// What it is for: the kernel retries a failed page read at once, so one
// failed read(2) reaches rsfs as two reads that fail alike, and a file
// whose bytes disagree with the catalog fails every read alike until the
// next poll.
package slogdedup

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// dedupWindow is how long after a warning or error written its repeats are
// folded into a count.
const dedupWindow = 10 * time.Second

// maxKeys bounds the lines remembered; past it, a new line is written but
// not remembered (nothing is folded into it).
const maxKeys = 4096

// Handler folds a warning or error identical (level, message, attributes,
// time aside) to one written within dedupWindow, and always writes how
// many it folded (repeated=N). Records below Warn pass through. Its
// WithAttrs and WithGroup handlers share what it has seen.
type Handler struct {
	next   slog.Handler
	prefix string // the attributes and groups added by WithAttrs and WithGroup
	seen   *dedupSeen
}

type dedupSeen struct {
	window time.Duration
	// afterFunc runs f after d (time.AfterFunc; tests fire it themselves).
	afterFunc func(d time.Duration, f func()) stopper
	mu        sync.Mutex
	last      map[string]*dedupEntry
}

// stopper is a timer that can be stopped (*time.Timer).
type stopper interface{ Stop() bool }

func afterFunc(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) }

// dedupEntry is a line written, and what was folded into it since.
type dedupEntry struct {
	at      time.Time // when the line was written: the window starts
	dropped int
	rec     slog.Record  // the last folded record
	next    slog.Handler // where it goes
	timer   stopper      // writes the count when the window ends; nil before a fold
}

// New returns a Handler writing to next.
func New(next slog.Handler) *Handler {
	return &Handler{next: next, seen: &dedupSeen{window: dedupWindow, afterFunc: afterFunc, last: map[string]*dedupEntry{}}}
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return h.next.Handle(ctx, r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%s", h.prefix, r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, "\x00%s=%v", a.Key, a.Value)
		return true
	})
	if dropped, ok := h.seen.pass(b.String(), r, h.next); !ok {
		return nil
	} else if dropped > 0 {
		r.AddAttrs(slog.Int("repeated", dropped))
	}
	return h.next.Handle(ctx, r)
}

// pass reports whether r, with key, is written, and how many like it were
// folded before it (whose count it then carries). A record folded is kept,
// to write the count with when the window ends if no later one does.
func (s *dedupSeen) pass(key string, r slog.Record, next slog.Handler) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.last[key]
	if e != nil && r.Time.Sub(e.at) < s.window {
		e.dropped++
		e.rec, e.next = r.Clone(), next
		if e.timer == nil {
			e.timer = s.afterFunc(e.at.Add(s.window).Sub(r.Time), func() { s.flush(key, e) })
		}
		return 0, false
	}
	dropped := 0
	if e != nil {
		dropped = e.dropped
		if e.timer != nil {
			e.timer.Stop() // its count goes with r; a flush already waiting finds e replaced
		}
	}
	if e == nil && len(s.last) >= maxKeys {
		s.prune(r.Time)
		if len(s.last) >= maxKeys {
			return 0, true
		}
	}
	s.last[key] = &dedupEntry{at: r.Time}
	return dropped, true
}

// flush writes the count folded into e when its window ends with no later
// line like it written.
func (s *dedupSeen) flush(key string, e *dedupEntry) {
	s.mu.Lock()
	if s.last[key] != e || e.dropped == 0 {
		s.mu.Unlock()
		return
	}
	delete(s.last, key)
	rec, next, n := e.rec, e.next, e.dropped
	s.mu.Unlock()
	rec.AddAttrs(slog.Int("repeated", n))
	_ = next.Handle(context.Background(), rec)
}

// prune forgets the lines whose window ended with nothing folded (a line
// with a fold is forgotten by its flush). Caller holds s.mu.
func (s *dedupSeen) prune(now time.Time) {
	for k, e := range s.last {
		if e.dropped == 0 && now.Sub(e.at) >= s.window {
			delete(s.last, k)
		}
	}
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
