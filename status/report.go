package status

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"rsfs/report"
)

// Report is what `rsfs status` prints, as the mount renders it.
type Report struct {
	Source       string       `json:"source"`
	Protocol     string       `json:"protocol"` // "resourcesync" or "atompmh"
	Origin       string       `json:"origin"`
	Dir          string       `json:"dir"`
	PID          int          `json:"pid"`
	Started      time.Time    `json:"started"`
	Now          time.Time    `json:"now"`
	Resources    int          `json:"resources"`
	PollInterval string       `json:"poll_interval"` // "0s": not following
	Sets         []SetReport  `json:"sets"`
	Polls        PollReport   `json:"polls"`
	Pushed       int64        `json:"pushed_notifications"`
	Push         []PushReport `json:"push"`
	Hold         *HoldReport  `json:"hold"`      // null: none
	HoldFile     string       `json:"hold_file"` // the file this mount reads its hold from (rsfs hold writes it)
	LogFile      string       `json:"log_file"`  // where the mount logs; "": stderr
	// Unreachable is since when the Source has failed to answer (the
	// catch-up at mount, the polls since); null: it answers.
	Unreachable *UnreachableReport `json:"unreachable"`
	Cache       CacheReport        `json:"cache"`
	Fetched     []OriginReport     `json:"fetched"`
	// Throttled are the origins that said "slow down" (429, 503, or no
	// answer in time) in the last minute, or that are paused now.
	Throttled    []ThrottleReport `json:"throttled"`
	Verification Summary          `json:"verification_failures"`
	ReadErrors   Summary          `json:"read_errors"`
}

// NoBaselineText says what the tree of a set without a baseline holds.
const NoBaselineText = "no baseline: the set publishes no Resource List or Resource Dump; the tree holds only what its Change Lists name"

type SetReport struct {
	Set           string    `json:"set"`
	Position      time.Time `json:"position"`
	NewestChange  time.Time `json:"newest_change"`
	BehindSeconds float64   `json:"behind_seconds"`
	Resources     int       `json:"resources"`
	// Complete is when the last poll that read every document of the set
	// began; null before any did.
	Complete *time.Time  `json:"complete"`
	Degraded []DocReport `json:"degraded"` // empty: every document was read
	// NothingToFollow: the set names no Change List nor Change Dump.
	NothingToFollow bool `json:"nothing_to_follow"`
	// NoBaseline: the set publishes no Resource List nor Resource Dump,
	// only changes: the tree holds only what they name.
	NoBaseline bool `json:"no_baseline"`
	// Warnings: documents, as last read, that depart from the standard,
	// and how they were read.
	Warnings []WarningReport `json:"warnings"`
}

// WarningReport is a document's lasting deviation.
type WarningReport struct {
	Doc     string `json:"doc"`
	Warning string `json:"warning"`
}

// UnreachableReport says since when the Source has failed to answer, and
// the last error.
type UnreachableReport struct {
	Since time.Time `json:"since"`
	Error string    `json:"error"`
	// Offline: it has not answered for one --timeout or more; a read that
	// needs the network fails at once, the polls keep trying.
	Offline bool `json:"offline"`
	// Hang: it accepts connections and does not answer within --timeout.
	Hang bool `json:"hang"`
	// Fix is what would help, when something is known to.
	Fix string `json:"fix,omitempty"`
}

// Offline is what the HTTP client knows of the Source's origin
// (fetch.OfflineState).
type Offline struct {
	Offline bool
	Since   time.Time // zero: the last attempt was answered
	Hang    bool
	Err     string
	Timeout time.Duration // how long the Source has to answer (Hints.Timeout)
	Forced  bool          // mounted offline by choice (Hints.Offline)
}

// DocReport is a document that failed at the last poll.
type DocReport struct {
	Doc   string    `json:"doc"`
	Error string    `json:"error"`
	Since time.Time `json:"since"`
}

