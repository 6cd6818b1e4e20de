// Package copies reads a resource's bytes from the places that hold them:
// its URI, the mirrors its Source names (rs:ln rel="duplicate"), and the
// members of dump packages (links of rel DumpRel, opened through the
// Members the protocol hands it). A Fetcher is one open file's view of
// them, and implements cache.Fetcher and cache.Alternates. It knows no
// protocol: ResourceSync (package source) and Atom-PMH (package atomfeed,
// which reads URIs alone) both read through it.
package copies

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"log/slog"

	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/resourcesync"
)

// DumpRel is the relation of a catalog link that names a copy of the
// resource inside a Resource Dump or Change Dump package: Href is the
// package, Path the member, and Hashes, Length and Modified the version the
// manifest describes. Pri 1 marks a copy to try before the resource's URI
// (the resource is in no Resource List, or its version came from a Change
// Dump); otherwise the copy is a fallback.
const DumpRel = "x-rsfs-dump"

// Members opens dump package members (package source, which reads the
// dumps' manifests).
type Members interface {
	// OpenMember streams bytes [off, off+n) of the member link names.
	OpenMember(ctx context.Context, link *resourcesync.Link, off, n int64) (io.ReadCloser, error)
}

// Reader opens resources' copies through one client.
type Reader struct {
	client *fetch.Client
	opts   ReaderOptions // Log set
	// datesDiffer: a URL answered past the caches with a Last-Modified
	// older than its listed lastmod, so this Source's HTTP dates are not
	// its lastmods, and an older date no longer makes rsfs ask again.
	datesDiffer atomic.Bool
}

// ReaderOptions configure a Reader.
type ReaderOptions struct {
	Log *slog.Logger
	// Members opens dump members; nil when the protocol has no dumps.
	Members Members
	// URIOnly reads every resource from its URI alone: no mirrors, no dump
	// copies (Atom-PMH names neither).
	URIOnly bool
	// Changed, if set, is told when a read finds a resource changed since
	// it was listed, so the follower can poll early: its URI (or a mirror)
	// serves another version (ErrVersionChanged), or a dump copy disagrees
	// with the listed version (the member's length or the manifest's hash
	// is not the catalog's, or its bytes fail verification). It is told at
	// most once per open file.
	Changed func(r *catalog.Resource)
}

// NewReader returns a Reader fetching through client.
func NewReader(client *fetch.Client, opts ReaderOptions) *Reader {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Reader{client: client, opts: opts}
}

// ErrVersionChanged means the bytes an origin serves are no longer the
// version the catalog (and so the reader) has: the resource changed.
var ErrVersionChanged = errors.New("the resource changed since it was listed")

// goneError marks an error saying that the version being read is no longer
// served: it has the VersionGone method cache.VersionGone asks for, so the
// open file fails every later read instead of mixing versions.
type goneError struct{ err error }

func (e goneError) Error() string     { return e.err.Error() }
func (e goneError) Unwrap() error     { return e.err }
func (e goneError) VersionGone() bool { return true }

// Fetcher is where a resource's bytes come from: its URI, then the mirrors
// the Source names (rs:ln rel="duplicate") in pri order, then a dump
// package member of the same version. A resource no Resource List names
// (known only from a dump) is read from its dump member first. Fetcher
// implements cache.Fetcher. One Fetcher serves one open file: it remembers
// each URL's ETag from its first answer and asks later ranges with
// If-Range, so a file that changes while open fails (EIO) instead of
// mixing versions.
type Fetcher struct {
	rd     *Reader
	r      *catalog.Resource // the version listed: its length is checked
	copies []copyRef

	mu     sync.Mutex
	etags  map[string]string
	first  int          // the first copy to try: copies before it served bad bytes
	served int          // the copy that answered last
	logged int          // the copy "served from another copy" was logged for; -1 none
	other  map[int]bool // dump copies found to hold another version: never tried again
	told   bool         // Changed was told: once per open file
	// fresh: a URL answered with another version than the one listed (a
	// length, an ETag or a Last-Modified that disagrees, or bytes that
	// fail the hash), which a shared cache may be serving from its old
	// copy. It was asked once more past the caches (fetch.NoCache), and
	// so is every later request of this open file.
	fresh bool
}

