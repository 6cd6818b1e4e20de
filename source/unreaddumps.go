package source

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"rsfs/resourcesync"
)

// unreadDocs are documents that could not be read, by URL, with their
// set: one registry each for the Resource Dumps and Change Dumps (or
// indexes of them) the last load could not read, the Capability Lists
// (unreadcaps.go) and the Resource Lists (unreadlists.go). Loading goes on
// without them (docs/dumps.md: a dump that cannot be read never stops the
// mount); a poll tries them again (RetryUnreadDumps and its kin), and the
// status shows them (UnreadDumps and its kin).
type unreadDocs struct {
	mu sync.Mutex
	m  map[string]unreadDoc
}

type unreadDoc struct {
	set *Set
	UnreadDoc
}

// UnreadDoc is why a document could not be read, and since when.
type UnreadDoc struct {
	Err   error
	Since time.Time // the first load (or retry) it failed at, in this run of failures
}

// replace makes m the dumps unread, and returns those that were.
func (d *unreadDocs) replace(m map[string]unreadDoc) (was map[string]unreadDoc) {
	d.mu.Lock()
	defer d.mu.Unlock()
	was, d.m = d.m, m
	return was
}

// note records the latest failure of a dump still unread.
func (d *unreadDocs) note(u string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if old, ok := d.m[u]; ok {
		old.Err = err
		d.m[u] = old
	}
}

func (d *unreadDocs) copy() map[string]unreadDoc {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.m)
}

// noteUnreadDumps records the dumps a load could not read, and warns of
// each, once until it reads again: a dump that still fails at a reload is
// not news.
func (s *Source) noteUnreadDumps(unread map[string]unreadDoc) {
	for u, d := range s.unread.copy() {
		if now, ok := unread[u]; ok {
			now.Since = d.Since
			unread[u] = now
		}
	}
	was := s.unread.replace(unread)
	for u, d := range unread {
		if _, ok := was[u]; !ok {
			s.log.Warn("dump not read: its packages' copies are left out, and it is tried again at the next poll",
				"dump", u, "err", d.Err)
		}
	}
	for u := range was {
		if _, ok := unread[u]; !ok {
			s.log.Info("dump read, which the last load could not", "dump", u)
		}
	}
}

// UnreadDumps returns set's dumps that could not be read when the Source
// was last loaded, with why, by URL; nil when every one was read.
func (s *Source) UnreadDumps(set *Set) map[string]UnreadDoc {
	var out map[string]UnreadDoc
	for u, d := range s.unread.copy() {
		if d.set != set {
			continue
		}
		if out == nil {
			out = map[string]UnreadDoc{}
		}
		out[u] = d.UnreadDoc
	}
	return out
}

// RetryUnreadDumps reads again each dump the last load could not, and
// reports whether one reads now: its packages' copies then need a reload
// (LoadEach), which reads every dump again. One that still fails keeps its
// latest error, without another warning.
func (s *Source) RetryUnreadDumps(ctx context.Context) (readable bool) {
	for u, d := range s.unread.copy() {
		if err := s.readDump(ctx, d.set, u); err != nil {
			if ctx.Err() != nil {
				return false
			}
			s.unread.note(u, err)
			continue
		}
		s.log.Info("a dump the last load could not read reads now", "dump", u)
		readable = true
	}
	return readable
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

// saved is the unread dumps as a State keeps them; nil for none.
func (d *unreadDocs) saved() map[string]SavedUnreadDoc {
	var out map[string]SavedUnreadDoc
	for u, ud := range d.copy() {
		if out == nil {
			out = map[string]SavedUnreadDoc{}
		}
		out[u] = SavedUnreadDoc{Error: ud.Err.Error(), Since: ud.Since}
	}
	return out
}

// AdoptUnreadDumps takes over the unread dumps of a saved state that a set
// of the Source still names (and its unread Resource Lists of a set the
// Source still has), so that a mount from a snapshot tries them again and
// shows them, as the mount that saved it did.
func (s *Source) AdoptUnreadDumps(st *State) {
	m := map[string]unreadDoc{}
	for _, set := range s.Sets() {
		for _, docs := range s.AllDocs(set) {
			for _, u := range docs {
				if sd, ok := st.UnreadDumps[u]; ok {
					m[u] = unreadDoc{set, UnreadDoc{Err: errors.New(sd.Error), Since: sd.Since}}
				}
			}
		}
	}
	s.unread.replace(m)
	s.adoptUnreadLists(st)
}
