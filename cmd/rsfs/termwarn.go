package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// termWarnings is a slog.Handler that, besides logging, echoes the
// warnings and errors of a mount's loading to the terminal (termEcho), so
// that a user who runs `rsfs mount` sees them without opening the log.
type termWarnings struct {
	slog.Handler
	echo *termEcho
}

func (h termWarnings) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.echo.say(r)
	}
	return h.Handler.Handle(ctx, r)
}

func (h termWarnings) WithAttrs(attrs []slog.Attr) slog.Handler {
	return termWarnings{h.Handler.WithAttrs(attrs), h.echo}
}

func (h termWarnings) WithGroup(name string) slog.Handler {
	return termWarnings{h.Handler.WithGroup(name), h.echo}
}

// termEcho writes warnings to a terminal while it is on: one line each,
// "rsfs: warning: MESSAGE (key=value ...)", the first of each message
// only; when it is turned off, the messages that came again say how many
// more the log has. The attributes every line of the mount carries
// (source, mount) are not repeated.
type termEcho struct {
	mu    sync.Mutex
	w     io.Writer // nil: off
	count map[string]int
	order []string
}

// start echoes to w from now on.
func (e *termEcho) start(w io.Writer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.w, e.count, e.order = w, map[string]int{}, nil
}

// stop ends the echo, saying how many more of each repeated message the
// log has.
func (e *termEcho) stop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.w == nil {
		return
	}
	for _, msg := range e.order {
		if n := e.count[msg] - 1; n > 0 {
			fmt.Fprintf(e.w, "rsfs: warning: %s: %d more in the log\n", msg, n)
		}
	}
	e.w = nil
}

func (e *termEcho) say(r slog.Record) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.w == nil || r.Message == retryMessage { // progress says each retry
		return
	}
	e.count[r.Message]++
	if e.count[r.Message] > 1 {
		return
	}
	e.order = append(e.order, r.Message)
	var attrs []string
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, a.Key+"="+a.Value.String())
		return true
	})
	line := "rsfs: warning: " + r.Message
	if len(attrs) > 0 {
		line += " (" + strings.Join(attrs, " ") + ")"
	}
	fmt.Fprintln(e.w, line)
}
