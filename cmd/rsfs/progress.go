package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"rsfs/fetch"
	"rsfs/source"
	"rsfs/status"
)

// progress shows loading on a terminal, at most ten times a second: the
// bytes of the lists as they arrive with their rate, a bar of them once
// their total is known (every list known has been asked for, each with a
// Content-Length), the lists read of those known, and the resources.
// Without a terminal it shows nothing (the log says when loading ends).
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	last  time.Time
	shown bool
	final source.Progress
	rate  rateMeter
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
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.final = pr
	now := time.Now()
	p.rate.add(now, pr.Bytes)
	if now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	p.shown = true
	fmt.Fprintf(p.w, "\r%s\x1b[K", progressLine(pr, p.rate.perSecond()))
}

// progressLine is the loading line: "loading: [#####-----] 52% 3.6/6.9
// MiB, 1.2 MiB/s; 1/3 lists, 4,422 resources" (no bar, nor percentage,
// before the total is known), and how many have no length yet.
func progressLine(pr source.Progress, rate float64) string {
	var b strings.Builder
	b.WriteString("loading: ")
	if pr.Expected > 0 && pr.Started == pr.Docs && pr.Bytes <= pr.Expected {
		const width = 20
		done := int(pr.Bytes * width / pr.Expected)
		fmt.Fprintf(&b, "[%s%s] %3d%% %s/%s", strings.Repeat("#", done), strings.Repeat("-", width-done),
			pr.Bytes*100/pr.Expected, sizeNumber(pr.Bytes, pr.Expected), status.FormatSize(pr.Expected))
	} else {
		b.WriteString(status.FormatSize(pr.Bytes))
	}
	if rate > 0 {
		fmt.Fprintf(&b, ", %s/s", status.FormatSize(int64(rate)))
	}
	fmt.Fprintf(&b, "; %d/%d lists, %s resources", pr.Done, pr.Docs, thousands(int(pr.Resources)))
	if pr.Missing > 0 {
		fmt.Fprintf(&b, " (%s without a length)", thousands(int(pr.Missing)))
	}
	return b.String()
}

// sizeNumber is n in the unit FormatSize picks for of, without the unit:
// "3.6" of "6.9 MiB".
func sizeNumber(n, of int64) string {
	if of < 1024 {
		return strconv.FormatInt(n, 10)
	}
	div := 1024.0
	for v := float64(of) / 1024; v >= 1024; v /= 1024 {
		div *= 1024
	}
	return fmt.Sprintf("%.1f", float64(n)/div)
}

// rateMeter is the bytes a second over the last few seconds.
type rateMeter struct {
	samples [20]rateSample
	n, next int
}

type rateSample struct {
	at    time.Time
	bytes int64
}

// rateWindow is how far back the rate looks.
const rateWindow = 3 * time.Second

func (m *rateMeter) add(at time.Time, bytes int64) {
	if m.n > 0 {
		lastAt := m.samples[(m.next-1+len(m.samples))%len(m.samples)].at
		if at.Sub(lastAt) < rateWindow/time.Duration(len(m.samples)) {
			return // enough samples for the window
		}
	}
	m.samples[m.next] = rateSample{at, bytes}
	m.next = (m.next + 1) % len(m.samples)
	m.n = min(m.n+1, len(m.samples))
}

// perSecond is the rate between the oldest sample within the window and
// the newest; 0 before there are two.
func (m *rateMeter) perSecond() float64 {
	if m.n < 2 {
		return 0
	}
	newest := m.samples[(m.next-1+len(m.samples))%len(m.samples)]
	oldest := newest
	for i := 2; i <= m.n; i++ {
		s := m.samples[(m.next-i+len(m.samples))%len(m.samples)]
		if newest.at.Sub(s.at) > rateWindow {
			break
		}
		oldest = s
	}
	d := newest.at.Sub(oldest.at).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(newest.bytes-oldest.bytes) / d
}

// retry says that a request of the load is retried: "waiting for URL:
// attempt 2 of 5 failed (cause); retrying in 1.2s", a line each, on the
// terminal (or the waiting parent's output) and in the log.
func (p *progress) retry(r fetch.Retry) {
	slog.Warn(retryMessage, "url", r.URL, "attempt", r.Attempt, "of", r.Attempts, "wait", r.Wait.Round(time.Millisecond), "cause", r.Cause)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K") // the line is drawn again at the next report
	}
	fmt.Fprintf(p.w, "waiting for %s: attempt %d of %d failed (%v); retrying in %s\n",
		r.URL, r.Attempt, r.Attempts, r.Cause, r.Wait.Round(100*time.Millisecond))
}

// retryMessage is the log's message for a retry of the load, which the
// progress display says in its own words.
const retryMessage = "the Source does not answer; retrying"

// done draws the last report, if any was drawn, and ends its line.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintf(p.w, "\r%s\x1b[K\n", progressLine(p.final, p.rate.perSecond()))
		p.shown = false
	}
}
