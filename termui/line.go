// Package termui is what a person at a terminal sees while a command
// runs: one progress line drawn again in place (Line; the mount's loading
// and rsfs warm draw theirs with it), and the warnings of the log echoed
// until the mount serves (Echo).
//
// The line is drawn by hand rather than with schollz/progressbar: that
// puts the percentage before the bar, writes sizes its own way (no tenth
// above 10, "kB" or "KiB" by option), sizes the bar to the terminal and
// has no place for what the lines say after the bar (lists read,
// resources, entries without a length, files), so the lines users and
// tests know could not be drawn with it.
package termui

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Line is one line of a terminal, drawn again in place ("\rTEXT\x1b[K")
// at most once every interval, and ended with a newline once done. Off
// (no terminal), it draws nothing.
type Line struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	every time.Duration
	last  time.Time
	shown bool
}

// NewLine draws on w if on, at most once every interval (0: at each
// Draw).
func NewLine(w io.Writer, on bool, every time.Duration) *Line {
	return &Line{w: w, on: on, every: every}
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// On reports whether the line is drawn.
func (l *Line) On() bool { return l.on }

// Draw draws text(), unless the last draw was less than the interval
// ago.
func (l *Line) Draw(text func() string) {
	if !l.on {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if now.Sub(l.last) < l.every {
		return
	}
	l.last = now
	l.shown = true
	fmt.Fprintf(l.w, "\r%s\x1b[K", text())
}

// Above writes a line of its own above the line, which is drawn again at
// the next Draw. It writes whether the line is on or not: it is a message,
// not progress.
func (l *Line) Above(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shown {
		fmt.Fprint(l.w, "\r\x1b[K")
	}
	fmt.Fprintln(l.w, text)
}

// End draws text, the last state, and ends the line, if the line was
// drawn; a line never drawn stays so.
func (l *Line) End(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shown {
		fmt.Fprintf(l.w, "\r%s\x1b[K\n", text)
		l.shown = false
	}
}

// Bar is a bar of width of done of total: "[#####-----]"; full when total
// is 0.
func Bar(width int, done, total int64) string {
	fill := int64(width)
	if total > 0 {
		fill = min(max(int64(width)*done/total, 0), int64(width))
	}
	return "[" + strings.Repeat("#", int(fill)) + strings.Repeat("-", width-int(fill)) + "]"
}
