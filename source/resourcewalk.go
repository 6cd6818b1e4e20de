package source

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"rsfs/resourcesync"
)

// The walk of Resource List and Resource Dump indexes: an index's children
// are read in order, to MaxDepth (the one depth rule, changewalk.go), and
// a child that cannot be read is a failure of its own while its siblings
// are read. Resource Lists have one walk (listWalk), which a load runs with
// its pool of readers streaming each list into the catalog (readLists) and
// inspect one document at a time, counting (inspectResourceList); Resource
// Dumps have one (dumpWalk), which both run reading each document whole.

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

// listWalk walks Resource Lists and the indexes of them: the documents are
// read breadth-first, in the order they are named, up to parallel at once
// (at least one), each URL once; an index's children (read returns them,
// nil for a list) join the queue one level deeper, to MaxDepth, and one
// deeper is a failure of its own, never read. failed is told of each
// document that could not be read, and says whether the walk goes on
// without it; if not, the walk stops with that error. queued and ended,
// when set, are told of each document as it joins the queue and as it is
// done with (read or failed). failed and ended are called with no lock
// held; queued under the walk's, so it must not block. seen, when set,
// holds the URLs walked before (walks that go on from one another's, one
// after the other), and gains this walk's. A load reads with its pool (readLists),
// inspect one at a time (inspectResourceList).
type listWalk struct {
	parallel int
	read     func(ctx context.Context, d listDoc) ([]string, error)
	failed   func(ctx context.Context, d listDoc, err error) bool
	queued   func(d listDoc)
	ended    func(d listDoc)
	seen     map[string]bool
}

// listQueue is a walk's state, under mu: the documents waiting, the URLs
// seen, and how many documents are being read.
type listQueue struct {
	mu      sync.Mutex
	more    *sync.Cond // a document joined, or a read ended
	waiting []listDoc
	seen    map[string]bool
	reading int
}

// run walks from seeds (each with its set, at depth 0) and returns the
// error that stopped the walk, or the context's.
func (w *listWalk) run(ctx context.Context, seeds []listDoc) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	q := &listQueue{seen: w.seen}
	if q.seen == nil {
		q.seen = map[string]bool{}
	}
	q.more = sync.NewCond(&q.mu)
	for _, d := range seeds {
		w.push(q, d)
	}
	var workers sync.WaitGroup
	for i := 0; i < max(w.parallel, 1); i++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			w.work(ctx, cancel, q)
		}()
	}
	workers.Wait()
	return context.Cause(ctx)
}

// push queues d unless its URL was queued before; q.mu is held.
func (w *listWalk) push(q *listQueue, d listDoc) {
	if q.seen[d.url] {
		return
	}
	q.seen[d.url] = true
	q.waiting = append(q.waiting, d)
	if w.queued != nil {
		w.queued(d)
	}
}

// work takes documents from q until none is waiting and none is being read
// (nothing more can join), or the walk is stopped.
func (w *listWalk) work(ctx context.Context, cancel context.CancelCauseFunc, q *listQueue) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		for len(q.waiting) == 0 && q.reading > 0 && ctx.Err() == nil {
			q.more.Wait()
		}
		if len(q.waiting) == 0 || ctx.Err() != nil {
			q.more.Broadcast() // the others see the end too
			return
		}
		d := q.waiting[0]
		q.waiting = q.waiting[1:]
		q.reading++
		q.mu.Unlock()
		children, err := w.visit(ctx, d)
		q.mu.Lock()
		for _, c := range children { // queued before d is done, so a count of the queued never falls short of the done
			w.push(q, listDoc{url: c, set: d.set, depth: d.depth + 1})
		}
		q.more.Broadcast()
		q.mu.Unlock()
		if err != nil && !w.failed(ctx, d, err) {
			cancel(err)
		}
		if w.ended != nil {
			w.ended(d)
		}
		q.mu.Lock()
		q.reading--
		q.more.Broadcast()
	}
}

// visit reads d, unless it is nested too deep or the walk was stopped.
func (w *listWalk) visit(ctx context.Context, d listDoc) ([]string, error) {
	if ctx.Err() != nil {
		return nil, nil
	}
	if d.depth > MaxDepth {
		return nil, tooDeep("resource list", d.url)
	}
	return w.read(ctx, d)
}
