// Package atomfeed mounts an Atom-PMH feed (package atompmh) through the
// same catalog, fetch client and file system as a ResourceSync Source: it
// harvests the feed, turns each active record's representations (its
// alternate links) into catalog resources, learns their sizes by HEAD
// before they are shown, and applies later harvests as catalog changes
// whose effects the file system hands to the kernel. It never touches
// FUSE.
//
// Each representation is one file, mapped from its URI by the catalog's
// rules; its mtime is the entry's atom:updated, its type the link's, and
// its properties the record's atom:id and atom:title (served as
// user.atompmh.id and user.atompmh.title).
package atomfeed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"rsfs/atompmh"
	"rsfs/catalog"
	"rsfs/copies"
	"rsfs/fetch"
	"rsfs/origin"
	"rsfs/protocol"
)

// Protocol names the catalog's attributes: user.atompmh.*.
const Protocol = protocol.AtomPMH

// Options configure a Feed.
type Options struct {
	Client *fetch.Client
	Logger *slog.Logger
	// Parse bounds each document read.
	Parse atompmh.Options
	// MaxDocuments bounds the documents one harvest walks; 0 means
	// atompmh.DefaultMaxDocuments.
	MaxDocuments int
	// Discovered, if it holds the subscription document (as discovery
	// read it), is read by the first harvest instead of a second GET.
	Discovered *fetch.Document
}

// Feed is one Atom-PMH feed, harvested into a catalog.
type Feed struct {
	// URL is the subscription document's.
	URL string
	// Origin is the subscription document's origin: representations there
	// map to the root of the tree.
	Origin string

	opts   Options
	log    *slog.Logger
	reader *copies.Reader
	// follower, once made (Tree.Follow, or NewFollower), is asked for an early
	// poll when a read finds a representation changed.
	follower *Follower

	mu    sync.Mutex        // guards etag, seen and first
	etag  *fetch.Validators // of the subscription document last harvested
	seen  *fetch.Validators // of the one being harvested; kept if it is read
	first *fetch.Document   // the subscription document discovery read; nil once used
}

// New returns the feed whose subscription document is at url, and lets
// the client fetch from its origin, as the Source's origin
// (fetch.ReasonSource), as ResourceSync discovery admits a Source's origin
// and the Capability List a page's resourcesync link names.
func New(url string, opts Options) (*Feed, error) {
	o, err := origin.Of(url)
	if err != nil {
		return nil, fmt.Errorf("atom feed %q: %w", url, err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("feed", url)
	opts.Client.Policy().Admit(o, fetch.ReasonSource)
	f := &Feed{URL: url, Origin: o, opts: opts, log: log}
	f.reader = copies.NewReader(opts.Client, copies.ReaderOptions{Log: log, URIOnly: true, Changed: f.changed})
	if d := opts.Discovered; d != nil && d.URL == url && d.Body != nil {
		f.first = d
	}
	return f, nil
}

// Client is the client the feed is read through.
func (f *Feed) Client() *fetch.Client { return f.opts.Client }

// NewCatalog returns an empty catalog for the feed's representations.
func (f *Feed) NewCatalog() *catalog.Catalog {
	return catalog.New(catalog.Options{Origin: f.Origin, Protocol: Protocol})
}

// Fetcher returns where a representation's bytes are read from: its URI,
// checked for the length learned.
func (f *Feed) Fetcher(r *catalog.Resource) *copies.Fetcher { return f.reader.Open(r) }

// changed asks the follower, once there is one, for an early poll: a read
// found a representation changed since it was harvested.
func (f *Feed) changed(*catalog.Resource) {
	if fl := f.follower; fl != nil {
		fl.PollSoon(0)
	}
}

// harvester returns a Harvester fetching through the client; the
// subscription document's ETag is kept for the next conditional fetch.
func (f *Feed) harvester(count func(url string)) *atompmh.Harvester {
	return &atompmh.Harvester{Options: f.opts.Parse, MaxDocuments: f.opts.MaxDocuments,
		Fetch: func(ctx context.Context, url string, conditional bool) (io.ReadCloser, error) {
			return f.fetch(ctx, url, conditional, count)
		}}
}

// keepValidators makes the subscription document just read the one the
// next conditional fetch asks about: only once a harvest has read it, so
// that a document that failed to parse is fetched whole again.
func (f *Feed) keepValidators() {
	f.mu.Lock()
	f.etag = f.seen
	f.mu.Unlock()
}

func (f *Feed) fetch(ctx context.Context, url string, conditional bool, count func(string)) (io.ReadCloser, error) {
	var v *fetch.Validators
	subscription := url == f.URL
	if subscription && conditional {
		f.mu.Lock()
		v = f.etag
		f.mu.Unlock()
	}
	if count != nil {
		count(url)
	}
	if subscription {
		if rc, ok, err := f.fromDiscovery(v); ok {
			return rc, err
		}
	}
	resp, err := f.opts.Client.Get(ctx, url, v)
	if errors.Is(err, fetch.ErrNotModified) {
		return nil, atompmh.ErrNotModified
	}
	if err != nil {
		return nil, err
	}
	if subscription {
		f.mu.Lock()
		f.seen = resp.Validators()
		f.mu.Unlock()
	}
	return resp.Body, nil
}

// fromDiscovery answers the first fetch of the subscription document with
// the document discovery read (ok), as the server would have: "not
// modified" when it is the version v, the one last harvested.
func (f *Feed) fromDiscovery(v *fetch.Validators) (io.ReadCloser, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.first
	if d == nil {
		return nil, false, nil
	}
	f.first = nil
	if v != nil && d.Validators != nil && sameVersion(*v, *d.Validators) {
		return nil, true, atompmh.ErrNotModified
	}
	f.seen = d.Validators
	return io.NopCloser(bytes.NewReader(d.Body)), true, nil
}

// sameVersion reports whether two answers' validators name one version:
// the same ETag, or, without ETags, the same Last-Modified.
func sameVersion(a, b fetch.Validators) bool {
	if a.ETag != "" || b.ETag != "" {
		return a.ETag == b.ETag
	}
	return a.LastModified != "" && a.LastModified == b.LastModified
}
