package mountsrc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"rsfs/atomfeed"
	"rsfs/atomicfile"
	"rsfs/atompmh"
	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/discover"
	"rsfs/fetch"
	"rsfs/follow"
	"rsfs/protocol"
	"rsfs/statedir"
	"sync"
	"time"
)

// saveFeed writes a feed's state to dir, atomically. With dir "" it does
// nothing.
func saveFeed(dir string, data []byte) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("feed state: %w", err)
	}
	if err := atomicfile.WriteBytes(statedir.FeedPath(dir), data); err != nil {
		return fmt.Errorf("feed state: %w", err)
	}
	return nil
}

// loadFeedState reads a feed's state from dir; nil, nil when there is none.
func loadFeedState(dir string) ([]byte, error) {
	if dir == "" {
		return nil, nil
	}
	data, err := os.ReadFile(statedir.FeedPath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("feed state: %w", err)
	}
	return data, nil
}

// feedSource is an Atom-PMH feed opened by Open.
type feedSource struct {
	feed *atomfeed.Feed
	tree *atomfeed.Tree
	fl   *atomfeed.Follower // made by follow
	dir  string
	// remembered: the tree was restored from the state directory, and
	// catchUp polls once.
	remembered bool

	mu    sync.Mutex // guards saved
	saved int64      // changes applied at the last save
}

// openFeed rebuilds the Atom-PMH feed discovery found from what the state
// directory remembers (catchUp then polls once), or harvests it whole and
// remembers it.
func openFeed(ctx context.Context, o Options, found *discover.Found) (*feedSource, error) {
	slog.Info("mounting an Atom-PMH feed", "feed", found.Feed.URL)
	feed, err := newFeed(o, found.Feed.URL, found.Feed)
	if err != nil {
		return nil, err
	}
	fs := &feedSource{feed: feed, dir: o.Dir}
	if fs.tree = restoreFeed(feed, o.Dir, readFeedState(o.Dir)); fs.tree != nil {
		fs.remembered = true
		return fs, nil
	}
	if fs.tree, err = harvestFeed(ctx, feed, o.Dir); err != nil {
		return nil, err
	}
	return fs, nil
}

// restoreUnreachableFeed rebuilds, with no request, the feed the state
// directory remembers when discovery could not reach the URL (discoverErr):
// catchUp then polls once, and warns that the feed cannot be read. It
// returns nil when no feed state is remembered, when it cannot be used
// (logged), or when a ResourceSync snapshot was saved after it: the state
// saved last is of what the URL served last, so a URL that moved from one
// protocol to the other mounts what it served at the last unmount.
func restoreUnreachableFeed(o Options, discoverErr error) *feedSource {
	data := readFeedState(o.Dir)
	if data == nil || savedLater(statedir.SnapshotPath(o.Dir), statedir.FeedPath(o.Dir)) {
		return nil
	}
	url, err := atomfeed.SavedURL(data)
	var feed *atomfeed.Feed
	if err == nil {
		feed, err = newFeed(o, url, nil)
	}
	if err != nil {
		slog.Warn("feed state not used", "path", statedir.FeedPath(o.Dir), "err", err)
		return nil
	}
	tree := restoreFeed(feed, o.Dir, data)
	if tree == nil {
		return nil
	}
	slog.Warn("the feed is unreachable; mounting what was remembered: cached files read, others fail with EIO until it is back",
		"feed", url, "err", discoverErr)
	return &feedSource{feed: feed, tree: tree, dir: o.Dir, remembered: true}
}

// savedLater reports whether the file at path a was modified after the one
// at b; false when a is absent.
func savedLater(a, b string) bool {
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}
	ib, err := os.Stat(b)
	return err != nil || ia.ModTime().After(ib.ModTime())
}

func (f *feedSource) Protocol() string                                           { return protocol.AtomPMH }
func (f *feedSource) Origin() string                                             { return f.feed.Origin }
func (f *feedSource) Client() *fetch.Client                                      { return f.feed.Client() }
func (f *feedSource) Catalog() *catalog.Catalog                                  { return f.tree.Catalog() }
func (f *feedSource) Fetcher(res *catalog.Resource) cache.Fetcher                { return f.feed.Fetcher(res) }
func (f *feedSource) Batch() func(context.Context, []*catalog.Resource) [][]byte { return nil }

func (f *feedSource) follow(effects func([]catalog.Effect), o follow.Options) protocol.Follower {
	o.Save, o.SaveEvery = f.save, SaveEvery
	f.fl = f.tree.Follow(atomfeed.FollowOptions{Options: o, Effects: effects})
	f.saved = f.fl.Stats().Applied
	return f.fl
}

// catchUp polls a remembered feed once (a feed that cannot be read is
// mounted as remembered, with a warning). A feed harvested whole is up to
// date, and was remembered by Open.
func (f *feedSource) catchUp(ctx context.Context) error {
	if !f.remembered {
		return nil
	}
	start := time.Now()
	if err := f.fl.Poll(ctx); err != nil {
		slog.Warn("the feed cannot be read; mounting what was remembered: cached files read, others fail with EIO", "err", err)
	}
	slog.Info("feed remembered and caught up", "files", f.tree.Catalog().Len(), "changes", f.fl.Stats().Applied,
		"took", time.Since(start).Round(time.Millisecond))
	return nil
}

// saveFirst does nothing: Open remembered a fresh harvest at once.
func (f *feedSource) saveFirst() {}

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
	data, err := f.tree.Snapshot()
	if err == nil {
		err = saveFeed(f.dir, data)
	}
	if err != nil {
		slog.Warn("feed state not saved", "err", fmt.Errorf("%s: %w", f.feed.URL, err))
	}
}

// newFeed is the feed at url as a mount reads it, with the client and
// parse limit of o; discovered, if not nil, is the subscription document
// discovery read.
func newFeed(o Options, url string, discovered *fetch.Document) (*atomfeed.Feed, error) {
	return atomfeed.New(url, atomfeed.Options{Client: o.Source.Client,
		Parse: atompmh.Options{MaxBytes: o.Source.Parse.MaxBytes}, Discovered: discovered})
}

// readFeedState is the feed state the state directory remembers; nil when
// there is none or it cannot be read (logged).
func readFeedState(stateDir string) []byte {
	data, err := loadFeedState(stateDir)
	if err != nil {
		slog.Warn("feed state not used", "err", err)
	}
	return data
}

// restoreFeed rebuilds the feed's tree from its remembered state data,
// with no request; nil when there is none or it cannot be used (logged).
func restoreFeed(feed *atomfeed.Feed, stateDir string, data []byte) *atomfeed.Tree {
	if data == nil {
		return nil
	}
	tree, err := feed.Restore(data)
	if err != nil {
		slog.Warn("feed state not used", "path", statedir.FeedPath(stateDir), "err", err)
		return nil
	}
	return tree
}

// harvestFeed harvests the whole feed and remembers it.
func harvestFeed(ctx context.Context, feed *atomfeed.Feed, stateDir string) (*atomfeed.Tree, error) {
	tree, err := feed.Harvest(ctx)
	if err != nil {
		return nil, err
	}
	if data, err := tree.Snapshot(); err != nil {
		slog.Warn("feed state not saved", "err", err)
	} else if err := saveFeed(stateDir, data); err != nil {
		slog.Warn("feed state not saved", "err", err)
	}
	return tree, nil
}
