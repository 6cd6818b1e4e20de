// Package status is the one model of a mount's state: what `rsfs status`
// prints, what user.rsfs.status holds and what /metrics exports (Report),
// the followers' part of it (Follow), and the ring of recent failures
// (Events) that the cache and the file system keep.
package status

import (
	"sync"
	"sync/atomic"
	"time"
)

// keep is how many events are remembered with their time and reason.
const keep = 64

// Event is one remembered event.
type Event struct {
	Time   time.Time `json:"time"`
	Reason string    `json:"reason"`
}

// Events counts events. The zero value is ready to use.
type Events struct {
	total atomic.Uint64
	mu    sync.Mutex
	ring  [keep]Event
	next  int // ring index of the next event
	n     int // events in the ring
	now   func() time.Time
}

// Add records an event.
func (l *Events) Add(reason string) {
	l.total.Add(1)
	now := time.Now()
	if l.now != nil {
		now = l.now()
	}
	l.mu.Lock()
	l.ring[l.next] = Event{Time: now, Reason: reason}
	l.next = (l.next + 1) % keep
	l.n = min(l.n+1, keep)
	l.mu.Unlock()
}

// Total is the number of events since the Events were made.
func (l *Events) Total() uint64 { return l.total.Load() }

// Summary is what Events say of a recent window.
type Summary struct {
	Total uint64 `json:"total"`
	// InWindow counts the events within the window; past the latest 64
	// events it is a lower bound (Capped says so).
	InWindow int     `json:"in_window"`
	Capped   bool    `json:"capped,omitempty"`
	Latest   []Event `json:"latest,omitempty"` // newest first, at most n
}

// Since summarises the events within window of now, with the latest n.
func (l *Events) Since(window time.Duration, n int) Summary {
	now := time.Now()
	if l.now != nil {
		now = l.now()
	}
	s := Summary{Total: l.total.Load()}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 0; i < l.n; i++ {
		e := l.ring[(l.next-1-i+keep)%keep]
		if now.Sub(e.Time) > window {
			break
		}
		s.InWindow++
		if len(s.Latest) < n {
			s.Latest = append(s.Latest, e)
		}
	}
	s.Capped = s.InWindow == keep && s.Total > keep
	return s
}
