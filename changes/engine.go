package changes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/resourcesync"
	"rsfs/source"
)

// The engine of change documents. The follower's polls and pushes, Truth
// (drift repair's and audit's) and inspect's follow plan (Plan) all walk a
// set's documents with the one walker of change documents
// (source.ChangeWalk, which a load's reading of the Change Dumps uses too),
// collect their changes with a walk's collect, and order them with an
// applyPlan. What differs between them is a parameter: how a document is
// read (docReader: a poll's conditional GET with the validators of the
// last read, a whole GET, or what the load of the same use read), where
// the walk starts (the set's position, or the Resource Lists' time), and
// whether a catalog answers for undated entries behind it.

// docReader is how a walk reads one document.
type docReader interface {
	// get returns u's document, or nil when it is unchanged since the last
	// read (a conditional GET answered 304).
	get(ctx context.Context, u string) (*resourcesync.Document, error)
	// remembered is what a document that get found unchanged held when it
	// was last read whole: the children of an index, else the coverage of
	// a list.
	remembered(u string) (children []resourcesync.Entry, index bool, cov coverage)
	// read records what a document read whole held, for remembered.
	read(u string, children []resourcesync.Entry, index bool, cov coverage)
	// pkg reads a Change Dump's package (source.ReadPackage).
	pkg(ctx context.Context, u string) (*source.PackageRead, error)
}

// wholeReads reads every document whole (an unconditional GET): under
// Plan's reader (onceReads) and Truth's (loadedReads).
type wholeReads struct{ s *source.Source }

func (w wholeReads) get(ctx context.Context, u string) (*resourcesync.Document, error) {
	return w.s.GetDoc(ctx, u)
}

func (wholeReads) remembered(string) ([]resourcesync.Entry, bool, coverage) {
	return nil, false, coverage{}
}

func (wholeReads) read(string, []resourcesync.Entry, bool, coverage) {}

func (w wholeReads) pkg(ctx context.Context, u string) (*source.PackageRead, error) {
	return w.s.ReadPackage(ctx, u)
}

// loadedReads is wholeReads that takes what the load of the same use read
// (source.Reads: its Change Dumps and packages) rather than ask again:
// Truth's reader, so that its load and its walk read each document once.
type loadedReads struct {
	wholeReads
	loaded *source.Reads
}

func (l loadedReads) get(ctx context.Context, u string) (*resourcesync.Document, error) {
	if doc, ok, err := l.loaded.Doc(u); ok {
		return doc, err
	}
	return l.wholeReads.get(ctx, u)
}

func (l loadedReads) pkg(ctx context.Context, u string) (*source.PackageRead, error) {
	if p, ok, err := l.loaded.Package(u); ok {
		return p, err
	}
	return l.wholeReads.pkg(ctx, u)
}

// walk reads one set's change documents and collects the changes past a
// position.
type walk struct {
	s    *source.Source
	docs docReader
	// cat answers for undated entries at or before the position (doubts);
	// nil: they are left out.
	cat     *catalog.Catalog
	pos     Position
	horizon time.Time
	// fresh: the position is the Resource Lists' time, from a load; before
	// then holds, by URI, the latest change behind it (stale.go).
	fresh  bool
	before map[string]change
	// log says a document's lasting conditions; nil, nothing is said.
	// firstWarning, when set, says whether a document's condition is said
	// for the first time.
	log          *slog.Logger
	firstWarning func(u string) bool
	// closed, when set, is told of a Change List the Capability List names
	// (depth 0) that is closed (its until).
	closed func(u string, h *resourcesync.Header)
	// report, when set, keeps what the walk read, for inspect's report.
	report *walkReport

	changes []change
	cov     coverage
	seen    map[string]struct{} // the changes collected, by key and time
	failed  map[string]error    // the documents that could not be read
	visits  []visit             // the documents read, in order
	lists   []listRead          // the Change Lists and manifests read, in order
}

// visit is one document a walk read (or tried to): an index's child
// (parent ≥ 0, the visit of its index) is closed at until by its index's
// entry.
type visit struct {
	url    string
	parent int
	until  time.Time
	dump   bool
}

