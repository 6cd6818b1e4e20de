package source

import (
	"context"
	"errors"
	"fmt"
	"time"

	"rsfs/resourcesync"
)

// MaxDepth is how deep indexes may nest under the document a Capability
// List names: the one depth rule of every walk of indexes, of change
// documents (ChangeWalk) as of Resource Lists and Resource Dumps
// (resourcewalk.go). A document deeper than that is not read: it is a
// failure of its own, and its siblings are read.
const MaxDepth = 3

// tooDeep is the error of a document nested deeper than MaxDepth.
func tooDeep(what, u string) error {
	return fmt.Errorf("%s %s: indexes nested too deep (more than %d levels)", what, u, MaxDepth)
}

// ChangeVisitor is what a ChangeWalk tells of the documents it reads, and
// how it reads them: the follower's polls and pushes, Truth and inspect's
// plan (package changes), and a load's reading of the Change Dumps
// (readDumps), each through its own.
type ChangeVisitor interface {
	// Get reads document u whole; nil (and no error) when it is unchanged
	// since the visitor last read it (a conditional GET answered 304).
	Get(ctx context.Context, u string) (*resourcesync.Document, error)
	// Unchanged is told that u is unchanged, and returns what it held when
	// last read: an index's children (index true), walked again since
	// they may have grown.
	Unchanged(u string) (children []resourcesync.Entry, index bool)
	// Visit is told of each document before it is read, with the visit of
	// the index that names it (parent, -1 for one the Capability List
	// names) and the until its entry there gives; it returns the visit's
	// number, for Read and Packages.
	Visit(u string, parent int, until time.Time, dump bool) int
	// Read is told of a document read whole: an index (before its
	// children), a Change List, or a Change Dump (before its packages).
	Read(u string, me, depth int, doc *resourcesync.Document, dump bool)
	// Packages is given the packages a Change Dump names that its entries
	// do not close (until) before From, to read (ReadPackage) and collect.
	Packages(ctx context.Context, u string, me int, dump *resourcesync.Document, pkgs []resourcesync.Entry)
	// Failed is told of a document that could not be read: one the
	// Capability List names, or an index's child (each on its own).
	Failed(u string, err error)
}

// ChangeWalk walks change documents: Change Lists, Change Dumps and
// indexes of either, to MaxDepth, each index's children in order from the
// first whose interval holds From (those its entries close before it are
// skipped, as are a Change Dump's packages). A child that cannot be read
// is a failure of its own (Failed); its siblings are read. A Change Dump
// that is a package itself (DSpace's Capability List names each run's
// changedump_*.zip) is read as a Change Dump of that one package, with a
// warning. It is the one walker of change documents.
type ChangeWalk struct {
	Src  *Source
	V    ChangeVisitor
	From time.Time
	// Quiet: a package named as a Change Dump is not logged (inspect
	// reports it).
	Quiet bool
}

// Lists walks the Change Lists (or indexes) urls, Dumps the Change Dumps:
// each failure is told for its document, and the others are read.
func (w *ChangeWalk) Lists(ctx context.Context, urls []string) { w.all(ctx, urls, false) }

func (w *ChangeWalk) Dumps(ctx context.Context, urls []string) { w.all(ctx, urls, true) }

func (w *ChangeWalk) all(ctx context.Context, urls []string, dump bool) {
	for _, u := range urls {
		if err := w.Doc(ctx, u, -1, time.Time{}, 0, dump); err != nil {
			w.V.Failed(u, err)
		}
	}
}

// Doc reads a Change List, or a Change Dump (dump), or an index of either,
// at depth under the visit parent (-1: none), and returns why it could
// not be read; its children's failures are told (Failed) each for its own.
func (w *ChangeWalk) Doc(ctx context.Context, u string, parent int, until time.Time, depth int, dump bool) error {
	what := "change list"
	if dump {
		what = "change dump"
	}
	if depth > MaxDepth {
		return tooDeep(what, u)
	}
	me := w.V.Visit(u, parent, until, dump)
	doc, err := w.V.Get(ctx, u)
	if err != nil && dump {
		if pd, ok := w.Src.packageAsDump(ctx, u, resourcesync.CapChangeDump, err, w.Quiet); ok {
			doc, err = pd, nil
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if doc == nil {
		if children, index := w.V.Unchanged(u); index {
			w.children(ctx, children, me, depth, dump)
		}
		return nil
	}
	w.V.Read(u, me, depth, doc, dump)
	switch {
	case doc.Header.Root == resourcesync.SitemapIndex:
		w.children(ctx, doc.Entries, me, depth, dump)
	case dump:
		var pkgs []resourcesync.Entry
		for _, e := range doc.Entries {
			if w.open(&e) {
				w.Src.AllowDoc(e.Loc)
				pkgs = append(pkgs, e)
			}
		}
		w.V.Packages(ctx, u, me, doc, pkgs)
	}
	return nil
}

// open reports whether an index's entry is not closed (its until) before
// From: the one skip rule of children and packages.
func (w *ChangeWalk) open(e *resourcesync.Entry) bool {
	until := e.MD.Until
	return until.IsZero() || !until.Before(w.From)
}

// children reads the documents an index (or 1.0 archive) names, in order,
// but those closed before From; each failure is told for its document.
func (w *ChangeWalk) children(ctx context.Context, children []resourcesync.Entry, parent, depth int, dump bool) {
	for i := range children {
		e := &children[i]
		if !w.open(e) {
			continue
		}
		w.Src.AllowDoc(e.Loc)
		if err := w.Doc(ctx, e.Loc, parent, e.MD.Until, depth+1, dump); err != nil {
			w.V.Failed(e.Loc, err)
		}
	}
}

// packageAsDump is u, named as a dump of capability c but not XML
// (parseErr), as a dump of that one package, if it opens as one: DSpace's
// Capability List names each run's changedump_*.zip itself. Every walk of
// dumps asks it (ChangeWalk, dumpWalk); the document it returns carries the
// warning that says so, logged unless quiet (inspect reports it).
func (s *Source) packageAsDump(ctx context.Context, u string, c resourcesync.Capability, parseErr error, quiet bool) (*resourcesync.Document, bool) {
	var pe *resourcesync.ParseError
	if !errors.As(parseErr, &pe) {
		return nil, false
	}
	if _, err := s.OpenPackage(ctx, u); err != nil {
		return nil, false
	}
	doc := &resourcesync.Document{
		Header:   resourcesync.Header{URL: u, Root: resourcesync.URLSet, MD: resourcesync.MD{Capability: c}},
		Entries:  []resourcesync.Entry{{Loc: u}},
		Warnings: []resourcesync.Warning{resourcesync.PackageAsDump(u)},
	}
	if !quiet {
		s.warn(doc.Warnings)
	}
	return doc, true
}
