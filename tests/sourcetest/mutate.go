package sourcetest

import (
	"fmt"
	"strings"
	"time"

	"rsfs/resourcesync"
)

// Plant replaces a resource's body (and its published hash and length).
// It counts as an update: the Change List records it.
func (s *Source) Plant(uri string, content []byte) error {
	if content == nil {
		content = []byte{}
	}
	return s.Update(uri, content)
}

// Update publishes a new version of a resource: lastmod is a new change
// time, later than every earlier one, and hash and length follow content.
// A nil content on a generated resource generates the body of the new
// version. The Change List records "updated".
func (s *Source) Update(uri string, content []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.liveLocked(uri)
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	r = s.keepLocked(r)
	r.version = s.nextSeqLocked()
	r.setContent(s.cfg.Seed, s.cfg.Hashes, content, s.cfg.MinSize, s.cfg.MaxSize)
	s.changeLocked(r, resourcesync.ChangeUpdated)
	return nil
}

// Create adds a resource at URL path (e.g. "/new/file.txt", a query
// allowed) with the given body, in the first resource set. It appears in
// the Resource Lists and as "created" in the Change List. Creating a
// deleted resource again is allowed.
func (s *Source) Create(path string, content []byte) (string, error) {
	if !strings.HasPrefix(path, "/") {
		return "", fmt.Errorf("create %q: path must start with /", path)
	}
	key := canonicalKey(path)
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.exactLocked(key)
	switch {
	case ok && !r.deleted:
		return "", fmt.Errorf("create %q: resource exists", path)
	case ok:
		r = s.keepLocked(r)
		r.deleted = false
	default:
		r = &resState{key: key, uri: s.base + key[1:], gen: -1, typ: textType}
		s.addExplicitLocked(r, 0)
	}
	if content == nil {
		content = []byte{}
	}
	r.version = s.nextSeqLocked()
	r.corrupt, r.fail = nil, 0
	r.setContent(s.cfg.Seed, s.cfg.Hashes, content, s.cfg.MinSize, s.cfg.MaxSize)
	s.live++
	s.changeLocked(r, resourcesync.ChangeCreated)
	return r.uri, nil
}

// Delete removes a resource: it leaves the Resource Lists, the Change List
// records "deleted", and GET answers 404.
func (s *Source) Delete(uri string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.liveLocked(uri)
	if err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	r = s.keepLocked(r)
	r.deleted = true
	r.version = s.nextSeqLocked()
	s.live--
	s.changeLocked(r, resourcesync.ChangeDeleted)
	return nil
}

// Corrupt makes the primary serve body for uri while the lists keep
// publishing the true hash and length; the mirror keeps serving the true
// body. A nil body ends the corruption. It panics on an unknown URI.
func (s *Source) Corrupt(uri string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustLocked(uri, "Corrupt")
	r.corrupt = body
}

// FailPrimary makes the primary answer uri with status code (0 ends it);
// the mirror still serves the resource. It panics on an unknown URI.
func (s *Source) FailPrimary(uri string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustLocked(uri, "FailPrimary")
	r.fail = code
}

func (s *Source) mustLocked(uri, op string) *resState {
	r, err := s.liveLocked(uri)
	if err != nil {
		panic(fmt.Sprintf("sourcetest: %s: %v", op, err))
	}
	return s.keepLocked(r)
}

// liveLocked returns the record of a live resource.
func (s *Source) liveLocked(uri string) (*resState, error) {
	key, ok := s.uriToKey(uri)
	if !ok {
		return nil, fmt.Errorf("%q is not on this Source", uri)
	}
	r, ok := s.lookupLocked(key)
	if !ok || r.deleted {
		return nil, fmt.Errorf("no resource %q", uri)
	}
	return r, nil
}

// keepLocked makes a transient generated record permanent.
func (s *Source) keepLocked(r *resState) *resState {
	if r.gen < 0 {
		return r
	}
	if kept, ok := s.overrides[r.gen]; ok {
		return kept
	}
	if r.digests == nil {
		r.digests = genDigests(s.cfg.Hashes, r.generatedBody(s.cfg.Seed))
	}
	s.overrides[r.gen] = r
	return r
}

func (s *Source) nextSeqLocked() int64 {
	s.seq++
	return s.seq
}

// nextTimeLocked returns a change time at least 1 ms after the previous one.
func (s *Source) nextTimeLocked() time.Time {
	t := time.Now().UTC().Truncate(time.Millisecond)
	if !t.After(s.lastTime) {
		t = s.lastTime.Add(time.Millisecond)
	}
	s.lastTime = t
	return t
}

// changeLocked stamps r with a new change time and records the change.
func (s *Source) changeLocked(r *resState, kind resourcesync.Change) {
	t := s.nextTimeLocked()
	r.lastmod = t
	rs := s.sets[r.set]
	c := change{uri: r.uri, kind: kind, at: t}
	if kind != resourcesync.ChangeDeleted {
		c.size, c.digests, c.typ = r.size, r.digests, r.typ
	}
	rs.changes = append(rs.changes, c)
	rs.seq++
	rs.at = t
	s.publishLocked(r.set, &c)
}
