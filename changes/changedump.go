package changes

import (
	"context"
	"fmt"

	"rsfs/copies"
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

// packageEntries reads a Change Dump package's manifest and returns its
// header and entries: a created or updated resource gets its member as a
// copy of that version, read first (Pri 1; the URI is the fallback,
// copies.DumpRel), and the member's size where the manifest gives no
// length. Every walk (engine.go) reads packages through it; an
// inspection's walk (rep not nil) notes the package, as read, in rep.
func packageEntries(ctx context.Context, s *source.Source, pkgURL string, rep *walkReport) (*resourcesync.Header, []resourcesync.Entry, error) {
	pkg, err := s.OpenPackage(ctx, pkgURL)
	if err != nil {
		if rep != nil {
			rep.pkgs[pkgURL] = rep.sr.NotePackage(pkgURL, nil, nil, err)
		}
		return nil, nil, fmt.Errorf("change dump package: %w", err)
	}
	man, err := source.ReadManifest(ctx, pkg)
	if rep != nil {
		rep.pkgs[pkgURL] = rep.sr.NotePackage(pkgURL, pkg, man, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("change dump package %s: %w", pkgURL, err)
	}
	entries := make([]resourcesync.Entry, 0, len(man.Entries))
	for i := range man.Entries {
		e := man.Entries[i]
		if e.MD.Change != resourcesync.ChangeDeleted && e.MD.Path != "" {
			if m, ok := pkg.Lookup(e.MD.Path); ok && (e.MD.Length < 0 || e.MD.Length == m.Size) {
				e.Links = append(e.Links[:len(e.Links):len(e.Links)], resourcesync.Link{Rel: copies.DumpRel, Href: pkgURL,
					Path: e.MD.Path, Hashes: e.MD.Hashes, Length: m.Size, Modified: e.Lastmod, Type: e.MD.Type, Pri: 1})
				if e.MD.Length < 0 {
					e.MD.Length = m.Size
				}
			} else {
				s.Logger().Warn("change dump manifest names a member the package lacks or of another size; the resource is read from its URI",
					"package", pkgURL, "path", e.MD.Path, "uri", e.Loc)
			}
		}
		entries = append(entries, e)
	}
	return &man.Header, entries, nil
}
