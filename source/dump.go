package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"rsfs/catalog"
	"rsfs/copies"
	"rsfs/fetch"
	"rsfs/resourcesync"
	"rsfs/zipindex"
)

// packages opens each dump package and keeps its directory. A failed open
// is remembered for a while (retryBase, doubling up to retryMax) so that
// readers of its members do not each pay for it, then tried again: a
// network blip must not cost the package for the life of the mount. A
// failure caused by the caller's own context is not remembered.
type packages struct {
	s  *Source
	mu sync.Mutex
	m  map[string]*openPackage
	cp *zipindex.CheckpointCache

	retryBase, retryMax time.Duration // zero: defaultRetryBase, defaultRetryMax
	now                 func() time.Time
}

const (
	defaultRetryBase = 2 * time.Second
	defaultRetryMax  = 5 * time.Minute
)

type openPackage struct {
	mu       sync.Mutex
	pkg      *zipindex.Package
	err      error         // the last failure, kept until retryAt
	retryAt  time.Time     // when err expires
	failures int           // consecutive failures, for the backoff
	opening  chan struct{} // non-nil while an open runs; closed when it ends
}

func (p *packages) entry(url string) *openPackage {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]*openPackage{}
		p.cp = zipindex.NewCheckpointCache(64 << 20)
	}
	op, ok := p.m[url]
	if !ok {
		op = &openPackage{}
		p.m[url] = op
	}
	return op
}

// open returns the opened package: the one already open, the error of a
// recent failure, or the result of opening it now (one open at a time per
// package; others wait for it, or for their own ctx).
func (p *packages) open(ctx context.Context, url string) (*zipindex.Package, error) {
	op := p.entry(url)
	for {
		op.mu.Lock()
		if op.pkg != nil {
			op.mu.Unlock()
			return op.pkg, nil
		}
		if ch := op.opening; ch != nil {
			op.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("open dump package %s: %w", url, ctx.Err())
			}
		}
		if op.err != nil && p.clock().Before(op.retryAt) {
			err := op.err
			op.mu.Unlock()
			return nil, err
		}
		done := make(chan struct{})
		op.opening = done
		op.mu.Unlock()

		pkg, err := p.openNow(ctx, url)
		p.settle(ctx, op, pkg, err)
		close(done)
		return pkg, err
	}
}

// forget drops pkg, open at url, found replaced: the next open reads the
// package at url again.
func (p *packages) forget(url string, pkg *zipindex.Package) {
	op := p.entry(url)
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.pkg == pkg {
		op.pkg = nil
	}
}

// settle records the result of an open, unless it failed because ctx ended.
func (p *packages) settle(ctx context.Context, op *openPackage, pkg *zipindex.Package, err error) {
	op.mu.Lock()
	defer op.mu.Unlock()
	op.opening = nil
	switch {
	case err == nil:
		op.pkg, op.err, op.failures = pkg, nil, 0
	case ctx.Err() != nil:
		// The caller went away: says nothing about the package.
	default:
		op.failures++
		op.err, op.retryAt = err, p.clock().Add(p.backoff(op.failures))
	}
}

func (p *packages) backoff(failures int) time.Duration {
	base, most := p.retryBase, p.retryMax
	if base <= 0 {
		base = defaultRetryBase
	}
	if most <= 0 {
		most = defaultRetryMax
	}
	d := base
	for i := 1; i < failures && d < most; i++ {
		d *= 2
	}
	return min(d, most)
}

func (p *packages) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// openNow learns the package's size and ETag (HEAD), then reads its
// central directory by Range (If-Range on the ETag from then on). Every
// read is bounded by the ctx of the call that makes it.
func (p *packages) openNow(ctx context.Context, url string) (*zipindex.Package, error) {
	client := p.s.opts.Client
	meta, err := client.Head(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("open dump package: %w", err)
	}
	if meta.Length <= 0 {
		return nil, fmt.Errorf("open dump package %s: %w", url, errNoLength)
	}
	// The reader outlives this call (members are read through it later);
	// zipindex reads through its ReadRange with each caller's ctx.
	ra := fetch.NewReaderAt(context.Background(), client, url, meta.Length, meta.ETag)
	pkg, err := zipindex.Open(ctx, ra, meta.Length, url, zipindex.Options{Checkpoints: p.cp})
	if err != nil {
		return nil, fmt.Errorf("open dump package: %w", err)
	}
	return pkg, nil
}

