package fs

import (
	"sync"

	"rsfs/catalog"
)

// Every directory read is a READDIRPLUS (the mount asks for
// CAP_READDIRPLUS, not CAP_READDIRPLUS_AUTO). Answering it in full creates
// an inode per entry: a plain find over a million files would then make the
// kernel hold a million inodes (its own memory and rsfs's, and a FORGET
// each later) for nothing. So READDIRPLUS answers directories in full, and
// files in full only to a process known to stat what it lists: one that
// has looked up a file by name (ls -l stats its first directory's files one
// LOOKUP each, then gets every later listing in full). A file answered
// without attributes (node ID 0) is a plain entry to the kernel.
//
// In _AUTO mode the kernel asked for READDIRPLUS only on the first read of
// a directory (or after a LOOKUP in it): a directory listed in several
// reads, such as one of 30,000 subdirectories, had the rest answered plain,
// and a find that then descended into each cost a LOOKUP per directory
// (at 3,000,000 files, 30,000 round trips: 7.2 s of cold find, 5.1 s
// without).

// A listing the kernel caches (FOPEN_CACHE_DIR) is kept as it was
// answered. One answered in full serves anyone: the inodes it made stay
// with their dentries, so a process that stats what it lists finds them
// without a LOOKUP (grep -r's first pass looks up its first file, then has
// every later directory answered in full; its second pass is then the
// kernel's alone). One that answered a file plain would cost such a
// process a LOOKUP per file, so rsfs remembers the directories whose
// cached listing may hold a plain file (plainListings) and reads those
// through rsfs, in full, for such a process (OpenDir).

// maxPlainListings bounds the directories remembered; past it the set
// starts over, and a forgotten directory costs at most a LOOKUP per file.
const maxPlainListings = 1 << 16

// plainListings is the set of directories whose listing, as the kernel may
// cache it, answered a file plain.
type plainListings struct {
	mu   sync.Mutex
	dirs map[catalog.NodeID]struct{}
}

// mark records that dir's cached listing answered a file plain.
func (p *plainListings) mark(dir catalog.NodeID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dirs == nil || len(p.dirs) >= maxPlainListings {
		p.dirs = make(map[catalog.NodeID]struct{})
	}
	p.dirs[dir] = struct{}{}
}

// take reports whether dir's cached listing may hold a plain file, and
// forgets it: the caller has the kernel drop that listing.
func (p *plainListings) take(dir catalog.NodeID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.dirs[dir]
	delete(p.dirs, dir)
	return ok
}

// maxStatters bounds the processes remembered; past it the set starts over.
const maxStatters = 4096

// statters is the set of processes that stat what they list, by the thread
// ID the kernel reports.
type statters struct {
	mu   sync.Mutex
	pids map[uint32]struct{}
}

// mark records that the thread pid looked up a file.
func (s *statters) mark(pid uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pids[pid]; ok {
		return
	}
	if s.pids == nil || len(s.pids) >= maxStatters {
		s.pids = make(map[uint32]struct{})
	}
	s.pids[pid] = struct{}{}
}

// has reports whether the thread pid stats what it lists.
func (s *statters) has(pid uint32) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.pids[pid]
	return ok
}
