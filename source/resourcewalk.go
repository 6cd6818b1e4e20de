package source

import (
	"context"
	"errors"
	"fmt"

	"rsfs/resourcesync"
)

// The walk of Resource List and Resource Dump indexes: an index's children
// are read in order, to MaxDepth (the one depth rule, changewalk.go), and
// a child that cannot be read is a failure of its own while its siblings
// are read. A load streams Resource Lists (readLists, each document with
// its depth) and reads Resource Dumps whole (dumpWalk); inspect counts
// both the same way (inspectDoc, inspectResourceDump).

// dumpWalk walks a Resource Dump, or an index of them: each document is
// read once, by get; seen, when set, is told of each document read whole
// (inspect counts it); failed, when set, of each index's child that could
// not be read (else its error joins the walk's).
type dumpWalk struct {
	s      *Source
	get    func(context.Context, string) (*resourcesync.Document, error)
	seen   func(depth int, doc *resourcesync.Document)
	failed func(u string, err error)
}

// packages lists the packages of the Resource Dump (or index) u, at depth,
// each with the time of the dump that names it. A package named as the
// dump itself (DSpace's *.zip) is that one package, with a warning. The
// error is u's own, joined with its children's failures unless failed
// takes them; the packages of the documents read come with it. (A load
// says it as "read dump: …": readResourceDump.)
func (w *dumpWalk) packages(ctx context.Context, u string, depth int) ([]dumpPackage, error) {
	if depth > MaxDepth {
		return nil, tooDeep("resource dump", u)
	}
	doc, err := w.get(ctx, u)
	if err != nil {
		if pd, ok := w.s.packageAsDump(ctx, u, resourcesync.CapResourceDump, err, false); ok {
			doc, err = pd, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if w.seen != nil {
		w.seen(depth, doc)
	}
	var out []dumpPackage
	var errs []error
	for _, e := range doc.Entries {
		w.s.AllowDoc(e.Loc)
		if doc.Header.Root != resourcesync.SitemapIndex {
			out = append(out, dumpPackage{url: e.Loc, at: ListTime(&doc.Header.MD)})
			continue
		}
		more, err := w.packages(ctx, e.Loc, depth+1)
		out = append(out, more...)
		switch {
		case err != nil && w.failed != nil:
			w.failed(e.Loc, err)
		case err != nil:
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// readResourceDump is the packages of a Resource Dump u (dumpWalk, reading
// each document by GetDoc), and why it, or a child of its index, could not
// be read.
func (s *Source) readResourceDump(ctx context.Context, u string) ([]dumpPackage, error) {
	found, err := (&dumpWalk{s: s, get: s.GetDoc}).packages(ctx, u, 0)
	if err != nil {
		return found, fmt.Errorf("read dump: %w", err)
	}
	return found, nil
}
