package atomfeed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"rsfs/atompmh"
	"rsfs/catalog"
	"rsfs/fetch"
)

// FollowOptions configure a Follower.
type FollowOptions struct {
	// Interval between polls of the subscription document (jittered by
	// ±10%); 0 disables following (Run returns at once).
	Interval time.Duration
	// Effects is told what each harvest changed in the catalog, for the
	// kernel (fs.FS.Notify); nil while nothing is mounted.
	Effects func([]catalog.Effect)
	// Save, if set, is handed a Snapshot by Run after a poll that applied
	// changes, at most once per SaveEvery, and once more when Run ends.
	Save      func([]byte) error
	SaveEvery time.Duration
	// Held, when it returns true, holds changes back (rsfs hold): Run
	// skips its polls, and the first one after the hold harvests them.
	Held func() bool
}

// Stats count what a Follower did.
type Stats struct {
	Polls     int64 // harvests started
	Documents int64 // feed documents fetched (304s included)
	Applied   int64 // record changes applied to the catalog
}

// Follower keeps a catalog equal to the feed's pool: Load harvests the
// whole feed, Poll (and Run, at an interval) the changes since. Poll is
// not safe for concurrent use: Load, then Run, are its only callers.
type Follower struct {
	f     *Feed
	cat   *catalog.Catalog
	opts  FollowOptions
	state *atompmh.State

	held  map[string][]string // record id → the URIs it has in the catalog
	owner map[string]string   // URI → the record holding it
	sizes map[string]int64    // URI → the size shown, for a snapshot
	// retry are records with a representation whose size could not be
	// learned for a reason other than 404 or 410: tried again each poll.
	retry map[string]bool

	soon                     chan struct{}
	polls, docs, applied     atomic.Int64
	lastWarnedForeignOrigins map[string]bool

	mu sync.Mutex // guards st
	st followState
}

// NewFollower returns a follower filling cat (from NewCatalog).
func (f *Feed) NewFollower(cat *catalog.Catalog, opts FollowOptions) *Follower {
	return &Follower{f: f, cat: cat, opts: opts, state: atompmh.NewState(),
		held: map[string][]string{}, owner: map[string]string{}, sizes: map[string]int64{}, retry: map[string]bool{},
		soon: make(chan struct{}, 1), lastWarnedForeignOrigins: map[string]bool{}}
}

// Stats returns the counters.
func (fl *Follower) Stats() Stats {
	return Stats{Polls: fl.polls.Load(), Documents: fl.docs.Load(), Applied: fl.applied.Load()}
}

