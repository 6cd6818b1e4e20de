package atomfeed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"rsfs/atompmh"
	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/follow"
)

// FollowOptions configure a Follower: when it polls (follow.Options; an
// Interval of 0 disables following), and whom it tells of the changes.
// follow.Options.Save, if set, is called by Run at most every SaveEvery
// and when Run ends: it may call Snapshot, which never runs beside a poll.
type FollowOptions struct {
	follow.Options
	// Effects is told what each harvest changed in the catalog, for the
	// kernel (a mount gives fs.FS.Notify, which drops them until the file
	// system is mounted); nil tells no one.
	Effects func([]catalog.Effect)
}

// Stats count what a Follower did.
type Stats struct {
	Polls     int64 // harvests started
	Documents int64 // feed documents fetched (304s included)
	Applied   int64 // record changes applied to the catalog
}

// Tree is a feed's tree and what its harvests learned: the catalog, the
// harvest state, and the files each record shows. Harvest (a whole
// harvest) and Restore (from a Snapshot) make one before anything follows
// it; Follow then makes its follower.
type Tree struct {
	f     *Feed
	cat   *catalog.Catalog
	state *atompmh.State

	held  map[string][]string // record id → the URIs it has in the catalog
	owner map[string]string   // URI → the record holding it
	sizes map[string]int64    // URI → the size shown, for a snapshot
	// retry are records with a representation whose size could not be
	// learned for a reason other than 404 or 410: tried again each poll.
	retry map[string]bool

	docs, applied            atomic.Int64
	lastWarnedForeignOrigins map[string]bool

	mu sync.Mutex // guards st
	st followState
}

// Follower keeps a catalog equal to the feed's pool: Poll (and Run, at an
// interval) applies the changes since the harvest that made its Tree,
// through the follow.Loop it embeds, which runs one poll at a time, and
// tells Effects of them.
type Follower struct {
	*follow.Loop
	*Tree
	// effects is FollowOptions.Effects: told of each harvest's changes.
	effects func([]catalog.Effect)
}

func (f *Feed) newTree(cat *catalog.Catalog) *Tree {
	return &Tree{f: f, cat: cat, state: atompmh.NewState(),
		held: map[string][]string{}, owner: map[string]string{}, sizes: map[string]int64{}, retry: map[string]bool{},
		lastWarnedForeignOrigins: map[string]bool{}}
}

// Harvest harvests the whole feed into a new catalog, sealed, with nothing
// told of what it adds: nothing follows it yet.
func (f *Feed) Harvest(ctx context.Context) (*Tree, error) {
	t := f.newTree(f.NewCatalog())
	start := time.Now()
	if err := t.harvest(ctx, nil); err != nil {
		return nil, err
	}
	return t, t.loaded(start)
}

// NewFollower returns a follower filling cat (from NewCatalog), empty
// until Load.
func (f *Feed) NewFollower(cat *catalog.Catalog, opts FollowOptions) *Follower {
	return f.newTree(cat).Follow(opts)
}

// Follow returns the follower of the tree, which tells opts.Effects of the
// changes it applies. A tree has one follower: call Follow once.
func (t *Tree) Follow(opts FollowOptions) *Follower {
	fl := &Follower{Tree: t, effects: opts.Effects}
	if opts.Log == nil {
		opts.Log = t.f.log
	}
	fl.Loop = follow.New(fl.harvest, opts.Options)
	t.f.follower = fl
	return fl
}

// Stats returns the counters.
func (fl *Follower) Stats() Stats {
	return Stats{Polls: fl.Polling().Polls, Documents: fl.docs.Load(), Applied: fl.applied.Load()}
}

// Load harvests the whole feed into the catalog, through the loop, and
// seals it.
func (fl *Follower) Load(ctx context.Context) error {
	start := time.Now()
	if err := fl.Poll(ctx); err != nil {
		return err
	}
	return fl.loaded(start)
}

// loaded marks what was applied so far as the load, not changes, and seals
// the catalog.
func (t *Tree) loaded(start time.Time) error {
	t.noteLoaded()
	if err := t.cat.Seal(); err != nil {
		return fmt.Errorf("load %s: %w", t.f.URL, err)
	}
	t.f.log.Info("feed loaded", "files", t.cat.Len(), "records", len(t.state.Pool),
		"documents", t.docs.Load(), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// harvest is the Follower's follow.PollFunc: it harvests the feed once and
// applies what changed, in atom:updated order, then tells Effects. The
// feed is one set: an early poll is a whole one.
func (fl *Follower) harvest(ctx context.Context, _ []uint16) error {
	return fl.Tree.harvest(ctx, fl.effects)
}

// harvest harvests the feed once, applies what changed, tells effects (if
// set), and notes how it ended for Status.
func (t *Tree) harvest(ctx context.Context, effects func([]catalog.Effect)) error {
	start := time.Now()
	err := t.poll(ctx, effects)
	t.noteHarvest(start, err)
	return err
}

func (fl *Tree) poll(ctx context.Context, tell func([]catalog.Effect)) error {
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
			notify(tell, effects)
			return err
		}
		fl.applied.Add(1)
	}
	notify(tell, effects)
	return nil
}

func notify(tell func([]catalog.Effect), effects []catalog.Effect) {
	if len(effects) > 0 && tell != nil {
		tell(effects)
	}
}

// todo is the harvest's changes, then the records to retry that the
// harvest did not change (as they stand in the pool).
func (fl *Tree) todo(changes []atompmh.Change) []atompmh.Change {
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
func (fl *Tree) learn(ctx context.Context, todo []atompmh.Change) (map[string]sizeOf, error) {
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
	err := fetch.HeadEach(ctx, fl.f.opts.Client, ask, fetch.HeadParallel, func(u string) string { return u },
		func(u string, m *fetch.Meta, err error) error {
			s := sizeOf{err: err}
			switch {
			case fetch.IsGone(err):
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

// warnForeign warns once per origin about alternate links rsfs may not
// fetch from (the host policy of ResourceSync resources): they are left
// out of the tree until the host policy allows their origin (the client's
// advice says how).
func (fl *Tree) warnForeign(foreign map[string]int) {
	for o, n := range foreign {
		if fl.lastWarnedForeignOrigins[o] {
			continue
		}
		fl.lastWarnedForeignOrigins[o] = true
		msg := "representations on an origin rsfs may not fetch from are left out"
		if advice := fl.f.opts.Client.AllowAdvice(o); advice != "" {
			msg += "; " + advice
		}
		fl.f.log.Warn(msg, "origin", o, "links", n)
	}
}

func isNotAllowed(err error) bool { return errors.Is(err, fetch.ErrNotAllowed) }

// Catalog is the tree's catalog, which its follower keeps up to date.
func (fl *Tree) Catalog() *catalog.Catalog { return fl.cat }
