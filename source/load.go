package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/resourcesync"
)

// Progress reports loading as it goes.
type Progress struct {
	Lists     int64 // Resource List documents read
	Resources int64 // entries added
	// Missing are the entries without a length: they are in the tree
	// with no request made for them, their length learned when a process
	// looks them up (package prefetch, lengths.go).
	Missing int64
	// Docs are the Resource Lists and indexes known so far (the sets'
	// and those the indexes read name), Started those requested, Done
	// those read whole.
	Docs, Started, Done int64
	// Bytes are the bytes of those documents received so far, as sent
	// (compressed or not); Expected the Content-Lengths of those started,
	// -1 once one came without.
	Bytes, Expected int64
}

// LoadStats says what Load did.
type LoadStats struct {
	Progress
	// SkippedPackages are dump packages left out because they could not be
	// opened or read (each is logged with its URL).
	SkippedPackages int64
	// SkippedResourceDumpPackages are those of them a Resource Dump names:
	// the resources only they hold are not known.
	SkippedResourceDumpPackages int64
	Duration                    time.Duration
	// Reads are the Change Dumps and dump packages the load read, for a
	// walk in the same use to read from (Truth).
	Reads *Reads

	listed map[*Set]time.Time // per set, the oldest time its Resource Lists speak for
}

// Load reads every Resource List (and Resource List Index) of every set into
// cat and seals it. Lists are fetched and parsed in parallel, streaming, so
// memory is the catalog plus a few documents. Resources without a length
// are added as they are (resourcesync.NoLength): no request is made for
// them before the mount is ready.
func (s *Source) Load(ctx context.Context, cat *catalog.Catalog, progress func(Progress)) (*LoadStats, error) {
	st, err := s.loadChecked(ctx, cat.Add, cat.AddAll, progress, true)
	if err != nil {
		return nil, err
	}
	for _, set := range s.Sets() { // no follower yet: nothing reads the sets meanwhile
		set.ListedAt = st.listed[set]
	}
	s.loaded.Store(st.Reads) // for the catch-up poll (TakeLoadedPackage), until ForgetLoad
	if err := cat.Seal(); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	return st, nil
}

// LoadEach reads every Resource List (and Resource List Index, and dump
// manifest) as Load does, but hands each resource to sink instead of
// adding it to a sealed catalog: to reload a catalog already in use. sink
// may refuse a resource (a catalog at a capacity limit): loading then stops
// with an error naming the document it came from. The sets are only read:
// the time each set's lists speak for is in the stats (ListedAt), for the
// caller to store under its own lock.
func (s *Source) LoadEach(ctx context.Context, sink func(*catalog.Resource) error) (*LoadStats, error) {
	return s.loadChecked(ctx, sink, nil, nil, false)
}

// ListedAt is the oldest time set's Resource Lists speak for, as loaded;
// zero if they did not say.
func (st *LoadStats) ListedAt(set *Set) time.Time { return st.listed[set] }

