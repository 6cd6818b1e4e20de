package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"rsfs/fetch"
	"rsfs/source"
)

// progress shows loading on a terminal, at most ten times a second.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	last  time.Time
	shown bool
}

// newProgress shows loading on f; nil shows nothing.
func newProgress(f *os.File) *progress {
	if f == nil {
		return &progress{w: io.Discard}
	}
	st, err := f.Stat()
	return &progress{w: f, tty: err == nil && st.Mode()&os.ModeCharDevice != 0}
}

func (p *progress) update(pr source.Progress) {
	notifySystemd.loading(pr)
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	p.shown = true
	fmt.Fprintf(p.w, "\rloading: %d lists read, %d resources", pr.Lists, pr.Resources)
	if pr.Missing > 0 {
		fmt.Fprintf(p.w, " (%d without a length)", pr.Missing)
	}
}

// retry says that a request of the load is retried: "waiting for URL:
// attempt 2 of 5 failed (cause); retrying in 1.2s", a line each, on the
// terminal (or the waiting parent's output) and in the log.
func (p *progress) retry(r fetch.Retry) {
	slog.Warn(retryMessage, "url", r.URL, "attempt", r.Attempt, "of", r.Attempts, "wait", r.Wait.Round(time.Millisecond), "cause", r.Cause)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintln(p.w) // end the loading line
		p.shown = false
	}
	fmt.Fprintf(p.w, "waiting for %s: attempt %d of %d failed (%v); retrying in %s\n",
		r.URL, r.Attempt, r.Attempts, r.Cause, r.Wait.Round(100*time.Millisecond))
}

// retryMessage is the log's message for a retry of the load, which the
// progress display says in its own words.
const retryMessage = "the Source does not answer; retrying"

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintln(p.w)
	}
}
