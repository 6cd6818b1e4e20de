package fs

import "sync"

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

// maxPlainListings bounds the directories remembered (plainListings);
// past it the set starts over, and a forgotten directory costs at most a
// LOOKUP per file.
const maxPlainListings = 1 << 16

// maxStatters bounds the processes remembered (statters, by the thread ID
// the kernel reports); past it the set starts over.
const maxStatters = 4096

// boundedSet is a set of at most limit keys, safe for concurrent use: the
// processes that stat what they list, and the directories whose cached
// listing answered a file plain. Past the limit it starts over; what it
// forgets costs round trips, never a wrong answer.
type boundedSet[K comparable] struct {
	mu    sync.Mutex
	keys  map[K]struct{}
	limit int
}

// add records k.
func (s *boundedSet[K]) add(k K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.keys[k]; ok {
		return
	}
	if s.keys == nil || len(s.keys) >= s.limit {
		s.keys = make(map[K]struct{})
	}
	s.keys[k] = struct{}{}
}

// has reports whether k is recorded.
func (s *boundedSet[K]) has(k K) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.keys[k]
	return ok
}

// take reports whether k is recorded, and forgets it.
func (s *boundedSet[K]) take(k K) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.keys[k]
	delete(s.keys, k)
	return ok
}

// len is the number of keys recorded.
func (s *boundedSet[K]) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys)
}
