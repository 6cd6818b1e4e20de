package atomfeed

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"rsfs/atompmh"
	"rsfs/catalog"
	"rsfs/fetch"
)

// snapshotVersion is bumped when saved changes shape.
const snapshotVersion = 1

// saved is what a Follower remembers across mounts: the harvest state and,
// for each representation it shows, the size learned, so that a remount
// rebuilds the same tree with no request and then polls.
type saved struct {
	Version    int
	URL        string
	Validators fetch.Validators
	State      *atompmh.State
	Held       map[string][]string // record → URIs shown
	Sizes      map[string]int64    // URI → size
	Retry      []string
}

// Snapshot encodes the tree's state. It must not run during a Poll
// (Run's goroutine is the only caller of Poll once mounted: call it
// through Run's Save hook or after Run has returned).
func (fl *Tree) Snapshot() ([]byte, error) {
	s := saved{Version: snapshotVersion, URL: fl.f.URL, State: fl.state, Held: fl.held,
		Sizes: fl.sizes, Retry: slices.Collect(maps.Keys(fl.retry))}
	fl.f.mu.Lock()
	if fl.f.etag != nil {
		s.Validators = *fl.f.etag
	}
	fl.f.mu.Unlock()
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(&s); err != nil {
		return nil, fmt.Errorf("snapshot of feed %s: %w", fl.f.URL, err)
	}
	return b.Bytes(), nil
}

// SavedURL is the URL of the feed a Snapshot is of, read with no Feed: a
// mount whose feed cannot be reached makes its Feed from it, to Restore.
func SavedURL(data []byte) (string, error) {
	var s saved
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&s); err != nil {
		return "", fmt.Errorf("feed snapshot: %w", err)
	}
	if s.URL == "" {
		return "", errors.New("feed snapshot: no feed URL")
	}
	return s.URL, nil
}

// Restore returns the feed's tree rebuilt from a Snapshot: its catalog
// (sealed) holds what the saved mount showed. Nothing is fetched; its
// follower's Poll then catches up by a conditional GET.
func (f *Feed) Restore(data []byte) (*Tree, error) {
	var s saved
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&s); err != nil {
		return nil, fmt.Errorf("feed snapshot: %w", err)
	}
	switch {
	case s.Version != snapshotVersion:
		return nil, fmt.Errorf("feed snapshot: version %d, want %d", s.Version, snapshotVersion)
	case s.URL != f.URL:
		return nil, fmt.Errorf("feed snapshot: of %s, not %s", s.URL, f.URL)
	case s.State == nil:
		return nil, errors.New("feed snapshot: no harvest state")
	}
	fl := f.newTree(f.NewCatalog())
	fl.state = s.State
	if fl.state.Pool == nil {
		fl.state.Pool = map[string]*atompmh.Entry{}
	}
	if fl.state.Deleted == nil {
		fl.state.Deleted = map[string]time.Time{}
	}
	if fl.state.Digests == nil {
		fl.state.Digests = map[string][32]byte{}
	}
	for id, uris := range s.Held {
		if err := fl.restoreRecord(id, uris, s.Sizes); err != nil {
			return nil, err
		}
	}
	for _, id := range s.Retry {
		fl.retry[id] = true
	}
	if s.Validators != (fetch.Validators{}) {
		v := s.Validators
		f.etag = &v
	}
	if err := fl.cat.Seal(); err != nil {
		return nil, fmt.Errorf("feed snapshot: %w", err)
	}
	fl.noteRestored()
	return fl, nil
}

// restoreRecord adds the files one record showed.
func (fl *Tree) restoreRecord(id string, uris []string, sizes map[string]int64) error {
	e, ok := fl.state.Pool[id]
	if !ok {
		return fmt.Errorf("feed snapshot: record %s shown but not in the pool", id)
	}
	types := map[string]string{}
	for _, l := range e.Links {
		types[l.Href] = l.Type
	}
	for _, u := range uris {
		size, ok := sizes[u]
		if !ok {
			return fmt.Errorf("feed snapshot: no size for %s", u)
		}
		r := &catalog.Resource{URI: u, Length: size, Lastmod: e.Updated, Type: types[u], Props: recordProps(e), Links: recordLinks(e)}
		if err := fl.cat.Add(r); err != nil {
			return fmt.Errorf("feed snapshot: %s: %w", u, err)
		}
		fl.owner[u] = id
		fl.sizes[u] = size
	}
	fl.held[id] = slices.Clone(uris)
	return nil
}
