package status

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// PollNowReport is what `rsfs poll` prints: the poll the mount ran when
// asked (fs.XattrPoll), and the follow position after it.
type PollNowReport struct {
	Source string `json:"source"`
	Dir    string `json:"dir"`
	// Started is when the poll began; TookSeconds how long it ran.
	Started     time.Time `json:"started"`
	TookSeconds float64   `json:"took_seconds"`
	Error       string    `json:"error,omitempty"` // "": it succeeded
	// Applied, Reloads and Drift are what it did (with any poll that ran
	// while it waited its turn).
	Applied   int64       `json:"changes_applied"`
	Reloads   int64       `json:"reloads"`
	Drift     int64       `json:"drift_repaired"`
	Resources int         `json:"resources"`
	Sets      []SetReport `json:"sets"`
}

// PollNow runs poll (the follower's PollNow) and reports what it did.
func (m *Mount) PollNow(poll func() error) *PollNowReport {
	before := m.Follower.Status()
	asked := time.Now()
	err := poll()
	rep := m.Report()
	after := m.Follower.Status()
	p := &PollNowReport{Source: m.URL, Dir: m.Dir, Started: after.LastPoll.UTC(), TookSeconds: after.LastPollTook.Seconds(),
		Applied: after.Applied - before.Applied, Reloads: after.Reloads - before.Reloads, Drift: after.Drift - before.Drift,
		Resources: rep.Resources, Sets: rep.Sets}
	if err != nil {
		p.Error = err.Error()
	}
	if after.LastPoll.Before(asked) {
		p.Started, p.TookSeconds = time.Time{}, 0 // no poll ran (held back, or interrupted)
	}
	return p
}

// Err is a failed poll's error, as WriteText says it (without the final
// newline); nil when it succeeded.
func (p *PollNowReport) Err() error {
	if p.Error == "" {
		return nil
	}
	var b strings.Builder
	p.WriteText(&b)
	return errors.New(strings.TrimSpace(b.String()))
}

// WriteText writes the report as `rsfs poll` prints it.
func (p *PollNowReport) WriteText(w io.Writer) {
	took := time.Duration(p.TookSeconds * float64(time.Second)).Round(time.Millisecond)
	if p.Error != "" {
		if p.Started.IsZero() {
			fmt.Fprintf(w, "no poll of %s: %s\n", p.Source, p.Error)
		} else {
			fmt.Fprintf(w, "polled %s in %s: failed: %s\n", p.Source, took, p.Error)
		}
		return
	}
	fmt.Fprintf(w, "polled %s in %s: %s applied", p.Source, took, plural(p.Applied, "change"))
	if p.Reloads > 0 {
		fmt.Fprintf(w, ", %s", plural(p.Reloads, "reload"))
	}
	if p.Drift > 0 {
		fmt.Fprintf(w, ", %s repaired", plural(p.Drift, "drifted resource"))
	}
	fmt.Fprintf(w, "; %s at %s\n", plural(int64(p.Resources), "resource"), p.Dir)
	for _, s := range p.Sets {
		fmt.Fprintf(w, "  set %s: changes up to %s applied\n", s.Set, timeOrNone(s.Position))
	}
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
