package source

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"rsfs/fetch"
)

// listValidators remembers, per set, the validators of every Resource List
// (and index) last loaded, so a gap in the Change Lists can be checked by
// conditional GETs instead of a reload.
type listValidators struct {
	mu   sync.Mutex
	sets map[*Set]map[string]*fetch.Validators
}

func (l *listValidators) reset() {
	l.mu.Lock()
	l.sets = nil
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