// listRead is what a Change List (or a dump package's manifest) held, for
// inspect's warnings: its header, and its entries as dated.
type listRead struct {
	url             string
	dump            bool
	md              resourcesync.MD
	byLastmod       bool
	undated, future int
	unsaid          int // entries without a change attribute
	futureNewest    time.Time
	newest          time.Time // the newest change not dated in the future
}

// newWalk returns a walk of src's documents through docs from pos.
func newWalk(src *source.Source, docs docReader, pos Position, now time.Time) *walk {
	return &walk{s: src, docs: docs, pos: pos, horizon: now.Add(source.FutureBound)}
}

// fail notes that document u could not be read (err not nil).
func (w *walk) fail(u string, err error) {
	if err == nil {
		return
	}
	if w.failed == nil {
		w.failed = map[string]error{}
	}
	w.failed[u] = err
}

// err joins the errors of the documents that could not be read.
func (w *walk) err() error {
	var errs []error
	for _, err := range w.failed {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// walker is the one walker of change documents (source.ChangeWalk), from
// the position, telling w what it reads (walkVisitor).
func (w *walk) walker() *source.ChangeWalk {
	return &source.ChangeWalk{Src: w.s, V: walkVisitor{w}, From: w.pos.Time, Quiet: w.report != nil}
}

// changeLists walks the Change Lists a set names, changeDumps its Change
// Dumps: each failure is noted for its document, and the others are read.
func (w *walk) changeLists(ctx context.Context, urls []string) { w.walker().Lists(ctx, urls) }

func (w *walk) changeDumps(ctx context.Context, urls []string) { w.walker().Dumps(ctx, urls) }

// visit records a document read at depth under the visit parent.
func (w *walk) visit(u string, parent int, until time.Time, dump bool) int {
	w.visits = append(w.visits, visit{url: u, parent: parent, until: until, dump: dump})
	return len(w.visits) - 1
}

// changeList reads a Change List, or an index of them, at depth under the
// visit parent.
func (w *walk) changeList(ctx context.Context, u string, parent int, until time.Time, depth int) error {
	return w.walker().Doc(ctx, u, parent, until, depth, false)
}

// walkVisitor is a walk as the walker's source.ChangeVisitor: it reads
// through the walk's docReader, remembers what each document held (an
// unchanged index's children are read again: a Change List may have
// grown, a Change Dump gained packages), and collects the changes past
// the position of each Change List and package.
type walkVisitor struct{ w *walk }

func (v walkVisitor) Get(ctx context.Context, u string) (*resourcesync.Document, error) {
	return v.w.docs.get(ctx, u)
}

func (v walkVisitor) Unchanged(u string) ([]resourcesync.Entry, bool) {
	children, index, cov := v.w.docs.remembered(u)
	if !index {
		v.w.cov = v.w.cov.with(cov)
	}
	return children, index
}

func (v walkVisitor) Visit(u string, parent int, until time.Time, dump bool) int {
	return v.w.visit(u, parent, until, dump)
}

func (v walkVisitor) Failed(u string, err error) { v.w.fail(u, err) }

// Read keeps what an index, list or Change Dump read whole held: an
// index's children; a Change List's changes, and a closed one the
// Capability List names is told of (closed).
func (v walkVisitor) Read(u string, me, depth int, doc *resourcesync.Document, dump bool) {
	w := v.w
	w.report.noteDoc(me, doc)
	switch {
	case doc.Header.Root == resourcesync.SitemapIndex:
		w.docs.read(u, doc.Entries, true, coverage{})
	case dump: // its packages follow (Packages)
	default:
		w.docs.read(u, nil, false, w.collect(u, &doc.Header, doc.Entries, false))
		if depth == 0 && w.closed != nil && !doc.Header.MD.Until.IsZero() {
			w.closed(u, &doc.Header)
		}
	}
}

// Packages collects the changes, past the position, of the packages a
// Change Dump names (each read by the docReader's pkg: a created or
// updated resource gets its member as a copy of that version), and keeps
// what they cover as the Change Dump's. Each failure is noted for its
// package.
func (v walkVisitor) Packages(ctx context.Context, u string, _ int, _ *resourcesync.Document, pkgs []resourcesync.Entry) {
	w := v.w
	var cov coverage
	for _, e := range pkgs {
		p, err := w.docs.pkg(ctx, e.Loc)
		if w.report != nil {
			w.report.pkgs[e.Loc] = w.report.sr.NotePackage(e.Loc, p.Pkg, p.Manifest, err)
		}
		if err != nil {
			w.fail(e.Loc, packageErr(p, err))
			continue
		}
		cov = cov.with(w.collect(e.Loc, &p.Manifest.Header, p.Entries, true))
	}
	w.docs.read(u, nil, false, cov)
}

// packageErr is why a Change Dump's package could not be read: it did not
// open, or its manifest could not be read (source's error names the
// package then).
func packageErr(p *source.PackageRead, err error) error {
	if p.Pkg == nil {
		return fmt.Errorf("change dump package: %w", err)
	}
	return fmt.Errorf("change %w", err)
}

// collect keeps a document's changes that are past the position, dated by
// datedChanges, and returns what the document covers. A change met twice
// in one walk (a list read directly and through an index that names it) is
// kept once. An undated entry that falls at or before the position cannot
// be told new from old by time: it is compared with the catalog, and kept
// (a doubt, said in a warning naming the document) when the catalog does
// not hold its result. An undated entry that a later entry of the same
// document supersedes (datedChanges) is never kept: py-resourcesync writes
// a deletion undated and may re-create the file later in the same list,
// and that deletion, re-read behind the position, would be a doubt the
// catalog does not hold.
func (w *walk) collect(u string, h *resourcesync.Header, entries []resourcesync.Entry, dump bool) coverage {
	cs, cov := datedChanges(u, h, entries, w.pos.Time)
	w.cov = w.cov.with(cov)
	if w.seen == nil {
		w.seen = map[string]struct{}{}
	}
	lr := listRead{url: u, dump: dump, md: h.MD, byLastmod: source.DatedByLastmod(entries)}
	var skipped source.NonWebLocs
	if w.log != nil {
		defer skipped.Warn(w.log, u)
	}
	doubts := 0
	for i := range cs {
		c := &cs[i]
		if skipped.Skip(c.entry.Loc) {
			continue
		}
		lr.note(c, w.horizon)
		if c.superseded {
			continue
		}
		id := c.key + "@" + c.at.UTC().Format(time.RFC3339Nano)
		if _, dup := w.seen[id]; dup {
			continue
		}
		w.seen[id] = struct{}{}
		if w.pos.passed(c) {
			if w.fresh {
				w.before = latestBefore(w.before, c)
			}
			if !c.undated || w.cat == nil || catalogHolds(w.cat, c) {
				continue
			}
			c.doubt = true
			doubts++
		}
		w.changes = append(w.changes, *c)
	}
	w.lists = append(w.lists, lr)
	w.warn(u, &lr, doubts)
	return cov
}

// note counts a change in what its document held.
func (lr *listRead) note(c *change, horizon time.Time) {
	if unsaid(c.entry) {
		lr.unsaid++
	}
	switch {
	case c.undated:
		lr.undated++
	case c.at.After(horizon):
		lr.future++
		if c.at.After(lr.futureNewest) {
			lr.futureNewest = c.at
		}
	case c.at.After(lr.newest):
		lr.newest = c.at
	}
}

// warn says, once per document, that it dates changes in the future, and
// that undated entries behind the position were kept as doubts.
func (w *walk) warn(u string, lr *listRead, doubts int) {
	if w.log == nil {
		return
	}
	if lr.future > 0 && (w.firstWarning == nil || w.firstWarning(u)) {
		w.log.Warn("changes dated more than a day ahead of now: applied, but the position does not move past now (said once per document)",
			"document", u, "changes", lr.future, "horizon", w.horizon)
	}
	if doubts > 0 {
		w.log.Warn("entries without a date fall at or before the last change applied, yet the tree does not hold them: applied",
			"document", u, "entries", doubts, "position", w.pos.Time)
	}
}

// unsaidWarning says how entries without a change attribute are read.
func unsaidWarning(n int) string {
	return fmt.Sprintf("%d entries without a change attribute (1.1 §12.1 requires one): each is resolved by asking its resource, created or updated if it answers, deleted if 404 or 410", n)
}

// staleBehind adds to the walk's changes those behind a fresh position
// that the Resource Lists' records are older than (staleBefore), and
// returns them.
func (w *walk) staleBehind() []change {
	if w.cat == nil {
		w.before = nil
		return nil
	}
	stale := staleBefore(w.cat, w.before, w.changes)
	w.before = nil
	w.changes = append(w.changes, stale...)
	return stale
}

// applyPlan is how a batch of changes is applied: in time order (stable:
// the order of the documents at one instant), each once; of several
// changes to one URI the last wins.
type applyPlan struct {
	changes []change
	last    map[string]int // by URI: the index of the winning change
}

// planApply orders changes, less those drop says are done.
func planApply(changes []change, drop func(*change) bool) *applyPlan {
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].at.Before(changes[j].at) })
	if drop != nil {
		changes = slices.DeleteFunc(changes, func(c change) bool { return drop(&c) })
	}
	p := &applyPlan{changes: changes, last: make(map[string]int, len(changes))}
	for i := range changes {
		p.last[changes[i].entry.Loc] = i
	}
	return p
}

