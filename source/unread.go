package source

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"rsfs/resourcesync"
)

// The documents that could not be read are kept in one registry per
// Source, by URL and kind: the Capability Lists discovery could not read
// (unreadcaps.go), the Resource Lists (or index children) and the dumps the
// last load left out (unreadlists.go, dump.go), and the change documents
// the follower's last poll of a set could not read. Loading goes on without
// them (docs/dumps.md: a dump that cannot be read never stops the mount);
// a poll tries them again (RetryUnread); the status shows them (Unread);
// a snapshot keeps them (State.Unread) but the change documents, which the
// next poll reads anyway.

// UnreadKind is what an unread document is to its set.
type UnreadKind string

// The kinds of unread documents, in the order RetryUnread reads them.
const (
	UnreadCapabilityList UnreadKind = "capability list"
	UnreadResourceList   UnreadKind = "resource list"   // or a Resource List Index, or its child
	UnreadResourceDump   UnreadKind = "resource dump"   // or an index of them, as the load reads it for packages
	UnreadChangeDump     UnreadKind = "change dump"     // or an index of them, as the load reads it for packages
	UnreadChangeDocument UnreadKind = "change document" // a Change List, Change Dump, index or package, as a poll reads it
)

// retryOrder is the kinds RetryUnread reads, in order; a change document
// is read again by the next poll itself.
var retryOrder = []UnreadKind{UnreadCapabilityList, UnreadResourceList, UnreadResourceDump, UnreadChangeDump}

// loaded reports whether the load reads documents of kind k: one that
// reads again stays unread until a reload reads it (a reload that fails
// must not forget it), and none is read again once a reload is due.
func (k UnreadKind) loaded() bool {
	return k == UnreadResourceList || k == UnreadResourceDump || k == UnreadChangeDump
}

type unreadKey struct {
	url  string
	kind UnreadKind
}

// unreadDocs is the registry.
type unreadDocs struct {
	mu sync.Mutex
	m  map[unreadKey]unreadDoc
}

type unreadDoc struct {
	set *Set
	UnreadDoc
}

// UnreadDoc is why a document could not be read, and since when.
type UnreadDoc struct {
	Err   error
	Since time.Time // the first load, poll or retry it failed at, in this run of failures
}

// Unread is one document that could not be read.
type Unread struct {
	URL  string
	Kind UnreadKind
	UnreadDoc
}

// replace makes now (by URL) the unread documents of the kinds that kind
// says, of set (nil: of every set), and returns those that were. One
// unread before keeps the time it has been unread since.
func (d *unreadDocs) replace(set *Set, kinds []UnreadKind, now map[string]unreadDoc, kind func(u string, ud unreadDoc) UnreadKind) (was map[unreadKey]unreadDoc) {
	keys := make(map[string]unreadKey, len(now)) // asked before the lock: kind may take the sets' lock
	for u, ud := range now {
		keys[u] = unreadKey{u, kind(u, ud)}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	was = map[unreadKey]unreadDoc{}
	for k, ud := range d.m {
		if slices.Contains(kinds, k.kind) && (set == nil || ud.set == set) {
			was[k] = ud
			delete(d.m, k)
		}
	}
	if d.m == nil {
		d.m = map[unreadKey]unreadDoc{}
	}
	for u, ud := range now {
		k := keys[u]
		if old, ok := was[k]; ok && old.Since.Before(ud.Since) {
			ud.Since = old.Since
		}
		d.m[k] = ud
	}
	return was
}

// note records the latest failure to read a document, and reports
// whether it was not unread before (its time since is kept).
func (d *unreadDocs) note(u string, kind UnreadKind, set *Set, err error, at time.Time) (first bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = map[unreadKey]unreadDoc{}
	}
	k := unreadKey{u, kind}
	old, was := d.m[k]
	if was {
		at, set = old.Since, old.set
	}
	d.m[k] = unreadDoc{set, UnreadDoc{Err: err, Since: at}}
	return !was
}

// remove forgets a document that reads now, and reports whether it was
// unread.
func (d *unreadDocs) remove(u string, kind UnreadKind) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := unreadKey{u, kind}
	_, was := d.m[k]
	delete(d.m, k)
	return was
}

// backdate makes a document unread since t, when that is earlier.
func (d *unreadDocs) backdate(u string, kind UnreadKind, t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := unreadKey{u, kind}
	if ud, ok := d.m[k]; ok && t.Before(ud.Since) {
		ud.Since = t
		d.m[k] = ud
	}
}

// get returns a document's entry.
func (d *unreadDocs) get(u string, kind UnreadKind) (unreadDoc, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ud, ok := d.m[unreadKey{u, kind}]
	return ud, ok
}

