package termui

import (
	"fmt"
	"io"
	"time"

	"rsfs/report"
)

// WarmTotals are what the jobs of one rsfs warm have done so far.
type WarmTotals struct {
	Files, DoneFiles          int
	Bytes, DoneBytes, Fetched int64
}

// Warm is rsfs warm's line on a terminal: files, bytes, rate and time
// left. Off, it draws nothing.
type Warm struct {
	line  *Line
	start time.Time
	last  WarmTotals
}

// NewWarm draws on w if on.
func NewWarm(w io.Writer, on bool) *Warm {
	return &Warm{line: NewLine(w, on, 0), start: time.Now()}
}

// Show draws t.
func (b *Warm) Show(t WarmTotals) {
	b.last = t
	b.line.Draw(func() string { return WarmText(t, time.Since(b.start)) })
}

// End draws the last totals again and ends the line.
func (b *Warm) End() {
	b.line.End(WarmText(b.last, time.Since(b.start)))
}

// WarmText is the line of t, elapsed after the start: "warm
// [#####-----] 5/15 files, 1.0/4.0 MiB, 2.0 MiB/s, ETA 3s". The rate is
// the bytes fetched over the time elapsed; the time left assumes the bytes
// still to read come as fast as those read so far.
func WarmText(t WarmTotals, elapsed time.Duration) string {
	el := elapsed.Seconds()
	rate := float64(t.Fetched) / max(el, 0.001)
	eta := "?"
	if t.DoneBytes > 0 && t.Bytes > t.DoneBytes {
		eta = time.Duration(el * float64(t.Bytes-t.DoneBytes) / float64(t.DoneBytes) * float64(time.Second)).Round(time.Second).String()
	} else if t.Bytes <= t.DoneBytes {
		eta = "0s"
	}
	return fmt.Sprintf("warm %s %d/%d files, %s/%s, %s/s, ETA %s", Bar(30, int64(t.DoneFiles), int64(t.Files)), t.DoneFiles, t.Files,
		report.Size(t.DoneBytes), report.Size(t.Bytes), report.Size(int64(rate)), eta)
}
