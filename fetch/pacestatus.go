package fetch

import "time"

// PaceStatus is an origin's pacing now.
type PaceStatus struct {
	Origin string
	// Throttled is the answers 429 or 503, and the timeouts, of the last
	// minute.
	Throttled int
	// Counts are the throttled answers by status since the start (0:
	// timeouts).
	Counts   map[int]int64
	InFlight int
	Limit    int     // the in-flight limit now
	Rate     float64 // the learned rate, requests a second; 0: unlimited
	MaxRate  float64 // --max-rate; 0: none
	// Paused is until when requests wait, if they do now.
	Paused time.Time
	// Waiting is the requests waiting for their turn.
	Waiting int
}

func (p *pacer) status(now time.Time) PaceStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trimLocked(now)
	s := PaceStatus{Origin: p.origin, Throttled: len(p.throttled), Counts: map[int]int64{},
		InFlight: p.inFlight, Limit: p.limitLocked(), MaxRate: p.opts.maxRate, Waiting: len(p.queue)}
	for code, n := range p.counts {
		s.Counts[code] = n
	}
	if p.paced {
		s.Rate = float64(p.adaptive.Limit())
	}
	if p.pause.After(now) {
		s.Paused = p.pause
	}
	return s
}

// Pacing returns each origin's pacing now, for status and metrics.
func (c *Client) Pacing() []PaceStatus {
	now := time.Now()
	var out []PaceStatus
	for _, p := range c.pace.all() {
		out = append(out, p.status(now))
	}
	return out
}

// ring counts events over the last second (acceptWindow), in tenths.
type ring struct {
	slots [10]struct {
		tick int64
		n    int
	}
}

const ringTick = 100 * time.Millisecond

func (r *ring) add(now time.Time) {
	tick := now.UnixNano() / int64(ringTick)
	s := &r.slots[tick%int64(len(r.slots))]
	if s.tick != tick {
		s.tick, s.n = tick, 0
	}
	s.n++
}

// count is the events of the last window (at most the ring's span).
func (r *ring) count(now time.Time, window time.Duration) int {
	tick := now.UnixNano() / int64(ringTick)
	span := min(int64(window/ringTick), int64(len(r.slots)))
	n := 0
	for _, s := range r.slots {
		if s.tick > tick-span && s.tick <= tick {
			n += s.n
		}
	}
	return n
}