// copyRef is one place a resource's bytes can come from.
type copyRef struct {
	url  string
	dump *resourcesync.Link // nil for a URL
}

func (c copyRef) String() string {
	if c.dump != nil {
		return c.dump.Href + "!" + c.dump.Path
	}
	return c.url
}

// Open returns the copies of a catalog resource, for one open file.
func (rd *Reader) Open(r *catalog.Resource) *Fetcher {
	cs := []copyRef{{url: r.URI}}
	if !rd.opts.URIOnly {
		cs = candidates(r, rd.opts.Members != nil)
	}
	return &Fetcher{rd: rd, r: r, copies: cs, etags: map[string]string{}, logged: -1}
}

// candidates orders the places a resource can be read from.
func candidates(r *catalog.Resource, dumps bool) []copyRef {
	type mirror struct {
		href string
		pri  int
	}
	var ms []mirror
	var first, last []copyRef
	for i := range r.Links {
		l := &r.Links[i]
		switch {
		case l.Rel == "duplicate" && l.Href != "":
			pri := l.Pri
			if pri <= 0 {
				pri = int(^uint(0) >> 1)
			}
			ms = append(ms, mirror{l.Href, pri})
		case l.Rel == DumpRel && !dumps:
		case l.Rel == DumpRel && l.Pri == 1:
			first = append(first, copyRef{dump: l})
		case l.Rel == DumpRel:
			last = append(last, copyRef{dump: l})
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].pri < ms[j].pri })
	out := append(first, copyRef{url: r.URI})
	for _, m := range ms {
		out = append(out, copyRef{url: m.href})
	}
	return append(out, last...)
}

// OpenRange implements cache.Fetcher: it tries each copy in turn until one
// answers with the listed version's length. A read that finds the
// resource changed, or gone (404, 410), tells the Reader's Changed.
func (o *Fetcher) OpenRange(ctx context.Context, off, n int64) (io.ReadCloser, bool, error) {
	rc, toEnd, err := o.openRange(ctx, off, n)
	// A listed resource the Source no longer has (404, 410) was most likely
	// deleted since, so the set is polled early, as for another version.
	if errors.Is(err, ErrVersionChanged) || fetch.IsGone(err) {
		o.tellChanged()
	}
	return rc, toEnd, err
}

func (o *Fetcher) openRange(ctx context.Context, off, n int64) (io.ReadCloser, bool, error) {
	var errs []error
	o.mu.Lock()
	first := o.first
	o.mu.Unlock()
	for i := first; i < len(o.copies); i++ {
		c := o.copies[i]
		o.mu.Lock()
		other := o.other[i]
		o.mu.Unlock()
		if other {
			continue
		}
		rc, toEnd, err := o.open(ctx, i, off, n)
		if err == nil {
			o.mu.Lock()
			o.served = i
			log := i > 0 && o.logged != i // once per open file and copy, not per block
			if log {
				o.logged = i
			}
			o.mu.Unlock()
			if log {
				o.rd.opts.Log.Info("served from another copy", "uri", o.copies[0].String(), "copy", c.String())
			}
			return rc, toEnd, nil
		}
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		errs = append(errs, err)
		if i+1 < len(o.copies) {
			o.rd.opts.Log.Warn("copy failed; trying the next", "copy", c.String(), "err", err)
		}
	}
	return nil, false, fmt.Errorf("fetch %s: every copy failed: %w", o.copies[0].String(), errors.Join(errs...))
}

// SkipCopy implements cache.Alternates: the copy that answered last served
// bytes that failed verification, so reads move on to the copies after it.
// A dump copy whose bytes fail verification holds another version than
// the one listed: the Source changed, and Changed is told.
func (o *Fetcher) SkipCopy() bool {
	o.mu.Lock()
	bad := o.copies[o.served]
	if bad.dump == nil && !o.fresh {
		// A URL whose bytes fail the hash may be a shared cache's old
		// copy: it is asked once more, past the caches, before the next,
		// as a copy of its own (its ETag forgotten, as for a mirror:
		// the published hash checks what it serves).
		o.fresh = true
		delete(o.etags, bad.url)
		o.mu.Unlock()
		o.rd.opts.Log.Info("a copy's bytes failed verification; asking past any cache", "url", bad.url)
		return true
	}
	next := max(o.served, o.first) + 1 // never back to a copy skipped already
	if next < len(o.copies) {
		o.first = next
	}
	o.mu.Unlock()
	if bad.dump != nil {
		o.dumpDisagrees(bad, "its bytes fail verification")
	}
	return next < len(o.copies)
}

