package remember

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"rsfs/atomfeed"
	"rsfs/atompmh"
	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/changes"
	"rsfs/copies"
	"rsfs/fetch"
	"rsfs/follow"
	"rsfs/protocol"
	"rsfs/source"
)

// SaveEvery is how often a mount saves what it remembers while changes
// are applied (and once more at unmount).
const SaveEvery = 2 * time.Minute

// Options configure Open.
type Options struct {
	// Dir is the Source's state directory; "" remembers nothing.
	Dir string
	// URL is the URL the user gave.
	URL string
	// Source configures discovery and loading; its Client and Parse limits
	// serve an Atom-PMH feed too.
	Source source.Options
	// Follow says when the follower polls; Open sets its Save.
	Follow follow.Options
	// Effects is told of every change applied once the tree is mounted,
	// so the file system can tell the kernel; it must accept being called
	// before the mount is made (and drop the effects then).
	Effects func([]catalog.Effect)
	// Progress sees a ResourceSync Source's Resource Lists being read.
	Progress func(source.Progress)
}

// Open discovers what is at the URL and opens it as the protocol it speaks,
// from what the state directory remembers of it or from the Source itself,
// as the package documentation says. The Source it returns has its
// follower made; a restored ResourceSync catalog still needs CatchUp.
func Open(ctx context.Context, o Options) (protocol.Source, error) {
	found, err := source.Discover(ctx, o.URL, o.Source)
	if err == nil && found.Protocol == protocol.AtomPMH {
		return openFeed(ctx, o, found)
	}
	var src *source.Source
	if found != nil {
		src = found.Source
	}
	l, err := load(ctx, o.Dir, src, err, o.Source, o.Progress)
	if err != nil {
		return nil, err
	}
	return newResourceSync(l, o), nil
}

// resourceSync is a ResourceSync Source opened by Open.
type resourceSync struct {
	l      *Loaded
	dir    string
	f      *changes.Follower
	reader *copies.Reader

	mu    sync.Mutex // guards saved; saves run on the follower's loop and at load
	saved changes.FollowStats
}

func newResourceSync(l *Loaded, o Options) *resourceSync {
	r := &resourceSync{l: l, dir: o.Dir}
	fo := o.Follow
	fo.Save, fo.SaveEvery = r.save, SaveEvery
	r.f = changes.New(l.Source, l.Catalog, changes.FollowOptions{Options: fo, Effects: o.Effects}, l.Positions)
	r.saved = r.f.Stats()
	r.reader = copies.NewReader(l.Source.Client(), copies.ReaderOptions{Members: l.Source,
		Changed: func(res *catalog.Resource) { r.f.PollSoon(res.Set) }})
	return r
}

func (r *resourceSync) Protocol() string          { return protocol.ResourceSync }
func (r *resourceSync) Origin() string            { return r.l.Source.Origin }
func (r *resourceSync) Client() *fetch.Client     { return r.l.Source.Client() }
func (r *resourceSync) Catalog() *catalog.Catalog { return r.l.Catalog }
func (r *resourceSync) Follower() protocol.Follower {
	return r.f
}
func (r *resourceSync) Fetcher(res *catalog.Resource) cache.Fetcher { return r.reader.Open(res) }
func (r *resourceSync) Batch() func(context.Context, []*catalog.Resource) [][]byte {
	return r.l.Source.ReadDumpBatch
}
func (r *resourceSync) CatchUp(ctx context.Context) error { return r.l.CatchUp(ctx, r.f) }
func (r *resourceSync) Fresh() bool                       { return r.l.Fresh() }
func (r *resourceSync) Save()                             { r.save(true) }

// save writes the snapshot, when final or when changes were applied or
// the Source reloaded since the last one.
func (r *resourceSync) save(final bool) {
	st := r.f.Stats()
	r.mu.Lock()
	changed := st.Applied != r.saved.Applied || st.Reloads != r.saved.Reloads
	r.saved = st
	r.mu.Unlock()
	if final || changed {
		SaveLogged(r.dir, r.l.Catalog, r.f)
	}
}

// feedSource is an Atom-PMH feed opened by Open.
type feedSource struct {
	feed *atomfeed.Feed
	fl   *atomfeed.Follower
	dir  string

	mu    sync.Mutex // guards saved
	saved int64      // changes applied at the last save
}

