package changes

import (
	"context"
	"fmt"

	"rsfs/copies"
	"rsfs/fetch"
	"rsfs/resourcesync"
	"rsfs/source"
)

// readChangeDump reads a Change Dump (or an index of them) and collects the
// changes, past the position, of the packages it names: a package closed
// (until) before the position is skipped. Each created or updated resource
// gets its member in the package as a copy of that version, read before
// its URI (the package holds exactly the version the change lists; the URI
// may already serve a later one); deleted
// entries are changes like any other. A package that cannot be read fails
// the poll of the set, so its changes are retried and the position does
// not pass them.
func (f *Follower) readChangeDump(ctx context.Context, u string, r *pollRead, depth int) error {
	if depth > 3 {
		return fmt.Errorf("change dump %s: indexes nested too deep", u)
	}
	doc, err := f.readCond(ctx, u, r)
	if err != nil || doc == nil {
		return err
	}
	for i := range doc.Entries {
		e := &doc.Entries[i]
		if until := e.MD.Until; !until.IsZero() && until.Before(r.pos.Time) {
			continue
		}
		f.s.AllowDoc(e.Loc)
		if doc.Header.Root == resourcesync.SitemapIndex {
			if err := f.readChangeDump(ctx, e.Loc, r, depth+1); err != nil {
				return err
			}
			continue
		}
		if err := f.collectPackage(ctx, r, e.Loc); err != nil {
			return err
		}
	}
	return nil
}

// readCond fetches a change document, with the validators of its last
// read when r is a poll's, and returns nil when it is unchanged. A poll's
// new validators are kept in r, for once its changes are applied.
func (f *Follower) readCond(ctx context.Context, u string, r *pollRead) (*resourcesync.Document, error) {
	var v *fetch.Validators
	f.mu.Lock()
	if r.condition {
		v = f.validators[u]
	}
	f.docs++
	f.mu.Unlock()
	doc, vals, err := f.s.GetDocIfChanged(ctx, u, v)
	if err != nil || doc == nil {
		return nil, err
	}
	if r.condition {
		r.vals[u] = vals
	}
	return doc, nil
}

// collectPackage reads a Change Dump package's manifest.
func (f *Follower) collectPackage(ctx context.Context, r *pollRead, pkgURL string) error {
	h, entries, err := packageEntries(ctx, f.s, pkgURL)
	if err != nil {
		return err
	}
	f.collect(r, pkgURL, h, entries)
	return nil
}

// packageEntries reads a Change Dump package's manifest and returns its
// header and entries: a created or updated resource gets its member as a
// copy of that version, read first (Pri 1; the URI is the fallback,
// copies.DumpRel), and the member's size where the manifest gives no
// length. The follower and Truth both read packages through it.
func packageEntries(ctx context.Context, s *source.Source, pkgURL string) (*resourcesync.Header, []resourcesync.Entry, error) {
	pkg, err := s.OpenPackage(ctx, pkgURL)
	if err != nil {
		return nil, nil, fmt.Errorf("change dump package: %w", err)
	}
	man, err := source.ReadManifest(ctx, pkg)
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