// dumpDisagrees tells Changed, once per open file, that a dump copy is of
// another version than the catalog lists.
func (o *Fetcher) dumpDisagrees(c copyRef, why string) {
	if o.tellChanged() {
		o.rd.opts.Log.Warn("a dump copy disagrees with the listed version: the resource changed; polling its set early",
			"uri", o.r.URI, "copy", c.String(), "why", why)
	}
}

// tellChanged tells Changed, once per open file (one early poll of the
// resource's set is enough), that the resource changed; it reports whether
// it told.
func (o *Fetcher) tellChanged() bool {
	o.mu.Lock()
	tell := !o.told
	o.told = true
	o.mu.Unlock()
	if tell && o.rd.opts.Changed != nil {
		o.rd.opts.Changed(o.r)
	}
	return tell
}

// otherVersion says whether dump link l, as its package and manifest
// describe it, is another version than r: another length, or another value
// of a hash both name.
func otherVersion(r *catalog.Resource, l *resourcesync.Link) string {
	if l.Length >= 0 && r.Length >= 0 && l.Length != r.Length {
		return fmt.Sprintf("the member has %d bytes, the listed length is %d", l.Length, r.Length)
	}
	for _, h := range l.Hashes {
		for _, rh := range r.Hashes {
			if strings.EqualFold(h.Alg, rh.Alg) && !strings.EqualFold(h.Value, rh.Value) {
				return fmt.Sprintf("the manifest's %s is %s, the listed one %s", h.Alg, h.Value, rh.Value)
			}
		}
	}
	return ""
}

func (o *Fetcher) open(ctx context.Context, i int, off, n int64) (io.ReadCloser, bool, error) {
	c := o.copies[i]
	if c.dump != nil {
		return o.openMember(ctx, i, off, n)
	}
	o.mu.Lock()
	fresh := o.fresh
	o.mu.Unlock()
	rc, toEnd, older, err := o.openURL(ctx, c.url, off, n, fresh)
	if fresh || (err == nil && !older) || (err != nil && !errors.Is(err, ErrVersionChanged)) {
		return rc, toEnd, err
	}
	// Another version than the one listed: a shared cache may be
	// answering from its old copy. Asked once more, past the caches.
	if err != nil {
		o.rd.opts.Log.Info("a copy answered with another version; asking past any cache", "url", c.url, "err", err)
	} else {
		rc.Close()
		o.rd.opts.Log.Info("a copy answered with a Last-Modified older than the listed lastmod; asking past any cache",
			"url", c.url, "lastmod", o.r.Lastmod.UTC().Format(time.RFC3339))
	}
	o.mu.Lock()
	o.fresh = true
	o.mu.Unlock()
	rc, toEnd, older, err = o.openURL(ctx, c.url, off, n, true)
	if err == nil && older {
		o.rd.datesDiffer.Store(true) // the origin's own date: served, and not asked again
	}
	return rc, toEnd, err
}

// openURL asks url for bytes [off, off+n): the whole content as a plain
// GET (which a shared cache stores), a part of it by Range. Past the
// caches when fresh. older reports an answer whose Last-Modified is older
// than the listed lastmod (while the Reader compares dates).
func (o *Fetcher) openURL(ctx context.Context, url string, off, n int64, fresh bool) (rc io.ReadCloser, toEnd, older bool, err error) {
	if fresh {
		ctx = fetch.NoCache(ctx)
	}
	o.mu.Lock()
	etag := o.etags[url]
	o.mu.Unlock()
	var body *fetch.RangeBody
	if off == 0 && n > 0 && n == o.r.Length {
		body, err = o.rd.client.Whole(ctx, url, etag)
	} else {
		body, err = o.rd.client.Range(ctx, url, off, n, etag)
	}
	if errors.Is(err, fetch.ErrChanged) {
		return nil, false, false, goneError{fmt.Errorf("%s: %w: %w", url, ErrVersionChanged, err)}
	}
	if err != nil {
		return nil, false, false, err
	}
	if body.Total >= 0 && o.r.Length >= 0 && body.Total != o.r.Length {
		body.Close()
		return nil, false, false, goneError{fmt.Errorf("%s: %w: listed length %d, served %d", url, ErrVersionChanged, o.r.Length, body.Total)}
	}
	older = o.olderThanListed(body.LastModified())
	if body.ETag != "" && etag == "" && !older {
		o.mu.Lock()
		o.etags[url] = body.ETag
		o.mu.Unlock()
	}
	return body, !body.Partial && !(off == 0 && n == o.r.Length), older, nil
}

