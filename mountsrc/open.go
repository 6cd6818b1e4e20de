package mountsrc

import (
	"context"
	"sync/atomic"
	"time"

	"rsfs/catalog"
	"rsfs/discover"
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
	// Follow says when the follower polls; Open sets its Save. The
	// effects of the changes it applies go to the file system Attach
	// names.
	Follow follow.Options
	// Progress sees a ResourceSync Source's Resource Lists being read.
	Progress func(source.Progress)
}

// Source is a Source opened by Open: the protocol's Source the mount
// serves, and the remembering policy that goes with it (catching up before
// the mount is ready, saving while it runs). protocol.Source knows nothing
// of remembering.
type Source struct {
	protocol.Source
	// catchUp, if set, brings a ResourceSync catalog up to date (Loaded.CatchUp);
	// an Atom-PMH feed caught up in Open.
	catchUp func(ctx context.Context) error
	// saveFirst, if set, remembers a catalog fresh from the Source at once:
	// Run calls it before the follower's loop starts.
	saveFirst func()
	effects   effectSink
}

// effectSink takes the effects of the changes the follower applies, from
// its making in Open on: it drops them until Attach names where they go
// (a feed's catch-up in Open applies changes before there is a file
// system; the kernel holds nothing of the tree then).
type effectSink struct {
	to atomic.Pointer[func([]catalog.Effect)]
}

func (e *effectSink) send(effects []catalog.Effect) {
	if to := e.to.Load(); to != nil {
		(*to)(effects)
	}
}

// Attach sends the effects of every change applied from now on to notify:
// the file system built over the catalog (fs.FS.Notify), which tells the
// kernel once it is mounted and drops them before.
func (s *Source) Attach(notify func([]catalog.Effect)) {
	s.effects.to.Store(&notify)
}

// Open discovers what is at the URL and opens it as the protocol it speaks,
// from what the state directory remembers of it or from the Source itself,
// as the package documentation says. The Source it returns has its
// follower made; a ResourceSync catalog, fresh or restored, still needs
// CatchUp before the mount is ready.
func Open(ctx context.Context, o Options) (*Source, error) {
	found, err := discover.At(ctx, o.URL, o.Source)
	if err == nil && found.Protocol() == protocol.AtomPMH {
		s := &Source{}
		f, err := openFeed(ctx, o, found, s.effects.send)
		if err != nil {
			return nil, err
		}
		s.Source = f // Open caught up, and saved a fresh harvest
		return s, nil
	}
	var src *source.Source
	if found != nil {
		src = found.Source
	}
	l, err := load(ctx, o.Dir, src, err, o.Source, o.Progress)
	if err != nil {
		return nil, err
	}
	s := &Source{}
	r := newResourceSync(l, o, s.effects.send)
	s.Source, s.catchUp = r, func(ctx context.Context) error { return l.CatchUp(ctx, r.f) }
	if l.Fresh() {
		s.saveFirst = func() { r.save(true) }
	}
	return s, nil
}

// CatchUp brings the catalog up to date before the mount reports ready:
// a restored ResourceSync catalog through the Change Lists (or a reload),
// a fresh one from the Resource Lists' time; it does nothing for a feed,
// which Open caught up, nor for a Source that could not be reached.
func (s *Source) CatchUp(ctx context.Context) error {
	if s.catchUp == nil {
		return nil
	}
	return s.catchUp(ctx)
}

// Run follows the Source until ctx ends, on the follower's loop, which
// saves every SaveEvery and once more as it ends. A catalog fresh from the
// Source is remembered first, on the same goroutine, before the first
// poll: a snapshot is never taken beside a poll, and the mount, which
// waits for Run at unmount, waits for that save too.
func (s *Source) Run(ctx context.Context) {
	if s.saveFirst != nil {
		s.saveFirst()
	}
	s.Follower().Run(ctx)
}
