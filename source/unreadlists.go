package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"rsfs/resourcesync"
)

// A Resource List (or a Resource List Index, or one of its children) that
// cannot be read when the Source is first loaded does not refuse it: the
// load goes on without the entries the list did not give (those read
// before a document broke off are kept), warns once naming it and the
// error, and keeps it in the registry of unread documents (unread.go) as
// UnreadResourceList; the set's status shows it among its degraded
// documents, and a poll reads it again (RetryUnread), which reloads once it
// reads. A reload (LoadEach)
// still fails when a list cannot be read, so that it never drops the
// resources of a list it could not read. Only a Source where no Resource
// List, no entry of one and no dump package could be read fails the first
// load.

// refusedError is a resource the sink refused (a catalog at a capacity
// limit): that stops the load, whatever list it came from.
type refusedError struct{ err error }

func (e refusedError) Error() string { return e.err.Error() }
func (e refusedError) Unwrap() error { return e.err }

// leaveOut records, at a first load, a list that could not be read, and
// reports whether the load goes on without it.
func (l *loader) leaveOut(ctx context.Context, d walkDoc, err error) bool {
	var refused refusedError
	if !l.tolerant || ctx.Err() != nil || errors.As(err, &refused) {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unreadLists == nil {
		l.unreadLists = map[string]unreadDoc{}
	}
	l.unreadLists[d.url] = unreadDoc{d.set, UnreadDoc{Err: err, Since: time.Now()}}
	return true
}

// noteUnreadLists records the lists the load could not read (none, after
// a reload, which fails on one), warns of each new one, and fails a first
// load when no list, no entry of one and no dump package could be read.
func (l *loader) noteUnreadLists() error {
	unread := l.unreadLists
	was := l.s.unread.replace(nil, []UnreadKind{UnreadResourceList}, unread,
		func(string, unreadDoc) UnreadKind { return UnreadResourceList })
	for u, d := range unread {
		if _, ok := was[unreadKey{u, UnreadResourceList}]; !ok {
			l.s.log.Warn("resource list not read: the resources it lists are left out, and it is tried again at each poll",
				"list", u, "err", d.Err)
		}
	}
	for k := range was {
		if _, ok := unread[k.url]; !ok {
			l.s.log.Info("resource list read, which could not be before", "list", k.url)
		}
	}
	if len(unread) > 0 && l.lists.Load() == 0 && l.resources.Load() == 0 && len(l.pkgs) == 0 {
		errs := make(capErrors, 0, len(unread))
		for _, d := range unread {
			errs = append(errs, d.Err)
		}
		return fmt.Errorf("load: no Resource List (and no dump package) could be read: %w", errs)
	}
	return nil
}

// UnreadLists returns set's Resource Lists (or index children) that could
// not be read, with why, by URL; nil when every one was read.
func (s *Source) UnreadLists(set *Set) map[string]UnreadDoc {
	return s.unread.byURL(set, UnreadResourceList)
}

// rereadList reads an unread Resource List again: reading now, it needs a
// reload (LoadEach).
func (s *Source) rereadList(ctx context.Context, _ *Set, u string) (bool, error) {
	if err := s.readWholeList(ctx, u); err != nil {
		return false, fmt.Errorf("read resource list: %w", err)
	}
	return true, nil
}

// readWholeList reads a Resource List (or index) to its end, keeping
// nothing: whether a reload could read it.
func (s *Source) readWholeList(ctx context.Context, u string) error {
	resp, err := s.opts.Client.Get(ctx, u, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	r, err := resourcesync.NewReader(resp.Body, resp.URL, s.opts.Parse)
	if err != nil {
		return err
	}
	h, err := r.Header()
	if err != nil {
		return err
	}
	if c := h.Capability(); c != resourcesync.CapResourceList && c != "" {
		return fmt.Errorf("%s: capability is %q", resp.URL, c)
	}
	for {
		if _, err := r.Next(); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}
