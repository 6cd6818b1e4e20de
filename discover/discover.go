// Package discover tells which protocol a URL speaks, and is the one place
// that asks: it runs package source's discovery of a ResourceSync Source
// with an Atom-PMH feed as the other protocol it recognizes (a URL that
// answers an Atom feed, or a page that links to one with nothing
// ResourceSync around it), and names what it found with protocol's names.
// source knows no Atom and no protocol names; atomfeed reads the feed
// found.
package discover

import (
	"context"
	"errors"

	"rsfs/fetch"
	"rsfs/protocol"
	"rsfs/source"
)

// Found is what discovery found at a URL: a ResourceSync Source or an
// Atom-PMH feed.
type Found struct {
	// Source is the ResourceSync Source found; nil for a feed.
	Source *source.Source
	// Feed is the Atom feed's subscription document found (its body,
	// when discovery read it whole); nil for a ResourceSync Source.
	Feed *fetch.Document
}

// Protocol is the protocol found: protocol.ResourceSync or
// protocol.AtomPMH.
func (f *Found) Protocol() string {
	if f.Feed != nil {
		return protocol.AtomPMH
	}
	return protocol.ResourceSync
}

// At discovers what is at rawURL, as source.Discover does, with Atom feeds
// recognized (opts.Other is set to them).
func At(ctx context.Context, rawURL string, opts source.Options) (*Found, error) {
	opts.Other = atom{}
	src, err := source.Discover(ctx, rawURL, opts)
	var other *source.OtherFound
	if errors.As(err, &other) {
		return &Found{Feed: &other.Doc}, nil
	}
	if err != nil {
		return nil, err
	}
	return &Found{Source: src}, nil
}
