package source

import (
	"fmt"
	"strings"
	"time"
)

// The Capability Lists a Source Description (or a 1.0 Capability List
// Index) names that could not be read do not refuse the Source: each
// stays a set of its own, with no documents when it was never read (or
// those a snapshot remembers, KeepSavedSets), shown degraded in the status
// and read again at each poll (RetryUnread, with the follower's reader),
// which reloads the set once it reads. They are kept in the registry of
// unread documents (unread.go) as UnreadCapabilityList; only a Source where
// no set could be read is refused (readableSets).

// noteUnreadCapabilityList records that the set's Capability List could
// not be read, and warns of it once, until it reads again.
func (s *Source) noteUnreadCapabilityList(set *Set, err error) {
	if s.unread.note(set.URL, UnreadCapabilityList, set, err, time.Now()) {
		s.log.Warn("capability list not read: its set is left out (or kept as the snapshot had it), and it is tried again at each poll",
			"capability_list", set.URL, "err", err)
	}
}

// NoteCapabilityListUnread records a failure to read the set's Capability
// List: one a re-read Source Description names anew, or one still unread
// (its latest error, without another warning).
func (s *Source) NoteCapabilityListUnread(set *Set, err error) { s.noteUnreadCapabilityList(set, err) }

// NoteCapabilityListRead records that the set's Capability List, which
// could not be read, reads now.
func (s *Source) NoteCapabilityListRead(set *Set) {
	if s.unread.remove(set.URL, UnreadCapabilityList) {
		s.log.Info("capability list read, which could not be before", "capability_list", set.URL)
	}
}

// UnreadCapabilityList reports whether the set's Capability List could not
// be read, and why and since when.
func (s *Source) UnreadCapabilityList(set *Set) (UnreadDoc, bool) {
	if set.URL == "" {
		return UnreadDoc{}, false
	}
	d, ok := s.unread.get(set.URL, UnreadCapabilityList)
	return d.UnreadDoc, ok
}

// readableSets returns nil when a set of the Source has a Capability List
// that was read (or documents of its own); else the error that names every
// Capability List that could not be read, and why.
func (s *Source) readableSets() error {
	var errs capErrors
	for _, set := range s.sets {
		d, unread := s.UnreadCapabilityList(set)
		if !unread || len(set.Docs) > 0 {
			return nil
		}
		errs = append(errs, d.Err)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("no Capability List it names could be read: %w", errs)
}

// capErrors are the errors of every Capability List that could not be
// read, on one line.
type capErrors []error

func (e capErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e capErrors) Unwrap() []error { return e }

// KeepSavedSets gives each set whose Capability List discovery could not
// read the documents, channels and links a saved state's set of the same
// Capability List had, and the time it has been unread since, when the
// state says so: a remount never drops what a snapshot holds of a set
// because its Capability List cannot be read now, and the set's Resource
// Lists (as the snapshot knew them) are still read at a reload. Call it
// before the Source is followed.
func (s *Source) KeepSavedSets(st *State) {
	saved := map[string]*Set{}
	for _, set := range st.Sets {
		if set.URL != "" {
			saved[set.URL] = set
		}
	}
	for _, set := range s.Sets() {
		_, unread := s.UnreadCapabilityList(set)
		old, ok := saved[set.URL]
		if !unread || !ok {
			continue
		}
		s.setsMu.Lock()
		set.Docs, set.Hubs, set.Links = cloneDocs(old.Docs), old.Hubs, old.Links
		s.setsMu.Unlock()
		for _, docs := range set.Docs {
			for _, u := range docs {
				s.AllowDoc(u)
			}
		}
		for _, sd := range st.unread() {
			if sd.Kind == UnreadCapabilityList && sd.URL == set.URL {
				s.unread.backdate(set.URL, UnreadCapabilityList, sd.Since)
			}
		}
		s.log.Info("capability list not read: its set is kept as the snapshot had it", "capability_list", set.URL)
	}
}
