package source

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"rsfs/fetch"
	"rsfs/resourcesync"
)

// listValidators remembers, per set, the validators of every Resource List
// (and index) last loaded, and the time its header gave, so a gap in the
// Change Lists, or drift, can be checked by conditional GETs (or, without
// validators, by reading a header) instead of a reload.
type listValidators struct {
	mu   sync.Mutex
	sets map[*Set]map[string]*fetch.Validators
	at   map[string]time.Time // by URL
}

func (l *listValidators) reset() {
	l.mu.Lock()
	l.sets, l.at = nil, nil
	l.mu.Unlock()
}

func (l *listValidators) note(set *Set, url string, v *fetch.Validators) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sets == nil {
		l.sets = map[*Set]map[string]*fetch.Validators{}
	}
	if l.sets[set] == nil {
		l.sets[set] = map[string]*fetch.Validators{}
	}
	l.sets[set][url] = v
}

func (l *listValidators) noteAt(url string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.at == nil {
		l.at = map[string]time.Time{}
	}
	l.at[url] = at
}

func (l *listValidators) atOf(url string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := l.at[url]
	return at, ok
}

func (l *listValidators) of(set *Set) map[string]*fetch.Validators {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]*fetch.Validators, len(l.sets[set]))
	for u, v := range l.sets[set] {
		out[u] = v
	}
	return out
}

// ListValidators returns the validators of set's Resource List (or index)
// at url from its last load or NoteListValidators; nil if it has none.
func (s *Source) ListValidators(set *Set, url string) *fetch.Validators {
	return s.lists.of(set)[url]
}

// NoteListValidators keeps the validators of set's Resource List at url,
// read again since it was loaded, for the next conditional GET of it.
func (s *Source) NoteListValidators(set *Set, url string, v *fetch.Validators) {
	s.lists.note(set, url, v)
}

// ResourceListsUnchanged asks for every Resource List of sets with the
// validators of its last load, and reports whether all answered 304. A
// list without validators, or never loaded (a Source restored from a
// snapshot), counts as changed.
func (s *Source) ResourceListsUnchanged(ctx context.Context, sets []*Set) (bool, error) {
	for _, set := range sets {
		vals := s.lists.of(set)
		if len(vals) == 0 {
			return false, nil
		}
		for u, v := range vals {
			if v == nil || (v.ETag == "" && v.LastModified == "") {
				return false, nil
			}
			resp, err := s.opts.Client.Get(ctx, u, v)
			if errors.Is(err, fetch.ErrNotModified) {
				continue
			}
			if err != nil {
				return false, fmt.Errorf("resource list %s: %w", u, err)
			}
			resp.Body.Close()
			return false, nil
		}
	}
	return true, nil
}

// ResourceListsChanged reports whether a Resource List (or index) of set
// changed since it was last loaded: the Capability List now names one
// that was not loaded (a publisher that writes each Resource List under a
// new name, as py-resourcesync does, and deletes the old one), a loaded
// one is gone (404 or 410), a conditional GET answered with a new body,
// or, for a list served without validators, a header whose time (at)
// differs. Only headers are read. A set none of whose lists was loaded in
// this run (one restored from a snapshot) counts as changed.
func (s *Source) ResourceListsChanged(ctx context.Context, set *Set) (bool, error) {
	vals := s.lists.of(set)
	if len(vals) == 0 {
		return true, nil
	}
	for _, u := range s.Docs(set, resourcesync.CapResourceList) {
		if _, ok := vals[u]; !ok {
			return true, nil
		}
	}
	for u, v := range vals {
		if v != nil && v.ETag == "" && v.LastModified == "" {
			v = nil
		}
		changed, err := s.listChanged(ctx, u, v)
		if fetch.IsGone(err) {
			return true, nil
		}
		if err != nil || changed {
			return changed, err
		}
	}
	return false, nil
}

// listChanged asks for the Resource List at u: with validators v, a 304 is
// no change and a body is one; without, its header's time decides.
func (s *Source) listChanged(ctx context.Context, u string, v *fetch.Validators) (bool, error) {
	resp, err := s.opts.Client.Get(ctx, u, v)
	if errors.Is(err, fetch.ErrNotModified) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("resource list %s: %w", u, err)
	}
	defer resp.Body.Close()
	if v != nil {
		return true, nil
	}
	r, err := resourcesync.NewReader(resp.Body, resp.URL, s.opts.Parse)
	if err != nil {
		return false, fmt.Errorf("resource list %s: %w", u, err)
	}
	h, err := r.Header()
	if err != nil {
		return false, fmt.Errorf("resource list %s: %w", u, err)
	}
	was, ok := s.lists.atOf(u)
	return !ok || !ListTime(&h.MD).Equal(was), nil
}
