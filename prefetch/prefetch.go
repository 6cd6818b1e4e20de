package prefetch

import (
	"context"
	"log/slog"
	"sync/atomic"

	"rsfs/cache"
	"rsfs/catalog"
)

// Config is what a Prefetcher reads and fetches through.
type Config struct {
	Catalog *catalog.Catalog
	Cache   *cache.Cache
	// Fetcher returns where a resource's bytes come from (package copies).
	Fetcher func(r *catalog.Resource) cache.Fetcher
	// Batch, if set, reads several small resources at once where the
	// Source can (adjacent dump members); it returns nil for the others.
	Batch func(ctx context.Context, rs []*catalog.Resource) [][]byte
	// Length, if set, learns the length of a resource whose list gave
	// none (a HEAD through the Source's limits), lengths.go.
	Length func(ctx context.Context, r *catalog.Resource) (int64, error)
	// Network, if set, is the Source's measured round trip and bandwidth,
	// which size the warm window (window.go); else it has fixed bounds.
	Network NetworkFunc
	// Warmed, if set, is given each small file a window warmed, but its
	// refill point, once its bytes are verified: the version (Attr.Gen) of
	// catalog node id they are. Package fs hands them to the kernel's page
	// cache, so a reader finds them there without a READ; the refill point
	// is left to be read, so that the walk is still seen (warm.go). It
	// must return at once.
	Warmed func(id catalog.NodeID, gen uint64, data []byte)
	Logger *slog.Logger
}

// Prefetcher fetches ahead of the readers of one mount: the windows of
// small files a walk reaches next, warm jobs, and the lengths a list did
// not give.
type Prefetcher struct {
	cfg Config
	log *slog.Logger
	// closing ends the background work when the mount shuts down.
	closing  context.Context
	warm     warmer
	jobs     jobs
	learning learning
	// lengthsLearned counts the lengths learned (lengths.go).
	lengthsLearned atomic.Int64
}

// New returns a Prefetcher over cfg whose background work ends with
// closing.
func New(cfg Config, closing context.Context) *Prefetcher {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Prefetcher{cfg: cfg, log: log, closing: closing}
}

// opContext is ctx, also cancelled when the mount shuts down.
func (p *Prefetcher) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(p.closing, cancel)
	return ctx, func() { stop(); cancel() }
}

// ContentOf is what the cache reads and verifies of a file version: the
// one mapping, for a reader's reads (package fs) and for prefetch's fills.
func ContentOf(v catalog.FileVersion) cache.Content {
	r := v.Resource
	return cache.Content{ID: v.ContentID, Name: r.URI, Size: r.Length, Hashes: r.Hashes}
}