// PushReport is a push subscription.
type PushReport struct {
	Hub   string     `json:"hub"`
	Topic string     `json:"topic"`
	State string     `json:"state"`
	Error string     `json:"error,omitempty"`
	Next  *time.Time `json:"next"`
}

type PollReport struct {
	Count    int64      `json:"count"`
	Failures int64      `json:"failures"`
	Applied  int64      `json:"changes_applied"`
	Reloads  int64      `json:"reloads"`
	Drift    int64      `json:"drift_repaired"`
	Last     *time.Time `json:"last"`
	LastTook float64    `json:"last_took_seconds"`
	Result   string     `json:"last_result"` // "ok", the error, or "" before the first
	Next     *time.Time `json:"next"`
}

type HoldReport struct {
	Until time.Time `json:"until"`
}

type CacheReport struct {
	Memory TierReport  `json:"memory"`
	Disk   *TierReport `json:"disk"` // null: no disk cache
	// OnDisk is what of the tree's files the disk cache holds.
	OnDisk *Coverage `json:"on_disk"`
}

type TierReport struct {
	Bytes    int64  `json:"bytes"`
	MaxBytes int64  `json:"max_bytes"`
	Blocks   int    `json:"blocks"`
	Hits     uint64 `json:"hits"`
	Lookups  uint64 `json:"lookups"`
	// Writes and Evictions are the disk's block files written and evicted
	// since the mount (0 for memory).
	Writes    uint64  `json:"writes,omitempty"`
	Evictions uint64  `json:"evictions,omitempty"`
	HitRatio  float64 `json:"hit_ratio"`
}

// ThrottleReport is how an origin is paced now because it said "slow
// down" (fetch's pacer).
type ThrottleReport struct {
	Origin string `json:"origin"`
	// Answers are its answers 429 or 503, and its timeouts, in the last
	// minute.
	Answers  int     `json:"answers"`
	InFlight int     `json:"in_flight"`
	Limit    int     `json:"limit"` // requests in flight allowed now
	Rate     float64 `json:"rate"`  // requests a second allowed now; 0: unlimited
	MaxRate  float64 `json:"max_rate"`
	// PausedUntil is until when it is paused, if it is now.
	PausedUntil *time.Time `json:"paused_until"`
	Waiting     int        `json:"waiting"` // requests waiting for their turn
}

type OriginReport struct {
	Origin   string `json:"origin"`
	Requests int64  `json:"requests"`
	Bytes    int64  `json:"bytes"`
}

// WriteTextOf writes the report a mount gave as JSON (user.rsfs.status)
// as `rsfs status` prints it (WriteText).
func WriteTextOf(out io.Writer, data []byte, h Hints) error {
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("read the report: %w", err)
	}
	return r.WriteText(out, h)
}

