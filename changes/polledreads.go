package changes

import (
	"context"

	"rsfs/fetch"
	"rsfs/resourcesync"
	"rsfs/source"
)

// polledReads reads a poll's change documents by conditional GET, with
// the validators of their last read, and remembers what each held (an
// index's children, a list's coverage) for the polls at which it answers
// 304. The new validators are kept in vals, for once the changes are
// applied. A push's reads (condition false) are whole, and keep nothing
// but an index's children.
type polledReads struct {
	f         *Follower
	condition bool
	vals      map[string]*fetch.Validators
}

func (p *polledReads) get(ctx context.Context, u string) (*resourcesync.Document, error) {
	f := p.f
	var v *fetch.Validators
	f.mu.Lock()
	if p.condition {
		v = f.validators[u]
	}
	f.docs++
	f.mu.Unlock()
	doc, vals, err := f.s.GetDocIfChanged(ctx, u, v)
	if err != nil || doc == nil {
		return nil, err
	}
	if p.condition {
		p.vals[u] = vals
	}
	return doc, nil
}

func (p *polledReads) remembered(u string) ([]resourcesync.Entry, bool, coverage) {
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	children, index := p.f.indexes[u]
	return children, index, p.f.coverage[u]
}

// read remembers an index's children (a notification may name one of
// them: knownChangeDoc) and, at a poll, what a list covers: a rotation is
// never a gap.
func (p *polledReads) read(u string, children []resourcesync.Entry, index bool, cov coverage) {
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	switch {
	case index:
		p.f.indexes[u] = children
	case p.condition:
		p.f.coverage[u] = cov
	}
}

// pkg reads a Change Dump's package whole: a package is not polled (a
// Change Dump names a new one for new changes), and its ETag guards its
// reads (If-Range). The catch-up poll after a load takes what the load
// read of it (source.TakeLoadedPackage).
func (p *polledReads) pkg(ctx context.Context, u string) (*source.PackageRead, error) {
	if pr, ok, err := p.f.s.TakeLoadedPackage(u); ok {
		return pr, err
	}
	return p.f.s.ReadPackage(ctx, u)
}
