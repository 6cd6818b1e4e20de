package fs

import (
	"errors"
	"sync"
	"time"

	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/prefetch"
)

// Each version of a file is an inode of its own, as a file replaced by
// rename is on a local disk. A file's inode carries the Gen of the version
// it was looked up at (catalog.Attr.Gen) and that version's size and
// mtime, and never changes: the kernel keeps its i_size and its cached
// pages, and they stay true. When the Source publishes a new version, the
// kernel is told the old inode is deleted (its link count drops to 0), so
// the next lookup by name makes the new version's inode, while a process
// that has the old one open goes on reading the old version to its end,
// or fails with EIO where its bytes can no longer be had: never a short or
// mixed copy. The kernel forgets the old inode once its last descriptor
// closes.
//
// So nothing needs OPEN: rsfs answers it with ENOSYS where the kernel
// allows (FUSE_NO_OPEN_SUPPORT), and an open costs no round trip. A file
// being read has one stream, shared by all its readers: the read-ahead and
// the verifier of its version, opened at the first read and closed once
// nobody has read it for readIdle (a file of one block: once its read
// ends).

const (
	readIdle  = 30 * time.Second
	reapEvery = time.Second
)

// errVersionGone is a read of an inode whose version the catalog moved
// past before rsfs could keep it: its hashes are gone, so no byte of it
// can be verified.
var errVersionGone = errors.New("the Source published a newer version before this one was read")

// version is one file version being read, or kept for an inode the kernel
// still holds after the catalog moved past it.
type version struct {
	ref    fileRef
	v      catalog.FileVersion
	origin cache.Fetcher
	file   *cache.File // open while read; nil once idle
	reads  int         // reads in flight
	last   time.Time   // end of the last read
	kept   bool        // the catalog moved past it: kept until the kernel forgets the inode
}

// versions are the versions of the inodes being read, and of those kept,
// by node ID.
type versions struct {
	mu      sync.Mutex
	m       map[uint64]*version
	reaping bool // a reaper goroutine runs
}

// readVersion returns the stream of ref's version (and its URI), opening it
// if needed, and counts a read in flight; done must be called when the
// read ends.
func (f *FS) readVersion(ref fileRef) (file *cache.File, uri string, done func(), err error) {
	s := &f.versions
	for {
		v, err := f.versionOf(ref)
		if err != nil {
			return nil, "", nil, err
		}
		s.mu.Lock()
		if s.m[ref.nid] == v && v.file != nil {
			v.reads++
			file := v.file
			s.mu.Unlock()
			return file, v.v.Resource.URI, func() { f.readDone(v) }, nil
		}
		s.mu.Unlock()
		f.openStream(v)
	}
}

// readDone ends a read of version v. A file of one block carries
// nothing from one read to the next (it was verified whole, and is in the
// cache): its stream is closed, and its version forgotten unless kept, as
// soon as no read is in flight, so that a grep -r over a million small
// files holds no stream per file for readIdle.
func (f *FS) readDone(v *version) {
	s := &f.versions
	s.mu.Lock()
	v.reads--
	v.last = time.Now()
	var done *cache.File
	if v.reads == 0 && !v.kept && f.cfg.Cache.OneBlock(v.v.Resource.Length) && s.m[v.ref.nid] == v {
		done, v.file = v.file, nil
		delete(s.m, v.ref.nid)
	}
	s.mu.Unlock()
	if done != nil {
		done.Close()
	}
}

// openStream opens the stream of version v, unless another read did
// or the reaper dropped v meanwhile (the caller looks again).
func (f *FS) openStream(v *version) {
	fresh := f.cfg.Cache.Open(prefetch.ContentOf(v.v), v.origin)
	s := &f.versions
	s.mu.Lock()
	opened := s.m[v.ref.nid] == v && v.file == nil
	if opened {
		v.file, v.last = fresh, time.Now()
	}
	s.mu.Unlock()
	if !opened {
		fresh.Close()
		return
	}
	f.pre.Reading(v.ref.id, v.v.Resource.Length)
}

