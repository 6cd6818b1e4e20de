package termui

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// Echo writes the log's warnings and errors to a terminal while it is on,
// so that a user who runs `rsfs mount` sees them without opening the log:
// one line each, "rsfs: warning: MESSAGE (key=value ...)", the first of
// each message only; when it is turned off, the messages that came again
// say how many more the log has. The attributes every line of the mount
// carries (source, mount) are not repeated. A record logged with a
// context marked said (Loading's retries, which it says in its own words)
// is not echoed.
type Echo struct {
	mu    sync.Mutex
	w     io.Writer // nil: off
	over  *Line     // nil: none
	count map[string]int
	order []string
}

// saidKey marks a context whose records are said on the terminal already.
type saidKey struct{}

// said marks ctx: what is logged with it is said on the terminal already.
func said(ctx context.Context) context.Context {
	return context.WithValue(ctx, saidKey{}, true)
}

// isSaid reports whether ctx is marked said.
func isSaid(ctx context.Context) bool {
	v, _ := ctx.Value(saidKey{}).(bool)
	return v
}

// Start echoes to w from now on.
func (e *Echo) Start(w io.Writer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.w, e.count, e.order = w, map[string]int{}, nil
}

// Over writes what is echoed above l (Line.Above) while l is drawn on the
// same terminal, rather than after it on its line; nil: no line.
func (e *Echo) Over(l *Line) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.over = l
}

// Stop ends the echo, saying how many more of each repeated message the
// log has.
func (e *Echo) Stop() {
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

// Handler is h that also echoes to e its warnings and errors.
func (e *Echo) Handler(h slog.Handler) slog.Handler {
	return echoHandler{h, e}
}

func (e *Echo) say(ctx context.Context, r slog.Record) {
	if isSaid(ctx) {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.w == nil {
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
	if e.over != nil {
		e.over.Above(line)
		return
	}
	fmt.Fprintln(e.w, line)
}

// echoHandler is a slog.Handler that, besides handling a record, echoes
// it if it is a warning or an error.
type echoHandler struct {
	slog.Handler
	echo *Echo
}

func (h echoHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.echo.say(ctx, r)
	}
	return h.Handler.Handle(ctx, r)
}

func (h echoHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return echoHandler{h.Handler.WithAttrs(attrs), h.echo}
}

func (h echoHandler) WithGroup(name string) slog.Handler {
	return echoHandler{h.Handler.WithGroup(name), h.echo}
}
