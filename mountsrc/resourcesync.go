package mountsrc

import (
	"context"
	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/changes"
	"rsfs/copies"
	"rsfs/fetch"
	"rsfs/follow"
	"rsfs/protocol"
	"sync"
)

// resourceSync is a ResourceSync Source opened by Open.
type resourceSync struct {
	l      *Loaded
	dir    string
	f      *changes.Follower // made by follow
	reader *copies.Reader

	mu    sync.Mutex // guards saved; saves run on the follower's loop (Source.Run)
	saved changes.FollowStats
}

func newResourceSync(l *Loaded, dir string) *resourceSync {
	r := &resourceSync{l: l, dir: dir}
	// A reader finds a file changed only once the file system is mounted,
	// after follow.
	r.reader = copies.NewReader(l.Source.Client(), copies.ReaderOptions{Members: l.Source,
		Changed: func(res *catalog.Resource) { r.f.PollSoon(res.Set) }})
	return r
}

func (r *resourceSync) follow(effects func([]catalog.Effect), o follow.Options) protocol.Follower {
	o.Save, o.SaveEvery = r.save, SaveEvery
	r.f = changes.New(r.l.Source, r.l.Catalog, changes.FollowOptions{Options: o, Effects: effects}, r.l.Positions)
	r.saved = r.f.Stats()
	return r.f
}

func (r *resourceSync) catchUp(ctx context.Context) error { return r.l.CatchUp(ctx, r.f) }

// saveFirst remembers a catalog fresh from the Resource Lists at once.
func (r *resourceSync) saveFirst() {
	if r.l.Fresh() {
		r.save(true)
	}
}

func (r *resourceSync) Protocol() string                            { return protocol.ResourceSync }
func (r *resourceSync) Origin() string                              { return r.l.Source.Origin }
func (r *resourceSync) Client() *fetch.Client                       { return r.l.Source.Client() }
func (r *resourceSync) Catalog() *catalog.Catalog                   { return r.l.Catalog }
func (r *resourceSync) Fetcher(res *catalog.Resource) cache.Fetcher { return r.reader.Open(res) }
func (r *resourceSync) Batch() func(context.Context, []*catalog.Resource) [][]byte {
	return r.l.Source.ReadDumpBatch
}

// save writes the snapshot, when final or when changes were applied or
// the Source reloaded since the last one.
func (r *resourceSync) save(final bool) {
	st := r.f.Stats()
	r.mu.Lock()
	changed := st.Applied != r.saved.Applied || st.Reloads != r.saved.Reloads
	r.saved = st
	r.mu.Unlock()
	if final || changed {
		saveSnapshotLogged(r.dir, r.l.Catalog, r.f)
	}
}