// versionOf returns ref's version, taking it from the catalog if none is
// kept for ref yet.
func (f *FS) versionOf(ref fileRef) (*version, error) {
	s := &f.versions
	s.mu.Lock()
	v := s.m[ref.nid]
	s.mu.Unlock()
	if v != nil && v.ref == ref {
		return v, nil
	}
	fv, ok := f.cfg.Catalog.Version(ref.id)
	if !ok || fv.Attr.Gen != ref.gen {
		return nil, errVersionGone
	}
	return f.keep(ref, fv, false), nil
}

// keep records fv as ref's version (kept marks one the catalog moved past)
// and returns what is recorded: a version already there for ref stays;
// one left by an inode of the same node ID before (forgotten) goes.
func (f *FS) keep(ref fileRef, fv catalog.FileVersion, kept bool) *version {
	fresh := &version{ref: ref, v: fv, origin: f.cfg.Fetcher(fv.Resource), kept: kept, last: time.Now()}
	s := &f.versions
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[uint64]*version{}
	}
	v := s.m[ref.nid]
	if v == nil || v.ref != ref {
		v = fresh
		s.m[ref.nid] = v
	}
	v.kept = v.kept || kept
	if !s.reaping {
		s.reaping = true
		go f.reapVersions()
	}
	return v
}

// keptResource returns the resource of inode nid's version if rsfs keeps
// it.
func (f *FS) keptResource(nid uint64) (*catalog.Resource, bool) {
	s := &f.versions
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.m[nid]; v != nil {
		return v.v.Resource, true
	}
	return nil, false
}

// forget drops the version of inode ref: the kernel forgot it. A version
// of another inode that took the node ID since stays.
func (f *FS) forget(ref fileRef) {
	s := &f.versions
	s.mu.Lock()
	v := s.m[ref.nid]
	if v == nil || v.ref != ref {
		s.mu.Unlock()
		return
	}
	delete(s.m, ref.nid)
	s.mu.Unlock()
	if v.file != nil {
		v.file.Close()
	}
}

// reapVersions closes the streams nobody has read for readIdle, and drops
// the versions the catalog can give again (the others are kept), until
// none is left or the file system shuts down (then it closes them all).
func (f *FS) reapVersions() {
	t := time.NewTicker(reapEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-f.closing.Done():
			f.closeIdle(func(*version) bool { return true })
			return
		}
		now := time.Now()
		if f.closeIdle(func(v *version) bool { return v.reads == 0 && now.Sub(v.last) >= readIdle }) {
			return
		}
	}
}

// closeIdle closes the streams of the versions idle selects and forgets
// those of them the catalog can give again, whose node is still the
// catalog's version (the others become kept). It reports (stopping the
// reaper) whether no version is left.
func (f *FS) closeIdle(idle func(*version) bool) (empty bool) {
	s := &f.versions
	var files []*cache.File
	var idled []fileRef
	s.mu.Lock()
	for _, v := range s.m {
		if !idle(v) {
			continue
		}
		if v.file != nil {
			files = append(files, v.file)
			v.file = nil
		}
		if !v.kept {
			idled = append(idled, v.ref)
		}
	}
	s.mu.Unlock()
	// The catalog is asked without the lock; a node read meanwhile is
	// left for the next round.
	current := make([]bool, len(idled))
	for i, ref := range idled {
		current[i] = f.current(ref.id, ref.gen)
	}
	s.mu.Lock()
	for i, ref := range idled {
		v := s.m[ref.nid]
		switch {
		case v == nil || v.ref != ref || v.file != nil || v.reads > 0:
		case current[i]:
			delete(s.m, ref.nid)
		default:
			v.kept = true // the catalog moved past it while it was read
		}
	}
	empty = len(s.m) == 0
	if empty {
		s.reaping = false
	}
	s.mu.Unlock()
	for _, file := range files {
		file.Close()
	}
	return empty
}
