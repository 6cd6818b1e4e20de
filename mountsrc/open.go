package mountsrc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/discover"
	"rsfs/fetch"
	"rsfs/follow"
	"rsfs/protocol"
	"rsfs/source"
	"rsfs/status"
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
	// Offline: open what the state directory remembers, asking the
	// Source nothing (rsfs mount --offline).
	Offline bool
	// Source configures discovery and loading; its Client and Parse limits
	// serve an Atom-PMH feed too.
	Source source.Options
	// Progress sees a ResourceSync Source's Resource Lists being read.
	Progress func(source.Progress)
}

// Source is a Source opened by Open, then followed (Follow): the
// protocol's Source the mount serves, and the remembering policy that goes
// with it (catching up before the mount is ready, saving while it runs).
// The protocol knows nothing of remembering.
type Source struct {
	opened
	// follower is made by Follow; nil before.
	follower protocol.Follower
	// unreachable is why discovery failed, when Open mounted what was
	// remembered instead; nil when the Source answered.
	unreachable error
}

var _ protocol.Source = (*Source)(nil)

// opened is a Source of either protocol as Open leaves it: its catalog
// loaded or restored, and nothing following it yet.
type opened interface {
	Protocol() string
	Origin() string
	Client() *fetch.Client
	Catalog() *catalog.Catalog
	Fetcher(res *catalog.Resource) cache.Fetcher
	Batch() func(context.Context, []*catalog.Resource) [][]byte
	// follow makes the follower, which polls as o says (its Save set
	// here) and tells effects of the changes it applies.
	follow(effects func([]catalog.Effect), o follow.Options) protocol.Follower
	// catchUp brings the catalog up to date through the follower before
	// the mount is ready.
	catchUp(ctx context.Context) error
	// saveFirst remembers a catalog fresh from the Source, if it is one:
	// Run calls it before the follower's loop starts.
	saveFirst()
}

// Open discovers what is at the URL and opens it as the protocol it speaks,
// from what the state directory remembers of it or from the Source itself,
// as the package documentation says; when the URL cannot be reached, as
// the protocol of the state saved last. Nothing follows the Source it
// returns yet: Follow makes its follower, once the file system the
// follower's effects reach exists, and CatchUp then brings it up to date
// before the mount is ready.
func Open(ctx context.Context, o Options) (*Source, error) {
	if o.Offline {
		return openOffline(o)
	}
	found, err := discover.At(ctx, o.URL, o.Source)
	if err == nil && found.Protocol() == protocol.AtomPMH {
		f, err := openFeed(ctx, o, found)
		if err != nil {
			return nil, err
		}
		return &Source{opened: f}, nil
	}
	if err != nil {
		if f := restoreUnreachableFeed(o, err); f != nil {
			return &Source{opened: f, unreachable: err}, nil
		}
	}
	var src *source.Source
	if found != nil {
		src = found.Source
	}
	discoverErr := err
	l, err := load(ctx, o.Dir, src, err, o.Source, o.Progress)
	if err != nil {
		return nil, err
	}
	return &Source{opened: newResourceSync(l, o.Dir), unreachable: discoverErr}, nil
}

// Unreachable is why the Source could not be reached when Open mounted
// what the state directory remembered instead; nil when it answered.
func (s *Source) Unreachable() error { return s.unreachable }

// Follow makes the Source's follower, which polls as o says and tells
// effects (fs.FS.Notify: the file system built over the catalog, which
// tells the kernel once it is mounted and drops them before) of every
// change it applies, from CatchUp on. Call it once, before CatchUp and
// Run.
func (s *Source) Follow(effects func([]catalog.Effect), o follow.Options) protocol.Follower {
	s.follower = s.follow(effects, o)
	return s.follower
}

// Follower is the follower Follow made; nil before.
func (s *Source) Follower() protocol.Follower { return s.follower }

// Status is the follower's status, for `rsfs status` and metrics, which
// are built before it (the file system serves the status, and the
// follower tells the file system of its changes): nothing has been
// followed before Follow. Nothing reads it then: the mount serves the
// status and metrics after Follow.
func (s *Source) Status() status.Follow {
	if s.follower == nil {
		return status.Follow{}
	}
	return s.follower.Status()
}

// CatchUp brings the catalog up to date, through the follower, before the
// mount reports ready: a ResourceSync catalog through the Change Lists (or
// a reload), a restored one from its positions, a fresh one from the
// Resource Lists' time; a remembered feed with one poll (a feed that
// cannot be read, or that Open restored because discovery could not reach
// it, is mounted as remembered, with a warning). It does nothing for a
// feed harvested whole by Open, nor for a ResourceSync Source that could
// not be reached.
func (s *Source) CatchUp(ctx context.Context) error {
	return s.catchUp(ctx)
}

// Run follows the Source until ctx ends, on the follower's loop, which
// saves every SaveEvery and once more as it ends. A catalog fresh from the
// Source (already caught up by CatchUp) is remembered first, on the same
// goroutine, before the loop's first poll: a snapshot is never taken
// beside a poll, and the mount, which waits for Run at unmount, waits for
// that save too.
func (s *Source) Run(ctx context.Context) {
	s.saveFirst()
	s.follower.Run(ctx)
}

// ErrNothingRemembered: a Source opened Offline has nothing remembered to
// mount.
var ErrNothingRemembered = errors.New("nothing is remembered")

// openOffline opens what the state directory remembers of o.URL without a
// request: the feed state or the snapshot, whichever was saved last.
func openOffline(o Options) (*Source, error) {
	notAsked := offlineErr(o)
	if f := restoreUnreachableFeed(o, notAsked); f != nil {
		return &Source{opened: f, unreachable: notAsked}, nil
	}
	if readSnapshot(o.Dir) == nil {
		return nil, fmt.Errorf("%w of %s (in %s): mount it once while it answers", ErrNothingRemembered, o.URL, o.Dir)
	}
	l, err := load(context.Background(), o.Dir, nil, notAsked, o.Source, o.Progress)
	if err != nil {
		return nil, err
	}
	return &Source{opened: newResourceSync(l, o.Dir), unreachable: notAsked}, nil
}

// offlineErr is why a Source opened Offline was not asked, in its client's
// words ("mounted --offline: the Source is not asked").
func offlineErr(o Options) error {
	if c := o.Source.Client; c != nil {
		if st := c.Offline(); st.Err != "" {
			return errors.New(st.Err)
		}
	}
	return errors.New("offline: the Source is not asked")
}
