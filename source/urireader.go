package source

import (
	"log/slog"

	"rsfs/catalog"
	"rsfs/fetch"
)

// URIReader opens resources from their URI alone: no mirrors, no dump
// copies. It is how a protocol that publishes neither (Atom-PMH, package
// atomfeed) reads through the same Origin as a ResourceSync Source, with
// the same checks: the listed length, and an ETag held for the life of
// an open file (If-Range) so that a changed resource fails instead of
// mixing versions.
type URIReader struct{ s *Source }

// NewURIReader returns a reader fetching through client.
func NewURIReader(client *fetch.Client, log *slog.Logger) *URIReader {
	if log == nil {
		log = slog.Default()
	}
	return &URIReader{s: &Source{opts: Options{Client: client}, log: log}}
}

// OriginOf returns the origin of a catalog resource; its Links are not
// read.
func (u *URIReader) OriginOf(r *catalog.Resource) *Origin {
	return &Origin{s: u.s, copies: []copyRef{{url: r.URI}}, length: r.Length, etags: map[string]string{}}
}
