package remember

import (
	"context"
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
	found, err := discover.At(ctx, o.URL, o.Source)
	if err == nil && found.Protocol() == protocol.AtomPMH {
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