// Load harvests the whole feed into the catalog and seals it.
func (fl *Follower) Load(ctx context.Context) error {
	start := time.Now()
	if err := fl.Poll(ctx); err != nil {
		return err
	}
	fl.noteLoaded()
	if err := fl.cat.Seal(); err != nil {
		return fmt.Errorf("load %s: %w", fl.f.URL, err)
	}
	fl.f.log.Info("feed loaded", "files", fl.cat.Len(), "records", len(fl.state.Pool),
		"documents", fl.docs.Load(), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// PollSoon asks Run for a poll now: a reader found a file changed.
func (fl *Follower) PollSoon() {
	select {
	case fl.soon <- struct{}{}:
	default:
	}
}

// Run polls at the interval until ctx ends, saving as FollowOptions say.
func (fl *Follower) Run(ctx context.Context) {
	if fl.opts.Interval <= 0 {
		return
	}
	saved, lastSave := fl.applied.Load(), time.Now()
	defer func() {
		if fl.applied.Load() != saved {
			fl.save()
		}
	}()
	for {
		wait := fl.opts.Interval + time.Duration((rand.Float64()*0.2-0.1)*float64(fl.opts.Interval))
		t := time.NewTimer(wait)
		fl.noteNext(time.Now().Add(wait))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-fl.soon:
			t.Stop()
		}
		if fl.opts.Held != nil && fl.opts.Held() {
			fl.f.log.Debug("changes held back; poll skipped")
			continue
		}
		if err := fl.Poll(ctx); err != nil && ctx.Err() == nil {
			fl.f.log.Warn("polling the feed; the tree stays as it was", "err", err)
		}
		if n := fl.applied.Load(); n != saved && time.Since(lastSave) >= fl.opts.SaveEvery {
			fl.save()
			saved, lastSave = n, time.Now()
		}
	}
}

// save hands a snapshot to FollowOptions.Save; a failure is logged (it
// costs the next mount a full harvest, not this one anything).
func (fl *Follower) save() {
	if fl.opts.Save == nil {
		return
	}
	data, err := fl.Snapshot()
	if err == nil {
		err = fl.opts.Save(data)
	}
	if err != nil {
		fl.f.log.Warn("feed snapshot not saved", "err", err)
	}
}

// Poll harvests the feed once and applies what changed, in atom:updated
// order, then tells Effects.
func (fl *Follower) Poll(ctx context.Context) error {
	start := time.Now()
	err := fl.poll(ctx)
	fl.notePoll(start, err)
	return err
}

func (fl *Follower) poll(ctx context.Context) error {
	fl.polls.Add(1)
	res, err := fl.f.harvester(func(string) { fl.docs.Add(1) }).Harvest(ctx, fl.f.URL, fl.state)
	if err != nil {
		return fmt.Errorf("harvest %s: %w", fl.f.URL, err)
	}
	for _, w := range res.Warnings {
		fl.f.log.Warn("feed: "+w.Msg, "document", w.URL, "line", w.Line, "column", w.Column)
	}
	if !res.NotModified {
		fl.f.keepValidators()
	}
	fl.noteNewest(res.Changes)
	todo := fl.todo(res.Changes)
	if len(todo) == 0 {
		return nil
	}
	lengths, err := fl.learn(ctx, todo)
	if err != nil {
		for _, c := range todo {
			fl.retry[c.ID] = true
		}
		return err
	}
	var effects []catalog.Effect
	for _, c := range todo {
		eff, err := fl.applyRecord(c, lengths)
		effects = append(effects, eff...)
		if err != nil {
			fl.notify(effects)
			return err
		}
		fl.applied.Add(1)
	}
	fl.notify(effects)
	return nil
}

func (fl *Follower) notify(effects []catalog.Effect) {
	if len(effects) > 0 && fl.opts.Effects != nil {
		fl.opts.Effects(effects)
	}
}

// todo is the harvest's changes, then the records to retry that the
// harvest did not change (as they stand in the pool).
func (fl *Follower) todo(changes []atompmh.Change) []atompmh.Change {
	out := changes
	seen := make(map[string]bool, len(changes))
	for _, c := range changes {
		seen[c.ID] = true
	}
	for id := range fl.retry {
		delete(fl.retry, id)
		if seen[id] {
			continue
		}
		if e, ok := fl.state.Pool[id]; ok {
			out = append(out, atompmh.Change{Op: atompmh.OpUpdate, ID: id, Updated: e.Updated, Entry: e})
		}
	}
	return out
}

// sizeOf is what was learned about one representation.
type sizeOf struct {
	length int64
	gone   bool  // 404 or 410: not a file
	err    error // anything else: left out this time, retried
}

// learn learns, in parallel, the sizes the links of the changed entries do
// not give, and leaves out the links rsfs may not fetch from.
func (fl *Follower) learn(ctx context.Context, todo []atompmh.Change) (map[string]sizeOf, error) {
	out := map[string]sizeOf{}
	var ask []string
	foreign := map[string]int{}
	for _, c := range todo {
		if c.Entry == nil {
			continue
		}
		for _, l := range c.Entry.Links {
			if _, ok := out[l.Href]; ok {
				continue
			}
			switch {
			case !fl.f.opts.Client.Allowed(l.Href):
				foreign[originOr(l.Href)]++
				out[l.Href] = sizeOf{err: fetch.ErrNotAllowed}
			case l.Length >= 0:
				out[l.Href] = sizeOf{length: l.Length}
			default:
				out[l.Href] = sizeOf{length: -1}
				ask = append(ask, l.Href)
			}
		}
	}
	fl.warnForeign(foreign)
	var mu sync.Mutex
	err := fetch.HeadEach(ctx, fl.f.opts.Client, ask, headParallel, func(u string) string { return u },
		func(u string, m *fetch.Meta, err error) error {
			s := sizeOf{err: err}
			switch {
			case isGone(err):
				s.gone = true
			case err == nil && m.Length < 0:
				s.err = errors.New("no length in the answer to HEAD or to a one-byte range")
			case err == nil:
				s.length = m.Length
			}
			mu.Lock()
			out[u] = s
			mu.Unlock()
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("learn representation sizes: %w", err)
	}
	return out, nil
}

func isGone(err error) bool {
	var se *fetch.StatusError
	return errors.As(err, &se) && (se.Code == http.StatusNotFound || se.Code == http.StatusGone)
}

// warnForeign warns once per origin about alternate links rsfs may not
// fetch from (the host policy of ResourceSync resources): they are left
// out of the tree until --allow-host allows their origin.
func (fl *Follower) warnForeign(foreign map[string]int) {
	for o, n := range foreign {
		if fl.lastWarnedForeignOrigins[o] {
			continue
		}
		fl.lastWarnedForeignOrigins[o] = true
		fl.f.log.Warn("representations on an origin rsfs may not fetch from are left out; --allow-host allows it",
			"origin", o, "links", n)
	}
}

func isNotAllowed(err error) bool { return errors.Is(err, fetch.ErrNotAllowed) }

// Catalog is the catalog the follower fills.
func (fl *Follower) Catalog() *catalog.Catalog { return fl.cat }