// loadChecked reads every Resource List and hands each resource to sink,
// which may refuse one (a catalog at a capacity limit): loading then stops
// with an error naming the document the resource came from. The sets are
// only read: the time each set's lists speak for is returned in the stats,
// for the caller to store under its own lock. sinkAll, if set, takes a
// list's entries in batches (catalog.AddAll) and returns how many it took.
// tolerant (a first load) goes on without a list that cannot be read
// (unreadlists.go).
func (s *Source) loadChecked(ctx context.Context, sink func(*catalog.Resource) error,
	sinkAll func([]*catalog.Resource) (int, error), progress func(Progress), tolerant bool) (*LoadStats, error) {
	start := time.Now()
	l := &loader{s: s, progress: progress, tolerant: tolerant, read: &Reads{}}
	l.dumps.number, l.dumps.docs = s.SetNumber, s.Docs
	s.lists.reset()
	dumps, changes, noBaseline := 0, 0, true
	for _, set := range s.Sets() {
		noBaseline = noBaseline && s.NoBaseline(set)
		docs := s.AllDocs(set)
		for _, u := range docs[resourcesync.CapResourceList] {
			l.seeds = append(l.seeds, walkDoc{url: u, set: set})
		}
		dumps += len(docs[resourcesync.CapResourceDump]) + len(docs[resourcesync.CapChangeDump])
		changes += len(docs[resourcesync.CapChangeList])
	}
	if len(l.seeds) == 0 && dumps == 0 && changes == 0 {
		return nil, fmt.Errorf("load: %w (no Resource List, Resource Dump or Change List in any resource set)", ErrNotFound)
	}
	if noBaseline && tolerant {
		s.log.Warn(NoBaselineWarning)
	}
	// Dump manifests first, so each listed resource learns its dump copies
	// as it streams past; the dump-only ones are added at the end.
	if err := l.readDumps(ctx); err != nil {
		return nil, err
	}
	l.sink = func(r *catalog.Resource) error {
		l.dumps.attach(r)
		return sink(r)
	}
	l.sinkAll = func(rs []*catalog.Resource) (int, error) {
		for _, r := range rs {
			l.dumps.attach(r)
		}
		if sinkAll != nil {
			return sinkAll(rs)
		}
		for i, r := range rs {
			if err := sink(r); err != nil {
				return i, err
			}
		}
		return len(rs), nil
	}
	if err := l.readLists(ctx); err != nil {
		return nil, err
	}
	if err := l.noteUnreadLists(); err != nil {
		return nil, err
	}
	l.dumps.listedAt = l.listed
	for _, r := range l.dumps.unlisted() {
		s.AllowMirrors(r.Links)
		if err := sink(r); err != nil {
			return nil, fmt.Errorf("load %s from dump package %s: %w", r.URI, r.Links[len(r.Links)-1].Href, err)
		}
		l.resources.Add(1)
	}
	if n := l.dumps.dropped; n > 0 {
		s.log.Warn("dump copies of resources deleted since, or older than the Resource Lists (or Resource Dumps) that leave them out, not mounted", "resources", n)
	}
	l.warnForeign()
	l.report() // the last report is final, whatever order the workers' reached the callback in
	st := &LoadStats{Progress: l.snapshot(), SkippedPackages: l.skipped.Load(), SkippedResourceDumpPackages: l.skippedResource.Load(),
		Duration: time.Since(start), Reads: l.read, listed: l.listed}
	if st.Missing > 0 {
		s.log.Info("resources without a published length: in the tree, their length learned when first looked up", "resources", st.Missing)
	}
	return st, nil
}

// NoBaselineWarning is said of a Source that publishes Change Lists and
// no Resource List or Resource Dump: its tree starts empty, and holds
// what the Change Lists say exists.
const NoBaselineWarning = "no baseline: the Source publishes no Resource List or Resource Dump, only Change Lists; the tree holds only the resources the Change Lists name (created or updated, and not deleted since)"

type loader struct {
	s        *Source
	sink     func(*catalog.Resource) error
	sinkAll  func([]*catalog.Resource) (int, error) // a list's entries, a batch at a time
	progress func(Progress)
	seeds    []walkDoc
	tolerant bool // a first load: a list that cannot be read is left out

	unreadLists map[string]unreadDoc // the lists left out, by URL; under mu

	lists, resources, missing atomic.Int64
	docs, started, done       atomic.Int64
	bytes, expected           atomic.Int64
	skipped                   atomic.Int64 // dump packages left out
	skippedResource           atomic.Int64 // of them, those a Resource Dump names
	mu                        sync.Mutex
	foreign                   map[string]int // resources by origin, other than the Source's
	dumps                     dumpCopies
	pkgs                      map[string]dumpPackage // the dump packages, by URL
	read                      *Reads                 // the Change Dumps and packages read
	listed                    map[*Set]time.Time
}

