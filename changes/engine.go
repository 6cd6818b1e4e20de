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

// The one reader of change documents. The follower's polls and pushes,
// Truth (drift repair's and audit's) and inspect's follow plan (Plan) all
// walk a set's documents with a walk, collect its changes with its
// collect, and order them with an applyPlan. What differs between them is
// a parameter: how a document is read (docReader: a poll's conditional
// GET with the validators of the last read, or a whole GET), where the walk
// starts (the set's position, or the Resource Lists' time), and whether a
// catalog answers for undated entries behind it.

// maxDepth is how deep indexes of change documents may nest under the
// document the Capability List names.
const maxDepth = 3

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
}

// wholeReads reads every document whole (an unconditional GET): Truth's
// and Plan's reader.
type wholeReads struct{ s *source.Source }

func (w wholeReads) get(ctx context.Context, u string) (*resourcesync.Document, error) {
	return w.s.GetDoc(ctx, u)
}

func (wholeReads) remembered(string) ([]resourcesync.Entry, bool, coverage) {
	return nil, false, coverage{}
}

func (wholeReads) read(string, []resourcesync.Entry, bool, coverage) {}

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

// changeLists walks the Change Lists a set names, changeDumps its Change
// Dumps: each failure is noted for its document, and the others are read.
func (w *walk) changeLists(ctx context.Context, urls []string) {
	for _, u := range urls {
		w.fail(u, w.changeList(ctx, u, -1, time.Time{}, 0))
	}
}

func (w *walk) changeDumps(ctx context.Context, urls []string) {
	for _, u := range urls {
		w.fail(u, w.changeDump(ctx, u, -1, time.Time{}, 0))
	}
}

// visit records a document read at depth under the visit parent.
func (w *walk) visit(u string, parent int, until time.Time, dump bool) int {
	w.visits = append(w.visits, visit{url: u, parent: parent, until: until, dump: dump})
	return len(w.visits) - 1
}

// changeList reads a Change List, or an index of them, changeDump a
// Change Dump, or an index of them: document.
func (w *walk) changeList(ctx context.Context, u string, parent int, until time.Time, depth int) error {
	return w.document(ctx, u, parent, until, depth, false)
}

func (w *walk) changeDump(ctx context.Context, u string, parent int, until time.Time, depth int) error {
	return w.document(ctx, u, parent, until, depth, true)
}

// document reads a Change List, or a Change Dump (dump), or an index of
// either, and collects the changes past the position: a list's own, a
// Change Dump's packages' (packages). A document unchanged since the last
// read has nothing new, but an unchanged index's children may have grown
// (a Change List more changes, a Change Dump more packages): they are read
// again.
func (w *walk) document(ctx context.Context, u string, parent int, until time.Time, depth int, dump bool) error {
	what, read := "change list", w.changeList
	if dump {
		what, read = "change dump", w.changeDump
	}
	if depth > maxDepth {
		return fmt.Errorf("%s %s: indexes nested too deep", what, u)
	}
	me := w.visit(u, parent, until, dump)
	doc, err := w.docs.get(ctx, u)
	if err != nil && dump && w.packageAsDump(ctx, u, me, depth, err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if doc == nil {
		children, index, cov := w.docs.remembered(u)
		if index {
			w.children(ctx, children, me, depth, read)
			return nil
		}
		w.cov = w.cov.with(cov)
		return nil
	}
	w.report.noteDoc(me, doc)
	if doc.Header.Root == resourcesync.SitemapIndex {
		w.docs.read(u, doc.Entries, true, coverage{})
		w.children(ctx, doc.Entries, me, depth, read)
		return nil
	}
	if dump {
		w.docs.read(u, nil, false, w.packages(ctx, doc.Entries, me, depth))
		return nil
	}
	w.docs.read(u, nil, false, w.collect(u, &doc.Header, doc.Entries, false))
	if depth == 0 && w.closed != nil && !doc.Header.MD.Until.IsZero() {
		w.closed(u, &doc.Header)
	}
	return nil
}

// packageAsDump reads u, named as a Change Dump but not XML (parseErr), as
// a Change Dump of that one package, if it is one: DSpace's Capability
// List names each run's changedump_*.zip itself. It reports whether u
// was a package; then its changes are collected and a warning says so.
func (w *walk) packageAsDump(ctx context.Context, u string, me, depth int, parseErr error) bool {
	var pe *resourcesync.ParseError
	if !errors.As(parseErr, &pe) {
		return false
	}
	if _, _, err := packageEntries(ctx, w.s, u, nil); err != nil {
		return false
	}
	doc := &resourcesync.Document{
		Header:   resourcesync.Header{URL: u, Root: resourcesync.URLSet, MD: resourcesync.MD{Capability: resourcesync.CapChangeDump}},
		Entries:  []resourcesync.Entry{{Loc: u}},
		Warnings: []resourcesync.Warning{resourcesync.PackageAsDump(u)},
	}
	if w.report == nil {
		w.s.Logger().Warn("tolerated: "+doc.Warnings[0].Msg, "url", u)
	}
	w.report.noteDoc(me, doc)
	w.docs.read(u, nil, false, w.packages(ctx, doc.Entries, me, depth))
	return true
}

// children reads the documents an index (or 1.0 archive) names, in order,
// from the first whose interval holds the position: those its entries
// close (until) before it are skipped. Each failure is noted for its
// document.
func (w *walk) children(ctx context.Context, children []resourcesync.Entry, parent, depth int,
	read func(ctx context.Context, u string, parent int, until time.Time, depth int) error) {
	for i := range children {
		e := &children[i]
		if until := e.MD.Until; !until.IsZero() && until.Before(w.pos.Time) {
			continue
		}
		w.s.AllowDoc(e.Loc)
		w.fail(e.Loc, read(ctx, e.Loc, parent, e.MD.Until, depth+1))
	}
}

// packages collects the changes, past the position, of the packages a
// Change Dump names, and returns what they cover: a package closed before
// the position is skipped. Each created or updated resource gets its
// member in the package as a copy of that version (packageEntries).
func (w *walk) packages(ctx context.Context, entries []resourcesync.Entry, me, depth int) coverage {
	var cov coverage
	w.children(ctx, entries, me, depth, func(ctx context.Context, pkg string, _ int, _ time.Time, _ int) error {
		h, entries, err := packageEntries(ctx, w.s, pkg, w.report)
		if err != nil {
			return err
		}
		cov = cov.with(w.collect(pkg, h, entries, true))
		return nil
	})
	return cov
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