// errNoLength: a package's server gives no length, and members cannot be
// found without it (the directory is at the end).
var errNoLength = errors.New("the server gives no length (a package is read from its end)")

// dumpCopies are the dump members found while loading, by URI.
type dumpCopies struct {
	mu      sync.Mutex
	byURI   map[string][]dumpCopy
	merged  map[string]bool
	deleted map[string]time.Time // by URI, the latest deletion a Change Dump manifest lists
	dropped int                  // dump-only copies left out: deleted or older than a Resource List
	// listedAt is, per set, the oldest time its Resource Lists speak for
	// (set once they are read, before unlisted).
	listedAt map[*Set]time.Time
	number   func(*Set) uint16                            // a set's number for the catalog (Source.SetNumber)
	docs     func(*Set, resourcesync.Capability) []string // a set's documents (Source.Docs)
}

type dumpCopy struct {
	link  resourcesync.Link
	entry resourcesync.Entry // the manifest entry, for dump-only resources
	at    time.Time          // the time the dump speaks for it at (copyTime)
	set   *Set
	// resourceDump: a Resource Dump names its package (not only a Change
	// Dump).
	resourceDump bool
}

// copyTime is the time a dump speaks for an entry at: its change time
// (datetime) in a Change Dump, else the manifest's own time (1.1's at, 1.0's
// modified), else the time of the dump that names the package (dumpAt),
// else the entry's lastmod. A Resource Dump's lastmod is only the
// resource's own time.
func copyTime(e *resourcesync.Entry, man *resourcesync.Header, dumpAt time.Time) time.Time {
	if !e.MD.Datetime.IsZero() {
		return e.MD.Datetime
	}
	if t := ListTime(&man.MD); !t.IsZero() {
		return t
	}
	if !dumpAt.IsZero() {
		return dumpAt
	}
	return e.Lastmod
}

// noteDeleted records a deletion a Change Dump manifest lists.
func (d *dumpCopies) noteDeleted(uri string, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.deleted == nil {
		d.deleted = map[string]time.Time{}
	}
	if old, ok := d.deleted[uri]; !ok || at.After(old) {
		d.deleted[uri] = at
	}
}

// stale reports whether a dump-only copy must not become a resource: a
// later (or simultaneous) deletion is listed, or its set's Resource Lists
// are strictly newer than the dump and do not name it (an archived dump must not bring
// back a resource deleted since). A set with no Resource List is listed by
// its Resource Dumps: a Change Dump's copy older than they are, which they
// do not name (it would be newer), was deleted since too; a Resource
// Dump's own copies are what lists it, whatever times its documents give
// (resync-client's fixture dates its manifest before the dump's at).
func (d *dumpCopies) stale(uri string, c *dumpCopy) bool {
	if del, ok := d.deleted[uri]; ok && !del.Before(c.at) {
		return true
	}
	set := c.set
	listed := d.listedAt[set]
	if set == nil || listed.IsZero() || !c.at.Before(listed) || d.docs == nil {
		return false
	}
	if len(d.docs(set, resourcesync.CapResourceList)) > 0 {
		return true
	}
	return len(d.docs(set, resourcesync.CapResourceDump)) > 0 && !c.resourceDump
}

func (d *dumpCopies) add(uri string, c dumpCopy) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byURI == nil {
		d.byURI = map[string][]dumpCopy{}
		d.merged = map[string]bool{}
	}
	d.byURI[uri] = append(d.byURI[uri], c)
}