// list returns the unread documents of set (nil: of every set) of the
// kinds given (none: of every kind), sorted by URL and kind.
func (d *unreadDocs) list(set *Set, kinds ...UnreadKind) []Unread {
	d.mu.Lock()
	var out []Unread
	for k, ud := range d.m {
		if (set == nil || ud.set == set) && (len(kinds) == 0 || slices.Contains(kinds, k.kind)) {
			out = append(out, Unread{URL: k.url, Kind: k.kind, UnreadDoc: ud.UnreadDoc})
		}
	}
	d.mu.Unlock()
	slices.SortFunc(out, func(a, b Unread) int {
		return cmp.Or(cmp.Compare(a.URL, b.URL), cmp.Compare(a.Kind, b.Kind))
	})
	return out
}

// byURL is list as a map by URL, nil when empty: the view of one kind.
func (d *unreadDocs) byURL(set *Set, kinds ...UnreadKind) map[string]UnreadDoc {
	var out map[string]UnreadDoc
	for _, u := range d.list(set, kinds...) {
		if out == nil {
			out = map[string]UnreadDoc{}
		}
		out[u.URL] = u.UnreadDoc
	}
	return out
}

// Unread returns set's documents that could not be read, one per URL,
// sorted by URL: the status's view. A document both the load and the
// last poll could not read (a Change Dump) is shown as the poll found it.
func (s *Source) Unread(set *Set) []Unread {
	all := s.unread.list(set)
	out := all[:0]
	for _, u := range all {
		if n := len(out); n > 0 && out[n-1].URL == u.URL {
			if u.Kind == UnreadChangeDocument {
				out[n-1] = u
			}
			continue
		}
		out = append(out, u)
	}
	return out
}

// NoteChangeDocuments records the change documents of set a poll that
// started at started could not read (failed, by URL): they replace those
// of the poll before, each unread since the first poll it failed at.
func (s *Source) NoteChangeDocuments(set *Set, started time.Time, failed map[string]error) {
	now := make(map[string]unreadDoc, len(failed))
	for u, err := range failed {
		now[u] = unreadDoc{set, UnreadDoc{Err: err, Since: started}}
	}
	s.unread.replace(set, []UnreadKind{UnreadChangeDocument}, now,
		func(string, unreadDoc) UnreadKind { return UnreadChangeDocument })
}

// noteUnreadDumps records the dumps a load could not read, and warns of
// each, once until it reads again: a dump that still fails at a reload is
// not news.
func (s *Source) noteUnreadDumps(unread map[string]unreadDoc) {
	was := s.unread.replace(nil, []UnreadKind{UnreadResourceDump, UnreadChangeDump}, unread, s.dumpKind)
	for u, d := range unread {
		if _, ok := was[unreadKey{u, s.dumpKind(u, d)}]; !ok {
			s.log.Warn("dump not read: its packages' copies are left out, and it is tried again at the next poll",
				"dump", u, "err", d.Err)
		}
	}
	for k := range was {
		if _, ok := unread[k.url]; !ok {
			s.log.Info("dump read, which the last load could not", "dump", k.url)
		}
	}
}

// dumpKind says whether a dump the load could not read is a Resource Dump
// (one its set names as such) or a Change Dump.
func (s *Source) dumpKind(u string, d unreadDoc) UnreadKind {
	if d.set != nil && slices.Contains(s.Docs(d.set, resourcesync.CapResourceDump), u) {
		return UnreadResourceDump
	}
	return UnreadChangeDump
}

// UnreadDumps returns set's dumps that could not be read when the Source
// was last loaded, with why, by URL; nil when every one was read.
func (s *Source) UnreadDumps(set *Set) map[string]UnreadDoc {
	return s.unread.byURL(set, UnreadResourceDump, UnreadChangeDump)
}

// Reread reads one unread document again, and reports whether what it
// reads now asks for a reload. RetryUnread reads each kind with its own,
// and those that callers give (a Capability List's: the follower adopts
// what it names).
type Reread func(ctx context.Context, set *Set, u string) (reload bool, err error)

// RetryUnread reads again each document that could not be read, kind by
// kind in retryOrder (read, when given, overrides how a kind is read), and
// reports whether a reload is due, and why (the kind that asked first). A
// document that reads now is forgotten, but one the load reads (a Resource
// List, a dump), which stays until the reload reads it; one that still
// fails keeps its latest error, without another warning. Once a reload is
// due (due: the caller's already is), documents the reload reads anyway
// are not read.
func (s *Source) RetryUnread(ctx context.Context, due bool, read map[UnreadKind]Reread) (reload bool, why UnreadKind) {
	own := map[UnreadKind]Reread{UnreadResourceList: s.rereadList, UnreadResourceDump: s.rereadDump, UnreadChangeDump: s.rereadDump}
	for _, kind := range retryOrder {
		if kind.loaded() && (due || reload) {
			break
		}
		r := read[kind]
		if r == nil {
			r = own[kind]
		}
		if r == nil {
			continue
		}
		for _, u := range s.unread.list(nil, kind) {
			ud, ok := s.unread.get(u.URL, kind)
			if !ok {
				continue
			}
			again, err := r(ctx, ud.set, u.URL)
			if ctx.Err() != nil {
				return reload, why
			}
			if err != nil {
				s.unread.note(u.URL, kind, ud.set, err, time.Now())
				continue
			}
			if !kind.loaded() {
				s.unread.remove(u.URL, kind)
			}
			s.log.Info(string(kind)+" read, which could not be before", "document", u.URL)
			if again && !reload {
				reload, why = true, kind
			}
		}
	}
	return reload, why
}

