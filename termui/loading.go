package termui

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"rsfs/fetch"
	"rsfs/report"
	"rsfs/source"
)

// Loading shows a mount's loading on a terminal, at most ten times a
// second: the bytes of the lists as they arrive with their rate, a bar of
// them once their total is known (every list known has been asked for,
// each with a Content-Length), the lists read of those known, and the
// resources. Without a terminal it shows nothing (the log says when
// loading ends). The retries of the load are said on a line each.
type Loading struct {
	line  *Line
	mu    sync.Mutex
	final source.Progress
	rate  Meter
}

// NewLoading shows loading on w, if it is a terminal; nil shows nothing.
func NewLoading(w io.Writer) *Loading {
	if w == nil {
		w = io.Discard
	}
	return &Loading{line: NewLine(w, IsTerminal(w), 100*time.Millisecond)}
}

// Line is the line it draws.
func (l *Loading) Line() *Line { return l.line }

// Update shows pr.
func (l *Loading) Update(pr source.Progress) {
	if !l.line.On() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.final = pr
	l.rate.Add(time.Now(), pr.Bytes)
	l.line.Draw(func() string { return LoadingText(pr, l.rate.PerSecond()) })
}

// Done draws the last report, if any was drawn, and ends its line.
func (l *Loading) Done() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.line.End(LoadingText(l.final, l.rate.PerSecond()))
}

// retryMessage is the log's message for a retry of the load, which the
// loading line says in its own words.
const retryMessage = "the Source does not answer; retrying"

// Retry says that a request of the load is retried: "waiting for URL:
// attempt 2 of 5 failed (cause); retrying in 1.2s", a line each, on the
// terminal (or the waiting parent's output), and in the log, marked as
// said (Echo does not say it again).
func (l *Loading) Retry(r fetch.Retry) {
	slog.WarnContext(said(context.Background()), retryMessage, "url", r.URL, "attempt", r.Attempt, "of", r.Attempts,
		"wait", r.Wait.Round(time.Millisecond), "cause", r.Cause)
	l.line.Above(fmt.Sprintf("waiting for %s: attempt %d of %d failed (%v); retrying in %s",
		r.URL, r.Attempt, r.Attempts, r.Cause, r.Wait.Round(100*time.Millisecond)))
}

// LoadingText is the loading line: "loading: [#####-----] 52% 3.6/6.9
// MiB, 1.2 MiB/s; 1/3 lists, 4,422 resources" (no bar, nor percentage,
// before the total is known), and how many have no length yet.
func LoadingText(pr source.Progress, rate float64) string {
	var b strings.Builder
	b.WriteString("loading: ")
	if pr.Expected > 0 && pr.Started == pr.Docs && pr.Bytes <= pr.Expected {
		fmt.Fprintf(&b, "%s %3d%% %s/%s", Bar(20, pr.Bytes, pr.Expected),
			pr.Bytes*100/pr.Expected, report.SizeIn(pr.Bytes, pr.Expected), report.Size(pr.Expected))
	} else {
		b.WriteString(report.Size(pr.Bytes))
	}
	if rate > 0 {
		fmt.Fprintf(&b, ", %s/s", report.Size(int64(rate)))
	}
	fmt.Fprintf(&b, "; %d/%d lists, %s resources", pr.Done, pr.Docs, report.Thousands(pr.Resources))
	if pr.Missing > 0 {
		fmt.Fprintf(&b, " (%s without a length)", report.Thousands(pr.Missing))
	}
	return b.String()
}