// attach adds to a listed resource the dump copies of the same version
// (docs/DESIGN.md §4 rule 3); copies of another version are not origins for it.
func (d *dumpCopies) attach(r *catalog.Resource) {
	d.mu.Lock()
	defer d.mu.Unlock()
	copies, ok := d.byURI[r.URI]
	if !ok {
		return
	}
	d.merged[r.URI] = true
	for _, c := range copies {
		if sameVersion(r, &c.link) {
			link := c.link
			link.Pri = 0 // the listed URI first, the copy its fallback (copies.DumpRel)
			r.Links = append(r.Links[:len(r.Links):len(r.Links)], link)
			r.Links = addNewLinks(r.Links, c.entry.Links)
		}
	}
}

// addNewLinks appends to have the links of more it lacks (the same rel
// and href): a manifest's links for the version a Resource List lists
// join the list's own.
func addNewLinks(have, more []resourcesync.Link) []resourcesync.Link {
	for _, l := range more {
		if !slices.ContainsFunc(have, func(h resourcesync.Link) bool { return h.Rel == l.Rel && h.Href == l.Href }) {
			have = append(have, l)
		}
	}
	return have
}

// unlisted returns resources for the dump copies no Resource List named:
// for those the dump is the first origin.
func (d *dumpCopies) unlisted() []*catalog.Resource {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []*catalog.Resource
	for uri, copies := range d.byURI {
		if d.merged[uri] {
			continue
		}
		newest := copies[0]
		for _, c := range copies[1:] {
			if c.at.After(newest.at) {
				newest = c
			}
		}
		if d.stale(uri, &newest) {
			d.dropped++
			continue
		}
		link := newest.link
		link.Pri = 1
		// Without a lastmod its mtime is the time the dump speaks for it
		// at, as a listed resource's is its list's at.
		r := ResourceOf(&newest.entry, newest.at)
		// The manifest entry's own links (rs:ln), then its copy.
		r.Length, r.Hashes = link.Length, link.Hashes
		r.Links = append(slices.Clip(newest.entry.Links), link)
		if d.number != nil {
			r.Set = d.number(newest.set)
		}
		out = append(out, r)
	}
	return out
}

// sameVersion: the dump copy l is the version r lists (catalog.SameVersion,
// the one rule of the same version).
func sameVersion(r *catalog.Resource, l *resourcesync.Link) bool {
	return catalog.SameVersion(r, l.Hashes, l.Modified, l.Length)
}

// readDumps reads every Resource Dump and Change Dump of every set (and
// their indexes: dumpWalk, and the one walker of change documents,
// ChangeWalk), then opens every package they name and records its
// manifest's members (readPackage). A dump that cannot be read (or a child
// of its index) is left out with a warning (once, until it reads again)
// and tried again at a later poll (RetryUnread): the Resource Lists,
// the other dumps and the index's other children still load. Only a Source
// with no Resource List, and no package named by a dump that could be read,
// fails. What it read is kept (l.read) for a walk in the same
// use (Truth) to read again without asking.
func (l *loader) readDumps(ctx context.Context) error {
	l.pkgs = map[string]dumpPackage{}
	var urls []string // the packages, in the order the dumps name them
	unread := map[string]unreadDoc{}
	for _, set := range l.s.Sets() {
		for _, u := range l.s.Docs(set, resourcesync.CapResourceDump) {
			found, err := l.s.readResourceDump(ctx, u)
			if err != nil && ctx.Err() != nil {
				return err
			} else if err != nil {
				unread[u] = unreadDoc{set, UnreadDoc{err, time.Now()}}
			}
			urls = l.addPackages(urls, set, found, true)
			if len(l.s.Docs(set, resourcesync.CapResourceList)) == 0 {
				l.noteDumpTimes(set, found)
			}
		}
		for _, u := range l.s.Docs(set, resourcesync.CapChangeDump) {
			v := &dumpVisitor{l: l}
			w := ChangeWalk{Src: l.s, V: v} // from the start: a load skips no package
			if err := w.Doc(ctx, u, -1, time.Time{}, 0, true); err != nil {
				v.errs = append(v.errs, err)
			}
			if ctx.Err() != nil {
				return ctx.Err()
			} else if len(v.errs) > 0 {
				unread[u] = unreadDoc{set, UnreadDoc{errors.Join(v.errs...), time.Now()}}
			}
			urls = l.addPackages(urls, set, v.found, false)
		}
	}
	l.s.noteUnreadDumps(unread)
	if len(l.pkgs) == 0 && len(unread) > 0 && len(l.seeds) == 0 {
		errs := make([]error, 0, len(unread))
		for _, d := range unread {
			errs = append(errs, d.Err)
		}
		return fmt.Errorf("load: no Resource List, and no dump that names a package could be read: %w", errors.Join(errs...))
	}
	return parallel(ctx, l.s.opts.Parallel, urls, l.readPackage)
}