// noteListTime keeps, per set, the oldest time its Resource Lists speak
// for: Change List entries after it must be applied.
func (l *loader) noteListTime(set *Set, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.listed == nil {
		l.listed = map[*Set]time.Time{}
	}
	if old, ok := l.listed[set]; !ok || old.IsZero() || (!at.IsZero() && at.Before(old)) {
		l.listed[set] = at
	}
}

func (l *loader) noteForeign(uri string) {
	o := originOfString(uri)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.foreign == nil {
		l.foreign = map[string]int{}
	}
	l.foreign[o]++
}

// warnForeign tells, once per origin, about resources on origins rsfs may
// not fetch from: the Source did not name them as mirrors and the host
// policy does not allow them. They are in the tree; reading them fails
// until it does (the client's advice says how).
func (l *loader) warnForeign() {
	for o, n := range l.foreign {
		if !l.s.policy.Allows(o + "/") {
			msg := "resources on an origin rsfs may not fetch from; reading them fails until it is allowed"
			if c := l.s.Client(); c != nil {
				if advice := c.AllowAdvice(o); advice != "" {
					msg = "resources on an origin rsfs may not fetch from; reading them fails until " + advice
				}
			}
			l.s.log.Warn(msg, "origin", o, "resources", n)
		}
	}
}

func (l *loader) snapshot() Progress {
	return Progress{Lists: l.lists.Load(), Resources: l.resources.Load(), Missing: l.missing.Load(),
		Docs: l.docs.Load(), Started: l.started.Load(), Done: l.done.Load(), Bytes: l.bytes.Load(), Expected: l.expected.Load()}
}

func (l *loader) report() {
	if l.progress != nil {
		l.progress(l.snapshot())
	}
}

// readLists walks the documents (indexWalk) with the Source's parallel
// reads: an index adds its children to the walk, a list streams into the
// catalog, and a list that cannot be read is left out (leaveOut) or stops
// the load.
func (l *loader) readLists(ctx context.Context) error {
	w := &indexWalk{
		kind:     "resource list",
		parallel: l.s.opts.Parallel,
		read:     l.readList,
		failed:   l.leaveOut,
		queued:   func(walkDoc) { l.docs.Add(1) },
		ended: func(walkDoc) {
			l.done.Add(1)
			l.report()
		},
	}
	return w.run(ctx, l.seeds)
}

// readList reads one Resource List into the catalog, or returns the
// children of an index.
func (l *loader) readList(ctx context.Context, d walkDoc) ([]string, error) {
	l.started.Add(1)
	resp, err := l.s.opts.Client.Get(ctx, d.url, nil)
	if err != nil {
		return nil, fmt.Errorf("read resource list: %w", err)
	}
	defer resp.Body.Close()
	l.expect(resp.Length)
	l.s.lists.note(d.set, d.url, resp.Validators())
	r, err := resourcesync.NewReader(&countingReader{r: resp.Body, l: l}, resp.URL, l.s.opts.Parse)
	if err != nil {
		return nil, fmt.Errorf("read resource list: %w", err)
	}
	h, err := r.Header()
	if err != nil {
		return nil, fmt.Errorf("read resource list: %w", err)
	}
	if c := h.Capability(); c != resourcesync.CapResourceList && c != "" {
		return nil, fmt.Errorf("read resource list %s: capability is %q", resp.URL, c)
	}
	defer l.s.warnReader(r)
	l.s.lists.noteAt(d.url, ListTime(&h.MD))
	if h.Root == resourcesync.SitemapIndex {
		return l.readIndex(r)
	}
	at := ListTime(&h.MD)
	l.noteListTime(d.set, at)
	return nil, l.readEntries(r, resp.URL, at, l.s.SetNumber(d.set))
}

