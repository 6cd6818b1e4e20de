package fs

import "sync"

// The kernel, in READDIRPLUS_AUTO mode, asks for READDIRPLUS on the first
// read of every directory, whatever the program does next. Answering it in
// full creates an inode per entry: a plain find over a million files would
// then make the kernel hold a million inodes (its own memory and rsfs's, and
// a FORGET each later) for nothing. So READDIRPLUS
// answers directories in full, and files in full only to a process known to
// stat what it lists: one that has looked up a file by name (ls -l stats its
// first directory's files one LOOKUP each, then gets every later listing in
// full). A file answered without attributes (node ID 0) is a plain entry to
// the kernel.

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