// rereadDump reads an unread dump (and its index) again: reading now, its
// packages' copies need a reload, which reads every dump again.
func (s *Source) rereadDump(ctx context.Context, set *Set, u string) (bool, error) {
	if err := s.readDump(ctx, set, u); err != nil {
		return false, err
	}
	return true, nil
}

// readDump reads set's dump u again, as a load does (the documents, not the
// packages), and returns why it, or a child of its index, cannot be read.
func (s *Source) readDump(ctx context.Context, set *Set, u string) error {
	if !slices.Contains(s.Docs(set, resourcesync.CapChangeDump), u) {
		_, err := s.readResourceDump(ctx, u)
		return err
	}
	v := &dumpVisitor{l: &loader{s: s, read: &Reads{}}}
	w := ChangeWalk{Src: s, V: v}
	if err := w.Doc(ctx, u, -1, time.Time{}, 0, true); err != nil {
		v.errs = append(v.errs, err)
	}
	return errors.Join(v.errs...)
}

// savedUnread is the registry as a State keeps it (but the change
// documents: the next poll reads them anyway); nil for none.
func (s *Source) savedUnread() []SavedUnreadDoc {
	var out []SavedUnreadDoc
	for _, set := range s.Sets() {
		key := s.SetKey(set)
		for _, u := range s.unread.list(set) {
			if u.Kind != UnreadChangeDocument {
				out = append(out, SavedUnreadDoc{URL: u.URL, Kind: u.Kind, Set: key, Error: u.Err.Error(), Since: u.Since})
			}
		}
	}
	return out
}

// adoptUnread takes over the unread documents of kinds of a saved state
// (its Unread, or the maps of an older one, State.unread) whose set the
// Source still has, so that a mount from a snapshot shows them and tries
// them again, as the mount that saved it did: a Capability List of a set
// of the same URL, a Resource List of a set of the same key, a dump a set
// still names. They replace what the Source had of those kinds.
func (s *Source) adoptUnread(st *State, kinds ...UnreadKind) {
	now := map[string]unreadDoc{}
	kindOf := map[string]UnreadKind{}
	for _, sd := range st.unread() {
		set := s.savedSet(sd)
		if set == nil {
			continue
		}
		kind := sd.Kind
		if kind == "" { // an older state's dump: which it is, its set says
			kind = s.dumpKind(sd.URL, unreadDoc{set: set})
		}
		if slices.Contains(kinds, kind) {
			now[sd.URL], kindOf[sd.URL] = unreadDoc{set, UnreadDoc{Err: errors.New(sd.Error), Since: sd.Since}}, kind
		}
	}
	s.unread.replace(nil, kinds, now, func(u string, _ unreadDoc) UnreadKind { return kindOf[u] })
}

// savedSet returns the set of the Source a saved unread document belongs
// to; nil when none still has it.
func (s *Source) savedSet(sd SavedUnreadDoc) *Set {
	for _, set := range s.Sets() {
		switch sd.Kind {
		case UnreadCapabilityList:
			if set.URL != "" && set.URL == sd.URL {
				return set
			}
		case UnreadResourceList:
			if s.SetKey(set) == sd.Set {
				return set
			}
		default: // a dump, named by its set (an older state's names no set)
			if (sd.Set == "" || s.SetKey(set) == sd.Set) && namesDoc(s.AllDocs(set), sd.URL) {
				return set
			}
		}
	}
	return nil
}

func namesDoc(docs map[resourcesync.Capability][]string, u string) bool {
	for _, l := range docs {
		if slices.Contains(l, u) {
			return true
		}
	}
	return false
}

// AdoptUnreadDumps takes over the unread Resource Lists and dumps of a
// saved state (adoptUnread), so that a mount from a snapshot tries them
// again and shows them, as the mount that saved it did; the Capability
// Lists are discovery's to say (KeepSavedSets).
func (s *Source) AdoptUnreadDumps(st *State) {
	s.adoptUnread(st, UnreadResourceList, UnreadResourceDump, UnreadChangeDump)
}