// readIndex returns the children a Resource List index names; those read
// before a break come with its error.
func (l *loader) readIndex(r *resourcesync.Reader) ([]string, error) {
	var children []string
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return children, nil
		}
		if err != nil {
			return children, fmt.Errorf("read resource list index: %w", err)
		}
		l.s.AllowDoc(e.Loc)
		children = append(children, e.Loc)
	}
}

func (l *loader) readEntries(r *resourcesync.Reader, doc string, fallback time.Time, set uint16) error {
	n := 0
	var skipped NonWebLocs
	defer skipped.Warn(l.s.log, doc)
	batch := make([]*catalog.Resource, 0, loadBatch)
	flush := func() error {
		took, err := l.sinkAll(batch)
		l.resources.Add(int64(took))
		if err != nil {
			return fmt.Errorf("read resource list %s: %s: %w", doc, batch[took].URI, refusedError{err})
		}
		batch = batch[:0]
		return nil
	}
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ferr := flush(); ferr != nil { // the entries before the break are good
				return ferr
			}
			return fmt.Errorf("read resource list: %w", err)
		}
		if skipped.Skip(e.Loc) {
			continue
		}
		res := ResourceOf(e, fallback)
		res.Set = set
		l.s.AllowMirrors(res.Links)
		if !strings.HasPrefix(res.URI, l.s.Origin+"/") {
			l.noteForeign(res.URI)
		}
		if res.Length == resourcesync.NoLength {
			l.missing.Add(1)
		}
		if batch = append(batch, res); len(batch) == loadBatch {
			if err := flush(); err != nil {
				return err
			}
		}
		if n++; n%10000 == 0 {
			l.report()
		}
	}
	if err := flush(); err != nil {
		return err
	}
	l.lists.Add(1)
	l.report()
	return nil
}

// expect adds a document's Content-Length (-1: none) to the bytes
// expected; one without makes the total unknown (-1) for good.
func (l *loader) expect(n int64) {
	for {
		old := l.expected.Load()
		next := old + n
		if old < 0 || n < 0 {
			next = -1
		}
		if l.expected.CompareAndSwap(old, next) {
			return
		}
	}
}

// reportEvery is how many bytes of a document a progress report waits for
// at most: a large list shows its bytes arriving.
const reportEvery = 64 << 10

// countingReader counts the bytes of a document as they arrive, for the
// progress reports.
type countingReader struct {
	r io.Reader
	l *loader
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		after := c.l.bytes.Add(int64(n))
		if after/reportEvery != (after-int64(n))/reportEvery {
			c.l.report()
		}
	}
	return n, err
}

// loadBatch is how many of a list's entries go into the catalog at once.
const loadBatch = 256

// ListTime is the time a list speaks for, used where an entry has no
// lastmod: 1.1's at, else 1.0's modified, else completed.
func ListTime(md *resourcesync.MD) time.Time {
	for _, t := range []time.Time{md.At, md.Modified, md.Completed} {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// ResourceOf is the catalog record of a listed entry; fallback dates it
// when it has no lastmod.
func ResourceOf(e *resourcesync.Entry, fallback time.Time) *catalog.Resource {
	lastmod := e.Lastmod
	if lastmod.IsZero() {
		lastmod = fallback
	}
	return &catalog.Resource{
		URI:     e.Loc,
		Length:  e.MD.Length,
		Lastmod: lastmod,
		Hashes:  e.MD.Hashes,
		Type:    e.MD.Type,
		Links:   e.Links,
	}
}

func (s *Source) warnReader(r *resourcesync.Reader) { s.warn(r.Warnings()) }

// AllowMirrors lets the client fetch from hosts the Source names as
// mirrors of its resources; its origin policy remembers them for a
// snapshot.
func (s *Source) AllowMirrors(links []resourcesync.Link) {
	for _, ln := range links {
		if ln.Rel == "duplicate" {
			s.policy.Admit(ln.Href, fetch.ReasonMirror)
		}
	}
}
