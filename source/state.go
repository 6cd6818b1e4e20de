package source

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"rsfs/fetch"
)

// stateVersion is the version of State's encoding.
const stateVersion = 1

// State is what a snapshot keeps of a Source besides its catalog: the sets
// discovery found and how far each set's changes were applied.
type State struct {
	Version int    `json:"version"`
	Origin  string `json:"origin"`
	Entry   string `json:"entry"`
	Sets    []*Set `json:"sets"`
	// Positions are, by set, how far its changes were applied: what the
	// follower (package changes, which encodes and decodes them) saved;
	// source keeps them as they were written.
	Positions json.RawMessage `json:"positions"`
	// Mirrors are the origins the Source named as mirrors (rel="duplicate")
	// of resources in the catalog saved with this state.
	Mirrors []string `json:"mirrors,omitempty"`
	// Unread are the documents that could not be read (but a poll's
	// change documents), each with its kind and set: a mount from this
	// state shows them and tries them again, as the saving one did, and
	// keeps the sets of unread Capability Lists as saved while they fail
	// (KeepSavedSets).
	Unread []SavedUnreadDoc `json:"unread,omitempty"`
	// UnreadDumps, UnreadCapabilityLists and UnreadLists are how states
	// saved before the one registry kept them, by URL: read (State.unread),
	// never written.
	UnreadDumps           map[string]SavedUnreadDoc `json:"unread_dumps,omitempty"`
	UnreadCapabilityLists map[string]SavedUnreadDoc `json:"unread_capability_lists,omitempty"`
	UnreadLists           map[string]SavedUnreadDoc `json:"unread_lists,omitempty"`
}

// SavedUnreadDoc is an unread document as a State keeps it.
type SavedUnreadDoc struct {
	URL   string     `json:"url,omitempty"` // empty in an older state's maps, which key by it
	Kind  UnreadKind `json:"kind,omitempty"`
	Error string     `json:"error"`
	Since time.Time  `json:"since"`
	// Set is the set's key (SetKey); an older state names it for a
	// Resource List only.
	Set string `json:"set,omitempty"`
}

// unread returns the state's unread documents, those of an older state's
// maps among them: a Capability List's set is its URL; a dump's kind is
// left for its set to say (Source.dumpKind).
func (st *State) unread() []SavedUnreadDoc {
	out := slices.Clone(st.Unread)
	add := func(m map[string]SavedUnreadDoc, kind UnreadKind) {
		for _, u := range slices.Sorted(maps.Keys(m)) {
			sd := m[u]
			sd.URL, sd.Kind = u, kind
			if kind == UnreadCapabilityList {
				sd.Set = u
			}
			out = append(out, sd)
		}
	}
	add(st.UnreadCapabilityLists, UnreadCapabilityList)
	add(st.UnreadLists, UnreadResourceList)
	add(st.UnreadDumps, "")
	return out
}

// State returns the Source's state for a snapshot, with the positions its
// follower encoded: copies of the sets as they are now. The caller holds
// whatever lock keeps the sets' list times from changing (a reload).
func (s *Source) State(positions json.RawMessage) *State {
	return &State{Version: stateVersion, Origin: s.Origin, Entry: s.Entry, Sets: s.setCopies(),
		Positions: positions, Mirrors: s.policy.Mirrors(), Unread: s.savedUnread()}
}

// DecodeState reads a State saved by a snapshot (changes.Follower.Snapshot).
func DecodeState(data []byte) (*State, error) {
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("decode source state: %w", err)
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("decode source state: version %d, want %d", st.Version, stateVersion)
	}
	return &st, nil
}

// Restore rebuilds a Source from a saved state, without the network: for
// mounting from a snapshot while the Source is unreachable.
func Restore(st *State, opts Options) *Source {
	s := newSource(st.Origin, fetch.ReasonSource, opts)
	s.Entry, s.sets = st.Entry, st.Sets
	s.AllowSavedMirrors(st)
	s.adoptUnread(st, retryOrder...)
	for _, set := range s.sets {
		if set.URL != "" {
			s.AllowDoc(set.URL)
		}
		for _, docs := range set.Docs {
			for _, u := range docs {
				s.AllowDoc(u)
			}
		}
	}
	return s
}

// SameSets reports whether discovery found the same sets and documents as
// a saved state. When not, the Source changed its Capability Lists and the
// catalog must be reloaded.
func (s *Source) SameSets(st *State) bool {
	sets := s.Sets()
	if len(sets) != len(st.Sets) {
		return false
	}
	for i, set := range sets {
		old := st.Sets[i]
		if set.URL != old.URL || !reflect.DeepEqual(s.AllDocs(set), old.Docs) {
			return false
		}
	}
	return true
}

// AdoptListedAt carries the saved sets' list times over to freshly
// discovered ones (they are learned only by loading).
func (s *Source) AdoptListedAt(st *State) {
	for i, set := range s.Sets() {
		if i < len(st.Sets) {
			set.ListedAt = st.Sets[i].ListedAt
		}
	}
}

// AllowSavedMirrors allows the mirror origins of a saved state: its catalog
// names them, and a catalog loaded from a snapshot is not read through
// Resource Lists again.
func (s *Source) AllowSavedMirrors(st *State) {
	for _, o := range st.Mirrors {
		s.policy.Admit(o, fetch.ReasonSavedMirror)
	}
}