// dumpVisitor is a load's ChangeVisitor of one Change Dump (or index): it
// reads each document whole, once (kept in l.read), and collects the
// packages they name, with the time of the dump that names each; a
// document that cannot be read is noted in errs, and its siblings are
// read. The packages are read after, in parallel (readPackage).
type dumpVisitor struct {
	l      *loader
	found  []dumpPackage
	errs   []error
	visits int
}

func (v *dumpVisitor) Get(ctx context.Context, u string) (*resourcesync.Document, error) {
	doc, err := v.l.s.GetDoc(ctx, u)
	v.l.read.noteDoc(u, doc, err)
	return doc, err
}

func (*dumpVisitor) Unchanged(string) ([]resourcesync.Entry, bool) { return nil, false }

func (v *dumpVisitor) Visit(string, int, time.Time, bool) int { v.visits++; return v.visits - 1 }

func (*dumpVisitor) Read(string, int, int, *resourcesync.Document, bool) {}

func (v *dumpVisitor) Packages(_ context.Context, _ string, _ int, dump *resourcesync.Document, pkgs []resourcesync.Entry) {
	for _, e := range pkgs {
		v.found = append(v.found, dumpPackage{url: e.Loc, at: ListTime(&dump.Header.MD)})
	}
}

func (v *dumpVisitor) Failed(_ string, err error) { v.errs = append(v.errs, err) }

// noteDumpTimes takes the times a set's Resource Dumps speak for as its
// list time when it has no Resource List: they list it, and its follower
// starts there, as it starts at a Resource List's at.
func (l *loader) noteDumpTimes(set *Set, found []dumpPackage) {
	for _, p := range found {
		if !p.at.IsZero() {
			l.noteListTime(set, p.at)
		}
	}
}

// addPackages records the packages a dump of set names, and appends to
// urls those not named before.
func (l *loader) addPackages(urls []string, set *Set, found []dumpPackage, resourceDump bool) []string {
	for _, p := range found {
		old, dup := l.pkgs[p.url]
		if !dup {
			urls = append(urls, p.url)
		}
		p.set, p.resourceDump = set, resourceDump || old.resourceDump
		l.pkgs[p.url] = p
	}
	return urls
}

// dumpPackage is a package a dump names: its URL, the time the dump
// speaks for (its at, 1.0's modified, else completed), and its set.
type dumpPackage struct {
	url          string
	at           time.Time
	set          *Set
	resourceDump bool // a Resource Dump names it (not only a Change Dump)
}

// PackageRead is a dump package as ReadPackage read it: the package, its
// manifest, and the manifest's entries, each created or updated resource
// with its member as a copy of that version (copies.DumpRel, Pri 1: read
// first, the URI the fallback) and the member's size where the manifest
// gives no length.
type PackageRead struct {
	URL      string
	Pkg      *zipindex.Package
	Manifest *resourcesync.Document
	Entries  []resourcesync.Entry
}

// CopyOf returns the copy ReadPackage gave e, one of p's entries; nil if
// it has none (a deletion, or a member the package lacks).
func (p *PackageRead) CopyOf(e *resourcesync.Entry) *resourcesync.Link {
	if n := len(e.Links); n > 0 && e.Links[n-1].Rel == copies.DumpRel && e.Links[n-1].Href == p.URL {
		return &e.Links[n-1]
	}
	return nil
}

