// Package follow is the one poll loop of rsfs, whichever protocol a mount
// follows. A protocol supplies a PollFunc: read the Source's change
// documents once and apply what is new to the catalog (package changes for
// ResourceSync, atomfeed for Atom-PMH). The Loop decides when it runs:
//
//   - every Interval, jittered by ±10% so that many mounts of one Source
//     do not poll in step; an Interval of 0 turns polling off;
//   - early, when a reader found a file changed since it was listed
//     (PollSoon, through the file's set), never sooner than MinGap after
//     the last poll, and then only the sets asked for;
//   - never while changes are held back (rsfs hold): a held poll is
//     skipped, and the first one after the hold applies what was held;
//   - now, when asked (PollNow: `rsfs poll DIR`), on Run's goroutine, never
//     sooner than MinGap after the last poll, and even when Interval is 0;
//     a held one fails with ErrHeld;
//   - never two at once: a poll asked for while one runs returns at once.
//
// A poll that fails is logged with backoff (the 1st, 2nd, 4th... failure in
// a row) and once when polls succeed again; it is counted in Status, which
// also says when the last poll ran, how long it took, how it ended and when
// the next is due. Save, if set, runs on the Loop's goroutine every
// SaveEvery and once more when Run ends, so a protocol's snapshot is never
// taken beside one of its polls; so does everything else Run does, polls
// included, and Run runs (and saves) even when Interval is 0.
package follow

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"rsfs/status"
)

// PollFunc reads the change documents once and applies what is new. sets
// is nil for a whole poll; otherwise an early poll of those sets only, by
// number (catalog.Resource.Set; 0 asks for every set). A protocol with one
// set may treat every poll as whole.
type PollFunc func(ctx context.Context, sets []uint16) error

// DefaultMinGap is the least time between two polls, early ones included.
const DefaultMinGap = time.Second

// Options configure a Loop.
type Options struct {
	// Interval between polls, jittered by ±10%; 0 polls never (Run then
	// only saves).
	Interval time.Duration
	// MinGap is the least time between two polls; default DefaultMinGap.
	MinGap time.Duration
	// Held, when it returns true, holds changes back: polls are skipped.
	Held func() bool
	// Save, if set, is called by Run every SaveEvery (final false: save
	// if anything changed) and when Run ends (final true: save).
	Save      func(final bool)
	SaveEvery time.Duration
	// AfterPoll, if set, is called after each poll, whole or early, that
	// ran, whatever its outcome (the mount lets versions that failed
	// verification be tried again: cache.Cache.RetryBad).
	AfterPoll func()
	Log       *slog.Logger
}

// Loop runs a protocol's polls.
type Loop struct {
	poll PollFunc
	opts Options // Log and MinGap set

	polling atomic.Bool
	soon    chan struct{}   // asks Run for an early poll
	now     chan chan error // asks Run for a whole poll now, and its outcome

	mu       sync.Mutex
	soonSets map[uint16]bool // the sets an early poll is asked for (0: all)
	st       status.Polling
}