// WriteText writes the report as `rsfs status` prints it, naming the
// flags of h where one would change what it says. (`rsfs status --json`
// prints the mount's own JSON, indented: report.IndentJSON.)
func (r *Report) WriteText(out io.Writer, h Hints) error {
	w := report.NewWriter(out)
	ago := func(t time.Time) string { return r.Now.Sub(t).Round(time.Second).String() }
	fmt.Fprintf(w, "Source:     %s (origin %s)\n", r.Source, r.Origin)
	fmt.Fprintf(w, "Mount:      %s, pid %d, up %s, %d resources\n", r.Dir, r.PID, ago(r.Started), r.Resources)
	if r.LogFile != "" {
		fmt.Fprintf(w, "Log:        %s\n", r.LogFile)
	} else {
		fmt.Fprintln(w, "Log:        stderr")
	}
	if u := r.Unreachable; u != nil {
		if u.Offline {
			line := fmt.Sprintf("Offline:    since %s (%s ago)", u.Since.Format(time.RFC3339), ago(u.Since))
			if c := r.Cache.OnDisk; c != nil {
				line = fmt.Sprintf("Offline:    offline since %s: %s; reads of the rest fail at once (EIO); polls keep trying", u.Since.Format(time.RFC3339), c.Text())
			}
			fmt.Fprintln(w, line)
			fmt.Fprintf(w, "  cause:    %s\n", indentLines(u.Error, 12))
		} else {
			fmt.Fprintf(w, "Unreachable: since %s (%s ago): %s\n", u.Since.Format(time.RFC3339), ago(u.Since), indentLines(u.Error, 13))
		}
		if u.Fix != "" {
			fmt.Fprintf(w, "  fix:      %s\n", u.Fix)
		}
	}
	switch {
	case r.PollInterval == "0s":
		fmt.Fprintln(w, "Following:  off"+paren(h.NoFollow))
	case r.nothingToFollow():
		fmt.Fprintf(w, "Following:  nothing to follow (no Change List); the Capability Lists are read again every %s, in case one appears\n", r.PollInterval)
	default:
		fmt.Fprintf(w, "Following:  every %s: %d polls (%d failed), %d changes applied, %d reloads, %d drift repaired\n",
			r.PollInterval, r.Polls.Count, r.Polls.Failures, r.Polls.Applied, r.Polls.Reloads, r.Polls.Drift)
	}
	kind := "set"
	if r.Protocol == "atompmh" {
		kind = "feed" // its position is the harvest mark
	}
	for _, s := range r.Sets {
		fmt.Fprintf(w, "  %s %s: %d resources\n", kind, s.Set, s.Resources)
		if s.NoBaseline {
			fmt.Fprintln(w, "    "+NoBaselineText)
		}
		if s.NothingToFollow {
			fmt.Fprintln(w, "    nothing to follow: it names no Change List")
		} else {
			fmt.Fprintf(w, "    position %s, newest change %s, behind %s\n", timeOrNone(s.Position), timeOrNone(s.NewestChange), behind(s))
		}
		for _, d := range s.Degraded {
			fmt.Fprintf(w, "    degraded: %s failing since %s: %s\n", d.Doc, d.Since.Format(time.RFC3339), indentLines(d.Error, 14))
		}
		for _, d := range s.Warnings {
			fmt.Fprintf(w, "    warning: %s: %s\n", d.Doc, d.Warning)
		}
	}
	if r.Polls.Last != nil {
		fmt.Fprintf(w, "Last poll:  %s (%s ago), took %s: %s\n", r.Polls.Last.Format(time.RFC3339), ago(*r.Polls.Last),
			time.Duration(r.Polls.LastTook*float64(time.Second)).Round(time.Millisecond), indentLines(r.Polls.Result, 12))
	} else {
		fmt.Fprintln(w, "Last poll:  none")
	}
	if n := r.Polls.Next; n != nil && n.Before(r.Now) {
		fmt.Fprintf(w, "Next poll:  due since %s (a poll is running)\n", n.Format(time.RFC3339))
	} else if n != nil {
		fmt.Fprintf(w, "Next poll:  %s (in %s)\n", n.Format(time.RFC3339), n.Sub(r.Now).Round(time.Second))
	}
	fmt.Fprintf(w, "Pushed:     %d notifications\n", r.Pushed)
	for _, p := range r.Push {
		line := fmt.Sprintf("  %s at %s: %s", p.Topic, p.Hub, p.State)
		if p.Error != "" {
			line += " (" + p.Error + ")"
		}
		if p.Next != nil {
			line += ", next " + p.Next.Format(time.RFC3339)
		}
		fmt.Fprintln(w, line)
	}
	if r.Hold != nil {
		fmt.Fprintf(w, "Hold:       changes held back until %s\n", r.Hold.Until.Format(time.RFC3339))
	} else {
		fmt.Fprintln(w, "Hold:       none")
	}
	printTier(w, "Cache:      memory", r.Cache.Memory)
	if r.Cache.Disk != nil {
		printTier(w, "            disk", *r.Cache.Disk)
		if c := r.Cache.OnDisk; c != nil {
			fmt.Fprintf(w, "            on disk: %s\n", c.Text())
		}
	} else {
		fmt.Fprintln(w, "            disk: none"+paren(h.NoDisk))
	}
	fmt.Fprintln(w, "Fetched:")
	for _, o := range r.Fetched {
		fmt.Fprintf(w, "  %s: %d requests, %s\n", o.Origin, o.Requests, report.Size(o.Bytes))
	}
	for _, t := range r.Throttled {
		fmt.Fprintln(w, t.line(r.Now, h.MaxRate))
	}
	printFailures(w, "Verification failures", r.Verification)
	printFailures(w, "Read errors", r.ReadErrors)
	return w.Err()
}