// ReadPackage opens the dump package at url and reads its manifest: the
// one reader of packages, for a load (readDumps) and every walk of Change
// Dumps (package changes). A created or updated entry that names no member,
// or one the package lacks or of another size, is warned of: its resource
// is read from its URI. pkg is set when the package opened though its
// manifest could not be read (err says why).
func (s *Source) ReadPackage(ctx context.Context, url string) (*PackageRead, error) {
	man, pkg, err := s.openManifest(ctx, url)
	p := &PackageRead{URL: url, Pkg: pkg, Manifest: man}
	if err != nil {
		return p, err
	}
	p.Entries = make([]resourcesync.Entry, 0, len(man.Entries))
	for i := range man.Entries {
		e := man.Entries[i]
		if e.MD.Change != resourcesync.ChangeDeleted {
			if m, ok := pkg.Lookup(e.MD.Path); ok && e.MD.Path != "" && (e.MD.Length < 0 || e.MD.Length == m.Size) {
				e.Links = append(e.Links[:len(e.Links):len(e.Links)], resourcesync.Link{Rel: copies.DumpRel, Href: url,
					Path: e.MD.Path, Hashes: e.MD.Hashes, Length: m.Size, Modified: e.Lastmod, Type: e.MD.Type, Pri: 1})
				if e.MD.Length < 0 {
					e.MD.Length = m.Size
				}
			} else {
				s.log.Warn("dump manifest names a member the package lacks or of another size; the resource is read from its URI",
					"package", url, "path", e.MD.Path, "uri", e.Loc)
			}
		}
		p.Entries = append(p.Entries, e)
	}
	return p, nil
}

// readPackage records the members of one package (ReadPackage). A package
// that cannot be opened or whose manifest cannot be read (hostile or
// corrupt ZIP, not a ZIP at all, no length, unreachable) is skipped with a
// warning: its members are not copies of anything, and every other
// document still loads.
func (l *loader) readPackage(ctx context.Context, url string) error {
	p, err := l.s.ReadPackage(ctx, url)
	l.read.notePackage(url, p, err)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		l.s.log.Warn("dump package skipped: its members are read from their URIs, or absent if no Resource List names them",
			"package", url, "err", err)
		l.skipped.Add(1)
		if l.pkgs[url].resourceDump {
			l.skippedResource.Add(1)
		}
		return nil
	}
	var skipped NonWebLocs
	defer skipped.Warn(l.s.log, url)
	byLastmod := DatedByLastmod(p.Entries)
	named := l.pkgs[url]
	for i := range p.Entries {
		e := &p.Entries[i]
		if skipped.Skip(e.Loc) {
			continue
		}
		if e.MD.Change == resourcesync.ChangeDeleted {
			l.dumps.noteDeleted(e.Loc, ChangeTime(e, byLastmod))
			continue
		}
		link := p.CopyOf(e)
		if link == nil {
			continue // warned of by ReadPackage
		}
		entry := *e
		entry.Links = e.Links[: len(e.Links)-1 : len(e.Links)-1] // the manifest's own links
		l.dumps.add(e.Loc, dumpCopy{link: *link, entry: entry, at: copyTime(e, &p.Manifest.Header, named.at),
			set: named.set, resourceDump: named.resourceDump})
	}
	return nil
}

// openManifest opens the package at url and reads its manifest. A package
// opened before that has since been replaced at its URL (WEKO3 rebuilds an
// item's package when the item changes) is opened again, once. The package
// comes back when it opened, whatever became of its manifest.
func (s *Source) openManifest(ctx context.Context, url string) (*resourcesync.Document, *zipindex.Package, error) {
	for try := 0; ; try++ {
		pkg, err := s.pkgs.open(ctx, url)
		if err != nil {
			return nil, nil, err
		}
		man, err := ReadManifest(ctx, pkg)
		if errors.Is(err, fetch.ErrChanged) && try == 0 {
			s.pkgs.forget(url, pkg)
			continue
		}
		if err != nil {
			return nil, pkg, fmt.Errorf("dump package %s: %w", url, err)
		}
		return man, pkg, nil
	}
}

