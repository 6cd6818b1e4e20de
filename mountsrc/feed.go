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
	"rsfs/protocol"
	"rsfs/statedir"
	"sync"
	"time"
)

// SaveFeed writes a feed's state to dir, atomically. With dir "" it does
// nothing.
func SaveFeed(dir string, data []byte) error {
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

// LoadFeed reads a feed's state from dir; nil, nil when there is none.
func LoadFeed(dir string) ([]byte, error) {
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
	fl   *atomfeed.Follower
	dir  string

	mu    sync.Mutex // guards saved
	saved int64      // changes applied at the last save
}

// openFeed harvests the Atom-PMH feed discovery found, or rebuilds it from
// what the state directory remembers and catches up with one poll (a feed
// that cannot be reached is mounted as remembered, with a warning).
func openFeed(ctx context.Context, o Options, found *discover.Found, effects func([]catalog.Effect)) (*feedSource, error) {
	slog.Info("mounting an Atom-PMH feed", "feed", found.Feed.URL)
	feed, err := atomfeed.New(found.Feed.URL, atomfeed.Options{Client: o.Source.Client,
		Parse: atompmh.Options{MaxBytes: o.Source.Parse.MaxBytes}, Discovered: found.Feed})
	if err != nil {
		return nil, err
	}
	fs := &feedSource{feed: feed, dir: o.Dir}
	fo := o.Follow
	fo.Save, fo.SaveEvery = fs.save, SaveEvery
	fs.fl, err = loadFeed(ctx, feed, o.Dir, atomfeed.FollowOptions{Options: fo, Effects: effects})
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
		slog.Warn("feed state not used; harvesting the whole feed", "path", statedir.FeedPath(stateDir), "err", err)
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
