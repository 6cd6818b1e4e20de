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
	"sort"
	"sync"

	"log/slog"

	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/resourcesync"
)

// DumpRel is the relation of a catalog link that names a copy of the
// resource inside a Resource Dump or Change Dump package: Href is the
// package, Path the member, and Hashes, Length and Modified the version the
// manifest describes. Pri 1 marks a copy to try before the resource's URI
// (the resource is in no Resource List); otherwise the copy is a fallback.
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
	// it was listed (ErrVersionChanged), so the follower can poll early.
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
	first  int // the first copy to try: copies before it served bad bytes
	served int // the copy that answered last
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
	return &Fetcher{rd: rd, r: r, copies: cs, etags: map[string]string{}}
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
// resource changed tells the Reader's Changed.
func (o *Fetcher) OpenRange(ctx context.Context, off, n int64) (io.ReadCloser, bool, error) {
	rc, toEnd, err := o.openRange(ctx, off, n)
	if errors.Is(err, ErrVersionChanged) && o.rd.opts.Changed != nil {
		o.rd.opts.Changed(o.r)
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
		rc, toEnd, err := o.open(ctx, c, off, n)
		if err == nil {
			o.mu.Lock()
			o.served = i
			o.mu.Unlock()
			if i > 0 {
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
func (o *Fetcher) SkipCopy() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	next := max(o.served, o.first) + 1 // never back to a copy skipped already
	if next >= len(o.copies) {
		return false
	}
	o.first = next
	return true
}

func (o *Fetcher) open(ctx context.Context, c copyRef, off, n int64) (io.ReadCloser, bool, error) {
	if c.dump != nil {
		rc, err := o.rd.opts.Members.OpenMember(ctx, c.dump, off, n)
		return rc, false, err
	}
	o.mu.Lock()
	etag := o.etags[c.url]
	o.mu.Unlock()
	body, err := o.rd.client.Range(ctx, c.url, off, n, etag)
	if errors.Is(err, fetch.ErrChanged) {
		return nil, false, goneError{fmt.Errorf("%s: %w: %w", c.url, ErrVersionChanged, err)}
	}
	if err != nil {
		return nil, false, err
	}
	if body.Total >= 0 && o.r.Length >= 0 && body.Total != o.r.Length {
		body.Close()
		return nil, false, goneError{fmt.Errorf("%s: %w: listed length %d, served %d", c.url, ErrVersionChanged, o.r.Length, body.Total)}
	}
	if body.ETag != "" && etag == "" {
		o.mu.Lock()
		o.etags[c.url] = body.ETag
		o.mu.Unlock()
	}
	return body, !body.Partial, nil
}
