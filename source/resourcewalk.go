package source

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"rsfs/resourcesync"
)

// The walk of Resource List and Resource Dump indexes (indexWalk): an
// index's children are read in order, to MaxDepth (the one depth rule,
// changewalk.go), each once, and a child that cannot be read is a failure
// of its own while its siblings are read. A load runs it over Resource
// Lists with its pool of readers, streaming each list into the catalog
// (readLists); inspect runs it one document at a time, counting
// (inspectResourceList); and a Resource Dump's packages are listed by it
// for the load, inspect and retries alike (dumpWalk), each document read
// whole.

// walkDoc is a document a walk reads: a Resource List or Resource Dump (or
// an index), the set it belongs to (a load's lists), and how deep under
// the one the Capability List names.
type walkDoc struct {
	url   string
	set   *Set
	depth int
}

// dumpWalk lists the packages of a Resource Dump, or an index of them
// (indexWalk): each document is read once, by get; seen, when set, is
// told of each document read (inspect counts it); failed, when set, of
// each index's child that could not be read (else its error joins the
// walk's).
type dumpWalk struct {
	s      *Source
	get    func(context.Context, string) (*resourcesync.Document, error)
	seen   func(depth int, doc *resourcesync.Document)
	failed func(u string, err error)
}

// packages lists the packages of the Resource Dump (or index) u, each with
// the time of the dump that names it, in the order the walk reads them. A
// package named as the dump itself (DSpace's *.zip) is that one package,
// with a warning. The error is u's own (nothing is listed then), or its
// children's failures joined unless failed takes them, with the packages
// of the documents read. (A load says it as "read dump: …":
// readResourceDump.)
func (w *dumpWalk) packages(ctx context.Context, u string) ([]dumpPackage, error) {
	var out []dumpPackage
	var own error
	var errs []error
	walk := &indexWalk{
		kind:     "resource dump",
		parallel: 1,
		read: func(ctx context.Context, d walkDoc) ([]string, error) {
			doc, err := w.read(ctx, d)
			if err != nil {
				return nil, err
			}
			var children []string
			for _, e := range doc.Entries {
				w.s.AllowDoc(e.Loc)
				if doc.Header.Root == resourcesync.SitemapIndex {
					children = append(children, e.Loc)
				} else {
					out = append(out, dumpPackage{url: e.Loc, at: ListTime(&doc.Header.MD)})
				}
			}
			return children, nil
		},
		failed: func(_ context.Context, d walkDoc, err error) bool {
			switch {
			case d.depth == 0:
				own = err
			case w.failed != nil:
				w.failed(d.url, err)
			default:
				errs = append(errs, err)
			}
			return true
		},
	}
	if err := walk.run(ctx, []walkDoc{{url: u}}); err != nil {
		return out, err // the context's
	}
	if own != nil {
		return nil, own
	}
	return out, errors.Join(errs...)
}

// read reads one dump document whole, or the package it names as the dump
// (packageAsDump), and tells seen of it.
func (w *dumpWalk) read(ctx context.Context, d walkDoc) (*resourcesync.Document, error) {
	doc, err := w.get(ctx, d.url)
	if err != nil {
		if pd, ok := w.s.packageAsDump(ctx, d.url, resourcesync.CapResourceDump, err, false); ok {
			doc, err = pd, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if w.seen != nil {
		w.seen(d.depth, doc)
	}
	return doc, nil
}

// readResourceDump is the packages of a Resource Dump u (dumpWalk, reading
// each document by GetDoc), and why it, or a child of its index, could not
// be read.
func (s *Source) readResourceDump(ctx context.Context, u string) ([]dumpPackage, error) {
	found, err := (&dumpWalk{s: s, get: s.GetDoc}).packages(ctx, u)
	if err != nil {
		return found, fmt.Errorf("read dump: %w", err)
	}
	return found, nil
}

// indexWalk walks Resource Lists or Resource Dumps and the indexes of
// them: the documents are read breadth-first, in the order they are named,
// up to parallel at once (at least one), each URL once; an index's
// children (read returns them, nil for a list or a dump) join the queue
// one level deeper, to MaxDepth, and one deeper is a failure of its own,
// never read. failed is told of each document that could not be read, and
// says whether the walk goes on without it; if not, the walk stops with
// that error. queued and ended, when set, are told of each document as it
// joins the queue and as it is done with (read or failed). failed and
// ended are called with no lock held; queued under the walk's, so it must
// not block. seen, when set, holds the URLs walked before (walks that go
// on from one another's, one after the other), and gains this walk's.
type indexWalk struct {
	kind     string // what the documents are, for the depth error: "resource list"
	parallel int
	read     func(ctx context.Context, d walkDoc) ([]string, error)
	failed   func(ctx context.Context, d walkDoc, err error) bool
	queued   func(d walkDoc)
	ended    func(d walkDoc)
	seen     map[string]bool
}

// walkQueue is a walk's state, under mu: the documents waiting, the URLs
// seen, and how many documents are being read.
type walkQueue struct {
	mu      sync.Mutex
	more    *sync.Cond // a document joined, or a read ended
	waiting []walkDoc
	seen    map[string]bool
	reading int
}

// run walks from seeds (each with its set, at depth 0) and returns the
// error that stopped the walk, or the context's.
func (w *indexWalk) run(ctx context.Context, seeds []walkDoc) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	q := &walkQueue{seen: w.seen}
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
func (w *indexWalk) push(q *walkQueue, d walkDoc) {
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
func (w *indexWalk) work(ctx context.Context, cancel context.CancelCauseFunc, q *walkQueue) {
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
			w.push(q, walkDoc{url: c, set: d.set, depth: d.depth + 1})
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
func (w *indexWalk) visit(ctx context.Context, d walkDoc) ([]string, error) {
	if ctx.Err() != nil {
		return nil, nil
	}
	if d.depth > MaxDepth {
		return nil, tooDeep(w.kind, d.url)
	}
	return w.read(ctx, d)
}
