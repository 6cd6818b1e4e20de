// Package audit compares what a mount shows, or would show from its
// snapshot, with its ResourceSync Source as it is now (changes.Truth), by
// URI through changes.Compare, and reports the differences by the paths
// the mount shows them at. It can also read files and check their bytes
// against the length and hashes the Source publishes. It reads a live
// mount's tree through stat(2) and the extended attributes, as any program
// would: it does not know FUSE.
package audit

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"

	"rsfs/catalog"
	"rsfs/changes"
	"rsfs/source"
)

// Options say what an audit reports and reads besides the trees.
type Options struct {
	// URL is the URL the mount was given, for the report.
	URL string
	// Bytes is how many files to read, picked at random, and check
	// against the published length and hashes; 0 reads none.
	Bytes int
}

// Report is what an audit found. Paths are relative to the mount's root,
// as the mount maps URIs to paths.
type Report struct {
	Source   string `json:"source"`             // the URL the mount was given
	Origin   string `json:"origin"`             // the Source's origin
	Mount    string `json:"mount,omitempty"`    // a live mount: its directory
	Snapshot string `json:"snapshot,omitempty"` // a snapshot: its file
	Files    int    `json:"files"`              // the files the mount shows (or the snapshot holds)
	Truth    int    `json:"truth"`              // the resources the Source has now

	Created []string `json:"created"` // paths the Source has and the mount lacks
	Updated []string `json:"updated"` // paths the mount shows in another version
	Deleted []string `json:"deleted"` // paths the mount shows and the Source lacks

	BytesChecked int          `json:"bytes_checked"`
	WrongBytes   []WrongBytes `json:"wrong_bytes"`

	Drift int `json:"drift"` // created + updated + deleted + wrong bytes
}

// WrongBytes is a file whose bytes do not match what the Source publishes.
type WrongBytes struct {
	Path   string `json:"path"`
	URI    string `json:"uri"`
	Reason string `json:"reason"`
}

// Snapshot compares the snapshot at snapPath, what a mount of src would
// start from, with src now. The files it reads are any of the Source's,
// by URI.
func Snapshot(ctx context.Context, src *source.Source, snapPath string, o Options) (*Report, error) {
	truth, err := changes.Truth(ctx, src)
	if err != nil {
		return nil, err
	}
	have, _, err := catalog.LoadSnapshot(snapPath, catalog.Options{Origin: src.Origin})
	if err != nil {
		return nil, err
	}
	rep := &Report{Source: o.URL, Origin: src.Origin, Snapshot: snapPath, Files: have.Len(), Truth: truth.Len()}
	rep.compare(have, pathIn(have), truth)
	if o.Bytes > 0 {
		client := src.Client()
		all := files(truth, truth.URIs(), pathIn(truth))
		rep.checkBytes(pick(all, o.Bytes), func(_ string, want *catalog.Resource) (io.ReadCloser, error) {
			resp, err := client.Get(ctx, want.URI, nil)
			if err != nil {
				return nil, err
			}
			return resp.Body, nil
		})
	}
	rep.finish()
	return rep, nil
}

// Mount compares the live mount at dir (of src) with src now. The files it
// reads are the mount's, of those it shows in the Source's version.
func Mount(ctx context.Context, src *source.Source, dir string, o Options) (*Report, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	truth, err := changes.Truth(ctx, src)
	if err != nil {
		return nil, err
	}
	shown, err := walk(abs, src.Origin)
	if err != nil {
		return nil, err
	}
	rep := &Report{Source: o.URL, Origin: src.Origin, Mount: abs, Files: shown.cat.Len(), Truth: truth.Len()}
	d := rep.compare(shown.cat, shown.pathOf, truth)
	if o.Bytes > 0 {
		same := files(truth, sameIn(shown.cat, truth, d), shown.pathOf)
		rep.checkBytes(pick(same, o.Bytes), func(p string, _ *catalog.Resource) (io.ReadCloser, error) {
			return os.Open(filepath.Join(abs, filepath.FromSlash(p)))
		})
	}
	rep.finish()
	return rep, nil
}

// compare fills the report's created, updated and deleted paths from
// changes.Compare of have, whose resources are at the paths shownAt says,
// with truth, and returns what Compare found.
func (rep *Report) compare(have *catalog.Catalog, shownAt func(uri string) string, truth *catalog.Catalog) changes.Drift {
	d := changes.Compare(have, truth)
	rep.Created = paths(d.Created, pathIn(truth))
	rep.Updated = paths(d.Updated, shownAt)
	rep.Deleted = paths(d.Deleted, shownAt)
	return d
}

// sameIn is the URIs of truth that have holds in the same version: all of
// both but what d found created or updated.
func sameIn(have, truth *catalog.Catalog, d changes.Drift) []string {
	updated := make(map[string]bool, len(d.Updated))
	for _, u := range d.Updated {
		updated[u] = true
	}
	var out []string
	for _, u := range truth.URIs() {
		if _, ok := have.ByURI(u); ok && !updated[u] {
			out = append(out, u)
		}
	}
	return out
}

// files is cat's records of uris, by the path pathOf says.
func files(cat *catalog.Catalog, uris []string, pathOf func(string) string) map[string]*catalog.Resource {
	out := make(map[string]*catalog.Resource, len(uris))
	for _, u := range uris {
		id, ok := cat.ByURI(u)
		if !ok {
			continue
		}
		if r, ok := cat.Resource(id); ok {
			out[pathOf(u)] = r
		}
	}
	return out
}

// pathIn is the path cat maps a URI to; the URI itself when cat has none.
func pathIn(cat *catalog.Catalog) func(uri string) string {
	return func(uri string) string {
		if id, ok := cat.ByURI(uri); ok {
			if p := cat.Path(id); p != "" {
				return p
			}
		}
		return uri
	}
}

// paths is the sorted paths of uris.
func paths(uris []string, pathOf func(string) string) []string {
	out := make([]string, 0, len(uris))
	for _, u := range uris {
		out = append(out, pathOf(u))
	}
	slices.Sort(out)
	return out
}

func (rep *Report) finish() {
	for _, l := range []*[]string{&rep.Created, &rep.Updated, &rep.Deleted} {
		if *l == nil {
			*l = []string{}
		}
	}
	if rep.WrongBytes == nil {
		rep.WrongBytes = []WrongBytes{}
	}
	rep.Drift = len(rep.Created) + len(rep.Updated) + len(rep.Deleted) + len(rep.WrongBytes)
}