// wins reports whether change i is the last to its URI.
func (p *applyPlan) wins(i int) bool { return p.last[p.changes[i].entry.Loc] == i }

// learned is what a HEAD learned for a change: its length, where it did
// not publish one; for a change that does not say its kind (no change
// attribute, which CORE writes), whether the resource is gone (404 or
// 410: it is resolved as deleted, else as created or updated).
type learned struct {
	n    int64
	err  error
	gone bool
}

// unsaid reports whether an entry does not say its kind of change.
func unsaid(e *resourcesync.Entry) bool { return e.MD.Change == "" }

// deletes reports whether a change, once its HEAD was learned, deletes
// its resource.
func deletes(e *resourcesync.Entry, l learned) bool {
	return e.MD.Change == resourcesync.ChangeDeleted || (unsaid(e) && l.gone)
}

// errNotAsked: the context ended before a length was asked for.
var errNotAsked = errors.New("not asked: the poll ended first")

// learnLengths HEADs, in parallel, the resources of the winning created or
// updated changes that publish no length, and of those that do not say
// their kind.
func (p *applyPlan) learnLengths(ctx context.Context, client *fetch.Client) map[int]learned {
	var todo []int
	for i := range p.changes {
		e := p.changes[i].entry
		noLength := e.MD.Change != resourcesync.ChangeDeleted && e.MD.Length == resourcesync.NoLength
		if p.wins(i) && (noLength || unsaid(e)) {
			todo = append(todo, i)
		}
	}
	out := make(map[int]learned, len(todo))
	for _, i := range todo {
		out[i] = learned{n: -1, err: errNotAsked} // until its answer, if ctx ends first
	}
	var mu sync.Mutex
	_ = fetch.HeadEach(ctx, client, todo, fetch.HeadParallel,
		func(i int) string { return p.changes[i].entry.Loc },
		func(i int, meta *fetch.Meta, err error) error {
			l := learned{n: -1, err: err}
			switch {
			case err == nil:
				l.n = meta.Length
			case unsaid(p.changes[i].entry) && fetch.IsGone(err):
				l.err, l.gone = nil, true
			}
			mu.Lock()
			out[i] = l
			mu.Unlock()
			return nil
		})
	return out
}

// resourceOf is the resource a created or updated change makes, in set,
// with the length l learned where the change publishes none; err says the
// length is unknown (the resource has NoLength then).
func resourceOf(c *change, set uint16, l learned) (*catalog.Resource, error) {
	res := source.ResourceOf(c.entry, c.at)
	res.Set = set
	if unsaid(c.entry) && l.err != nil {
		return res, fmt.Errorf("its entry does not say the kind of change, and asking the resource failed: %v", l.err)
	}
	if res.Length == resourcesync.NoLength {
		if l.err != nil || l.n < 0 {
			return res, fmt.Errorf("its length is not published and could not be learned: %v", l.err)
		}
		res.Length = l.n
	}
	return res, nil
}
