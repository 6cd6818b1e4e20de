package fs

import (
	"sync"
	"time"

	"rsfs/catalog"
)

// With Config.NoOpen, rsfs answers OPEN with ENOSYS, and the kernel stops
// sending OPEN and RELEASE for files (FUSE_NO_OPEN_SUPPORT): an open costs
// no round trip, and the kernel keeps a file's pages across opens, so a
// second grep -r over small files never reaches rsfs. Reads then come
// without a handle. Each file being read gets one shared handle, made at
// its first read and closed once nobody has read it for a while (below):
// it pins the version (pin.go) as an open handle would, and carries the
// read-ahead stream and the verifier across the reads of all its readers.
// So the version a file is read at holds while it is being read, and a
// reader that pauses inside a file the Source changed meanwhile may see
// bytes of both versions: that is the price of the mode, and why it is not
// the default (docs/DESIGN.md §8).

// A file's shared handle outlives its last read by readIdle; once the
// Source has a newer version, by staleIdle, and by staleMax at most with
// no read in flight, so that a program reading the file every second
// still sees the change within half a minute. A reader inside a file is
// torn between versions only if it pauses longer than staleIdle between
// two reads as the Source changes the file, or reads it for longer than
// staleMax after the change.
const (
	readIdle  = 30 * time.Second
	staleIdle = 2 * time.Second
	staleMax  = 30 * time.Second
	reapEvery = time.Second
)

// sharedHandles are the handles of files read without OPEN.
type sharedHandles struct {
	mu      sync.Mutex
	m       map[catalog.NodeID]*sharedHandle
	reaping bool // a reaper goroutine runs
}

type sharedHandle struct {
	h       *fileHandle
	name    string
	reads   int       // reads in flight
	last    time.Time // end of the last read
	staleAt time.Time // when the reaper first saw a newer version (zero: not yet)
}

// sharedRead returns node id's shared handle, opening it (and pinning the
// version) if there is none, and counts a read in flight on it; done must
// be called when the read ends.
func (f *FS) sharedRead(id catalog.NodeID, name string) (h *fileHandle, done func(), ok bool) {
	s := &f.shared
	s.mu.Lock()
	sh := s.m[id]
	if sh == nil {
		s.mu.Unlock()
		fresh, ok := f.openHandle(id, name)
		if !ok {
			return nil, nil, false
		}
		s.mu.Lock()
		if sh = s.m[id]; sh == nil { // else another read opened one meanwhile
			if s.m == nil {
				s.m = map[catalog.NodeID]*sharedHandle{}
			}
			sh = &sharedHandle{h: fresh, name: name}
			s.m[id] = sh
			fresh = nil
		}
		if !s.reaping {
			s.reaping = true
			go f.reapShared()
		}
		s.mu.Unlock()
		if fresh != nil {
			f.closeHandle(id, name, fresh)
		}
		s.mu.Lock()
	}
	sh.reads++
	s.mu.Unlock()
	return sh.h, func() {
		s.mu.Lock()
		sh.reads--
		sh.last = time.Now()
		s.mu.Unlock()
	}, true
}

// reapShared closes the shared handles nobody has read for readIdle, until
// none is left or the file system shuts down (then it closes them all).
func (f *FS) reapShared() {
	t := time.NewTicker(reapEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-f.closing.Done():
			f.closeShared(func(catalog.NodeID, *sharedHandle) bool { return true })
			return
		}
		now := time.Now()
		idle := func(id catalog.NodeID, sh *sharedHandle) bool {
			if sh.reads > 0 {
				return false
			}
			quiet := now.Sub(sh.last)
			if sh.staleAt.IsZero() && f.pinIsStale(id) {
				sh.staleAt = now
			}
			stale := !sh.staleAt.IsZero()
			return quiet >= readIdle || stale && (quiet >= staleIdle || now.Sub(sh.staleAt) >= staleMax)
		}
		if f.closeShared(idle) {
			return
		}
	}
}

// closeShared closes the shared handles that idle selects, and reports
// (stopping the reaper) whether none is left.
func (f *FS) closeShared(idle func(catalog.NodeID, *sharedHandle) bool) (empty bool) {
	s := &f.shared
	type victim struct {
		id catalog.NodeID
		sh *sharedHandle
	}
	var victims []victim
	s.mu.Lock()
	for id, sh := range s.m {
		if idle(id, sh) {
			victims = append(victims, victim{id, sh})
			delete(s.m, id)
		}
	}
	empty = len(s.m) == 0
	if empty {
		s.reaping = false
	}
	s.mu.Unlock()
	for _, v := range victims {
		f.closeHandle(v.id, v.sh.name, v.sh.h)
	}
	return empty
}