// olderThanListed reports whether an answer's Last-Modified is older than
// the listed lastmod (HTTP dates have whole seconds), unless this Source's
// dates were found to differ from its lastmods.
func (o *Fetcher) olderThanListed(lastModified string) bool {
	if lastModified == "" || o.r.Lastmod.IsZero() || o.rd.datesDiffer.Load() {
		return false
	}
	t, err := http.ParseTime(lastModified)
	return err == nil && t.Before(o.r.Lastmod.Truncate(time.Second))
}

// openMember opens bytes [off, off+n) of dump copy i. A member of another
// length than the one listed is another version: found from the link before
// it is read, or from the bytes (a member that ends before off+n, or that
// goes on past the listed length: a range that reaches the listed end asks
// one byte more, to see), it fails this read, is never tried again by this
// open file, and Changed is told.
func (o *Fetcher) openMember(ctx context.Context, i int, off, n int64) (io.ReadCloser, bool, error) {
	c := o.copies[i]
	if why := otherVersion(o.r, c.dump); why != "" {
		o.otherVersion(i, why)
		return nil, false, fmt.Errorf("%s: %w: %s", c, ErrVersionChanged, why)
	}
	ask := n
	atEnd := o.r.Length >= 0 && off+n == o.r.Length
	if atEnd {
		ask++
	}
	rc, err := o.rd.opts.Members.OpenMember(ctx, c.dump, off, ask)
	if err != nil {
		return nil, false, err
	}
	return &memberReader{rc: rc, o: o, i: i, want: n, atEnd: atEnd}, false, nil
}

// otherVersion records that dump copy i holds another version.
func (o *Fetcher) otherVersion(i int, why string) {
	o.mu.Lock()
	if o.other == nil {
		o.other = map[int]bool{}
	}
	o.other[i] = true
	o.mu.Unlock()
	o.dumpDisagrees(o.copies[i], why)
}

// memberReader passes a member's bytes on, and fails (ErrVersionChanged)
// when the member turns out shorter or longer than the version listed.
type memberReader struct {
	rc    io.ReadCloser
	o     *Fetcher
	i     int
	want  int64 // bytes to pass on
	atEnd bool  // the range reaches the listed end: one more byte was asked
	got   int64
}

func (m *memberReader) Read(p []byte) (int, error) {
	if m.got >= m.want {
		return 0, io.EOF
	}
	if int64(len(p)) > m.want-m.got {
		p = p[:m.want-m.got]
	}
	k, err := m.rc.Read(p)
	m.got += int64(k)
	switch {
	case m.got < m.want && err == io.EOF:
		return k, m.fail("the member ends %d bytes short of the listed length %d", m.want-m.got, m.o.r.Length)
	case m.got == m.want && m.atEnd:
		// The listed end: the member must end here too. Its last bytes
		// are withheld if it goes on (io.ReadFull would drop an error
		// that comes with them).
		var one [1]byte
		if n, _ := io.ReadFull(m.rc, one[:]); n > 0 {
			return 0, m.fail("the member goes on past the listed length %d", m.o.r.Length)
		}
		return k, nil
	}
	return k, err
}

func (m *memberReader) fail(format string, args ...any) error {
	why := fmt.Sprintf(format, args...)
	m.o.otherVersion(m.i, why)
	return fmt.Errorf("%s: %w: %s", m.o.copies[m.i], ErrVersionChanged, why)
}

func (m *memberReader) Close() error { return m.rc.Close() }