// New returns a Loop that polls through poll.
func New(poll PollFunc, opts Options) *Loop {
	if opts.MinGap <= 0 {
		opts.MinGap = DefaultMinGap
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Loop{poll: poll, opts: opts, soon: make(chan struct{}, 1), now: make(chan chan error), soonSets: map[uint16]bool{}}
}

// ErrHeld is PollNow's error while changes are held back (rsfs hold).
var ErrHeld = errors.New("changes are held back (rsfs hold): no poll until they are released (rsfs release)")

// PollNow asks Run for a whole poll now (MinGap after the last poll at
// the soonest), waits for it, and returns how it ended: ErrHeld while
// changes are held back, ctx's error if ctx ends first (the poll, once
// started, still runs to its end on Run's goroutine).
func (l *Loop) PollNow(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case l.now <- reply:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Polling returns what the Loop has done and will do.
func (l *Loop) Polling() status.Polling {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.st
}

// PollSoon asks Run for a poll of the resource set numbered set as soon as
// one may run (MinGap after the last): a reader learned that one of its
// files changed. Set 0 (unknown) asks for every set.
func (l *Loop) PollSoon(set uint16) {
	l.mu.Lock()
	l.soonSets[set] = true
	l.mu.Unlock()
	select {
	case l.soon <- struct{}{}:
	default:
	}
}

// Poll runs a whole poll now, as a catch-up or a test does. It returns nil
// at once if a poll is running.
func (l *Loop) Poll(ctx context.Context) error { return l.run(ctx, nil) }

// PollEarly runs the early poll PollSoon asked for, now; it does nothing
// when none was asked for or changes are held back.
func (l *Loop) PollEarly(ctx context.Context) error {
	l.mu.Lock()
	asked := l.soonSets
	l.soonSets = map[uint16]bool{}
	l.mu.Unlock()
	if len(asked) == 0 {
		return nil
	}
	if l.Held() {
		l.opts.Log.Debug("changes held back; early poll skipped")
		return nil
	}
	sets := make([]uint16, 0, len(asked))
	for n := range asked {
		sets = append(sets, n)
	}
	return l.run(ctx, sets)
}

// Held reports whether changes are held back (rsfs hold).
func (l *Loop) Held() bool { return l.opts.Held != nil && l.opts.Held() }

// run polls once, unless a poll is running, and records the outcome.
func (l *Loop) run(ctx context.Context, sets []uint16) error {
	if !l.polling.CompareAndSwap(false, true) {
		return nil
	}
	defer l.polling.Store(false)
	start := time.Now()
	l.mu.Lock()
	l.st.Polls++
	l.mu.Unlock()
	err := l.poll(ctx, sets)
	l.mu.Lock()
	l.st.LastPoll, l.st.LastPollTook, l.st.LastPollErr = start, time.Since(start), ""
	if err != nil {
		l.st.PollFailures++
		l.st.LastPollErr = err.Error()
	}
	l.mu.Unlock()
	if l.opts.AfterPoll != nil {
		l.opts.AfterPoll()
	}
	return err
}

// jittered is d ± 10%.
func jittered(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()*0.2-0.1)*float64(d))
}

// Run polls (and saves) until ctx ends; then it saves once more.
func (l *Loop) Run(ctx context.Context) {
	if l.opts.Save != nil {
		defer l.opts.Save(true)
	}
	var saveTick <-chan time.Time
	if l.opts.Save != nil && l.opts.SaveEvery > 0 {
		t := time.NewTicker(l.opts.SaveEvery)
		defer t.Stop()
		saveTick = t.C
	}
	var due <-chan time.Time
	var soon <-chan struct{}
	var timer *time.Timer
	if l.opts.Interval > 0 {
		timer = time.NewTimer(l.next())
		defer timer.Stop()
		due, soon = timer.C, l.soon
	}
	var failing failureLog
	last := time.Time{}
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case <-saveTick:
			l.opts.Save(false)
			continue
		case <-soon:
			if !sleep(ctx, l.opts.MinGap-time.Since(last)) {
				return
			}
			last = time.Now()
			err = l.PollEarly(ctx)
		case <-due:
			last = time.Now()
			timer.Reset(l.next())
			if l.Held() {
				l.opts.Log.Debug("changes held back; poll skipped")
				continue
			}
			err = l.Poll(ctx)
		case reply := <-l.now:
			if l.Held() {
				reply <- ErrHeld
				continue
			}
			if !sleep(ctx, l.opts.MinGap-time.Since(last)) {
				reply <- ctx.Err()
				return
			}
			last = time.Now()
			l.opts.Log.Info("polling now, as asked (rsfs poll)")
			err = l.Poll(ctx)
			reply <- err
		}
		last = l.lastStart(last)
		if ctx.Err() == nil {
			failing.log(l.opts.Log, err)
		}
	}
}

// lastStart is when the last poll began (Polling().LastPoll, stamped a
// moment after the loop chose to poll at last), so that MinGap counts from
// the poll's own start; last if no poll began since.
func (l *Loop) lastStart(last time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st.LastPoll.After(last) {
		return l.st.LastPoll
	}
	return last
}

// next returns how long until the next poll, jittered, and notes when
// that is.
func (l *Loop) next() time.Duration {
	wait := jittered(l.opts.Interval)
	l.mu.Lock()
	l.st.NextPoll = time.Now().Add(wait)
	l.mu.Unlock()
	return wait
}

// sleep waits d, or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