// openFeed harvests the Atom-PMH feed discovery found, or rebuilds it from
// what the state directory remembers and catches up with one poll (a feed
// that cannot be reached is mounted as remembered, with a warning).
func openFeed(ctx context.Context, o Options, found *source.Found) (*feedSource, error) {
	slog.Info("mounting an Atom-PMH feed", "feed", found.Feed.URL)
	feed, err := atomfeed.New(found.Feed.URL, atomfeed.Options{Client: o.Source.Client,
		Parse: atompmh.Options{MaxBytes: o.Source.Parse.MaxBytes}, Discovered: found.Feed})
	if err != nil {
		return nil, err
	}
	fs := &feedSource{feed: feed, dir: o.Dir}
	fo := o.Follow
	fo.Save, fo.SaveEvery = fs.save, SaveEvery
	fs.fl, err = loadFeed(ctx, feed, o.Dir, atomfeed.FollowOptions{Options: fo, Effects: o.Effects})
	if err != nil {
		return nil, err
	}
	fs.saved = fs.fl.Stats().Applied
	return fs, nil
}

func (f *feedSource) Protocol() string                                           { return protocol.AtomPMH }
func (f *feedSource) Origin() string                                             { return f.feed.Origin }
func (f *feedSource) Client() *fetch.Client                                      { return f.feed.Client() }
func (f *feedSource) Catalog() *catalog.Catalog                                  { return f.fl.Catalog() }
func (f *feedSource) Follower() protocol.Follower                                { return f.fl }
func (f *feedSource) Fetcher(res *catalog.Resource) cache.Fetcher                { return f.feed.Fetcher(res) }
func (f *feedSource) Batch() func(context.Context, []*catalog.Resource) [][]byte { return nil }
func (f *feedSource) CatchUp(context.Context) error                              { return nil }   // Open caught up
func (f *feedSource) Fresh() bool                                                { return false } // Open saved a fresh harvest
func (f *feedSource) Save()                                                      { f.save(true) }

// save writes the feed's state, when final or when changes were applied
// since the last save. It runs on the follower's loop (or after it), never
// beside a poll.
func (f *feedSource) save(final bool) {
	n := f.fl.Stats().Applied
	f.mu.Lock()
	changed := n != f.saved
	f.saved = n
	f.mu.Unlock()
	if !final && !changed {
		return
	}
	data, err := f.fl.Snapshot()
	if err == nil {
		err = SaveFeed(f.dir, data)
	}
	if err != nil {
		slog.Warn("feed state not saved", "err", fmt.Errorf("%s: %w", f.feed.URL, err))
	}
}

// loadFeed rebuilds the feed's tree from its remembered state and catches
// up with one poll (a feed that cannot be reached is mounted as
// remembered, with a warning), or harvests it whole and remembers it.
func loadFeed(ctx context.Context, feed *atomfeed.Feed, stateDir string, opts atomfeed.FollowOptions) (*atomfeed.Follower, error) {
	data, err := LoadFeed(stateDir)
	if err != nil {
		slog.Warn("feed state not used", "err", err)
	}
	if data != nil {
		start := time.Now()
		fl, err := feed.Restore(data, opts)
		if err == nil {
			if err := fl.Poll(ctx); err != nil {
				slog.Warn("the feed cannot be read; mounting what was remembered: cached files read, others fail with EIO", "err", err)
			}
			slog.Info("feed remembered and caught up", "files", fl.Catalog().Len(), "changes", fl.Stats().Applied,
				"took", time.Since(start).Round(time.Millisecond))
			return fl, nil
		}
		slog.Warn("feed state not used; harvesting the whole feed", "path", FeedPath(stateDir), "err", err)
	}
	fl := feed.NewFollower(feed.NewCatalog(), opts)
	if err := fl.Load(ctx); err != nil {
		return nil, err
	}
	if data, err := fl.Snapshot(); err != nil {
		slog.Warn("feed state not saved", "err", err)
	} else if err := SaveFeed(stateDir, data); err != nil {
		slog.Warn("feed state not saved", "err", err)
	}
	return fl, nil
}