// nothingToFollow reports whether no set names a Change List.
func (r *Report) nothingToFollow() bool {
	for _, s := range r.Sets {
		if !s.NothingToFollow {
			return false
		}
	}
	return len(r.Sets) > 0
}

// indentLines indents the lines of s after the first by n spaces, under
// the value of its field (an error of errors.Join has a line each).
func indentLines(s string, n int) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+strings.Repeat(" ", n))
}

// timeOrNone is t in RFC 3339, or "none" for the zero time.
func timeOrNone(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.Format(time.RFC3339)
}

// behind is how far behind the Source the set is; before any poll read it
// whole, that is only a lower bound.
func behind(s SetReport) string {
	d := (time.Duration(s.BehindSeconds * float64(time.Second))).Round(time.Second).String()
	if s.Complete == nil {
		return "at least " + d + " (not read whole since the mount)"
	}
	return d
}

func printTier(w io.Writer, name string, t TierReport) {
	fmt.Fprintf(w, "%s %s of %s in %d blocks, hit ratio %.2f (%d of %d)\n",
		name, report.Size(t.Bytes), report.Size(t.MaxBytes), t.Blocks, t.HitRatio, t.Hits, t.Lookups)
}

func printFailures(w io.Writer, name string, s Summary) {
	more := ""
	if s.Capped {
		more = "+"
	}
	fmt.Fprintf(w, "%s: %d%s in the last hour (%d in all)\n", name, s.InWindow, more, s.Total)
	for _, e := range s.Latest {
		fmt.Fprintf(w, "  %s %s\n", e.Time.UTC().Format(time.RFC3339), e.Reason)
	}
}

// line is how `rsfs status` says an origin is throttled, under what was
// fetched from it: "  ORIGIN: throttled by the Source: N answers 429/503
// in the last minute; M requests in flight (limit L), at most R requests a
// second, paused for D (MAXRATE R)", maxRate the flag that sets its cap.
func (t ThrottleReport) line(now time.Time, maxRate string) string {
	s := fmt.Sprintf("  %s: throttled by the Source: %d answers 429/503 in the last minute; %d requests in flight (limit %d)",
		t.Origin, t.Answers, t.InFlight, t.Limit)
	if t.Rate > 0 {
		s += fmt.Sprintf(", at most %.1f requests a second", t.Rate)
	}
	if t.Waiting > 0 {
		s += fmt.Sprintf(", %d waiting", t.Waiting)
	}
	if t.PausedUntil != nil {
		s += fmt.Sprintf(", paused for %s", t.PausedUntil.Sub(now).Round(100*time.Millisecond))
	}
	switch {
	case maxRate == "":
	case t.MaxRate > 0:
		s += fmt.Sprintf(" (%s %g)", maxRate, t.MaxRate)
	default:
		s += " (" + maxRate + " sets a lower rate from the start)"
	}
	return s
}

// Coverage is what of some files the disk cache holds.
type Coverage struct {
	Files       int   `json:"files"`
	FilesOnDisk int   `json:"files_on_disk"`
	Bytes       int64 `json:"bytes"`
	BytesOnDisk int64 `json:"bytes_on_disk"`
}

// Text is "N of M files (X of Y) on disk".
func (c Coverage) Text() string {
	return fmt.Sprintf("%d of %d files (%s of %s) on disk", c.FilesOnDisk, c.Files, report.Size(c.BytesOnDisk), report.Size(c.Bytes))
}