// OpenPackage opens the dump package at url (a Resource Dump's or a Change
// Dump's), shared with every reader of its members: one already open is
// returned, and a recent failure is remembered for a while.
func (s *Source) OpenPackage(ctx context.Context, url string) (*zipindex.Package, error) {
	return s.pkgs.open(ctx, url)
}

// OpenMember streams bytes [off, off+n) of a dump copy: Source is the
// copies.Members of its resources.
func (s *Source) OpenMember(ctx context.Context, l *resourcesync.Link, off, n int64) (io.ReadCloser, error) {
	pkg, err := s.pkgs.open(ctx, l.Href)
	if err != nil {
		return nil, err
	}
	m, ok := pkg.Lookup(l.Path)
	if !ok {
		return nil, fmt.Errorf("dump package %s has no member %s", l.Href, l.Path)
	}
	return pkg.Reader(ctx, m, off, n)
}

// parallel runs fn on every item with at most n at once, and returns
// their errors, joined.
func parallel(ctx context.Context, n int, items []string, fn func(context.Context, string) error) error {
	if n <= 0 {
		n = 1
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, it := range items {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(ctx, it); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ReadDumpBatch reads the bytes of resources that have a dump copy of their
// version (whether it is their first origin or a fallback), with one request
// per run of members in a package instead of one per resource
// (zipindex.Package.ReadMembers: a run reads through the members not asked
// for between two wanted ones where that costs less than another request:
// up to the bytes of one round trip, 16 to 256 KiB, on fetch's reader, 64
// KiB on one that does not measure its network; and its runs go several to
// a multi-range request, where a gap of more than 256 bytes starts a new
// range); the packages are read at once, up to dumpBatchPackages of them. It returns the bytes by index; nil where a
// resource has no dump copy or its member could not be read (the normal
// read path, with its own checks and fallbacks, is left to it).
func (s *Source) ReadDumpBatch(ctx context.Context, rs []*catalog.Resource) [][]byte {
	out := make([][]byte, len(rs))
	byPackage := map[string][]int{}
	var hrefs []string
	for i, r := range rs {
		if l := dumpLinkOf(r); l != nil {
			if byPackage[l.Href] == nil {
				hrefs = append(hrefs, l.Href)
			}
			byPackage[l.Href] = append(byPackage[l.Href], i)
		}
	}
	_ = parallel(ctx, dumpBatchPackages, hrefs, func(ctx context.Context, href string) error {
		s.readPackageBatch(ctx, href, rs, byPackage[href], out)
		return nil
	})
	return out
}

// dumpBatchPackages is how many packages one ReadDumpBatch reads at once.
const dumpBatchPackages = 4

// readPackageBatch reads the members of package href that resources idx
// (indexes into rs) have as dump copies, into out at the same indexes.
func (s *Source) readPackageBatch(ctx context.Context, href string, rs []*catalog.Resource, idx []int, out [][]byte) {
	pkg, err := s.pkgs.open(ctx, href)
	if err != nil {
		return
	}
	var ms []*zipindex.Member
	var which []int
	for _, i := range idx {
		if m, ok := pkg.Lookup(dumpLinkOf(rs[i]).Path); ok {
			ms, which = append(ms, m), append(which, i)
		}
	}
	datas, errs := pkg.ReadMembers(ctx, ms)
	for k, i := range which {
		if errs[k] != nil {
			s.log.Warn("dump member not read in a batch; it will be read alone", "uri", rs[i].URI, "err", errs[k])
			continue
		}
		out[i] = datas[k]
	}
}

// dumpLinkOf returns a resource's dump copy (only copies of its version are
// ever attached), preferring one that is its first origin.
func dumpLinkOf(r *catalog.Resource) *resourcesync.Link {
	var found *resourcesync.Link
	for i := range r.Links {
		if l := &r.Links[i]; l.Rel == copies.DumpRel && (found == nil || l.Pri == 1) {
			found = l
		}
	}
	return found
}
