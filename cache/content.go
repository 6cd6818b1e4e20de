package cache

import (
	"context"
	"errors"
	"io"

	"rsfs/resourcesync"
)

// Fetcher fetches one content's bytes.
type Fetcher interface {
	// OpenRange returns a stream of the bytes [off, off+n) of the content.
	// If toEnd is true the stream continues past n to the end of the content
	// (the server ignored Range): the caller may keep reading it to fill
	// later blocks.
	OpenRange(ctx context.Context, off, n int64) (rc io.ReadCloser, toEnd bool, err error)
}

// Content describes what the Source published: the reader never returns
// bytes that disagree with it.
type Content struct {
	ID     string              // content identity (version): cache keys include it
	Name   string              // the URI, for logs and errors
	Size   int64               // published length (always known here)
	Hashes []resourcesync.Hash // may be empty; verified with the strongest known: sha-256 > sha-1 > md5
}

// ErrIntegrity is wrapped, with the URI and what mismatched, by every error
// that reports bytes disagreeing with the published Content: a length
// mismatch, a short body or a hash mismatch.
var ErrIntegrity = errors.New("integrity check failed")
