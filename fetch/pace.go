package fetch

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"rsfs/priority"
)

// Every request to an origin goes through that origin's pacer, once per
// attempt and redirect hop: it waits there for three things, a pause the
// origin asked for (429 or 503, with or without Retry-After), a token of
// the origin's request rate, and a place among the requests in flight.
//
// An origin that never says "slow down" is never paced: its rate is
// unlimited and its in-flight limit opens, as TCP's first window does, from
// 32 to what the transport allows within a few round trips, so the pacer
// costs a lock per request. Once it answers 429 or 503, or times
// out, its pacer
//   - pauses the whole origin (every request to it, of every kind) for the
//     Retry-After it gave, else for one interval of the new rate, doubling
//     while the answers keep coming with no success between;
//   - cuts the rate to a fraction of what the origin accepted in the last
//     second (multiplicative decrease), and halves the in-flight limit;
//   - and then grows them back on each success: the rate doubles per
//     second's worth of successes (slow start) until the second cut, then
//     by a twentieth (additive increase, as TCP's congestion avoidance),
//     and by a hundredth once past the rate the last cut found too much;
//     the in-flight limit by one per limit's worth of successes.
//
// Only an answer to a request sent after the last cut cuts again: the
// requests already under way when the origin said "slow down" were sent
// at the old rate, and their refusals say nothing new. A request someone
// is waiting for (package priority) goes before a deferrable one.
const (
	// cutFactor is what a cut keeps of the rate the origin accepted.
	cutFactor = 0.85
	// limitCut is what a cut keeps of the in-flight limit.
	limitCut = 0.5
	// slowStartGain, avoidGain and probeGain are the rate's growth per second's worth
	// of successes: before the second cut, after it, and past the rate the
	// last cut found too much.
	slowStartGain = 1.0
	avoidGain     = 0.05
	probeGain     = 0.01
	// MinPacedRate is the lowest rate a cut goes to, in requests a second;
	// the pauses still space requests further while an origin refuses all.
	MinPacedRate = 1.0
	// initialWindow is the requests in flight to a new origin, one more
	// with each success until the transport's limit: a server that refuses
	// what exceeds its burst refuses at most these and the burst's worth,
	// not the 128 streams HTTP/2 could have in flight at once. Opening
	// costs a round trip per doubling where HTTP/2 allows 128: from 8, a
	// fan-out over HTTP/2 at 50 ms took 2.95 s for 2.68 s before; from 32,
	// two round trips.
	initialWindow = 32
	// unpacedRate: a rate grown past it is no limit any more.
	unpacedRate = 10000.0
	// acceptWindow is how far back the rate an origin accepted is counted.
	acceptWindow = time.Second
	// throttleWindow is how far back status counts throttled answers.
	throttleWindow = time.Minute
	// relearnAfter: a paced origin that has said nothing for this long is
	// probed by slow start again, from the rate it has: a limit that was
	// an overload passing is not kept for ever.
	relearnAfter = time.Minute
	// userRateMargin keeps --max-rate N a little below N, so that a server
	// counting requests in any one-second window never sees N+1 for the
	// jitter of their arrival.
	userRateMargin = 0.98
)

// signal is what an attempt's answer says of its origin's load.
type signal uint8

const (
	signalNone     signal = iota // no answer, or one that says nothing of load
	signalOK                     // an answer the origin was willing to give
	signalThrottle               // 429 or 503: slow down
	signalTimeout                // no answer within the timeout
)

// paceOptions are the Options a pacer reads.
type paceOptions struct {
	maxRate      float64       // --max-rate; 0: none
	backoffBase  time.Duration // first pause after a second cut with no success between
	backoffMax   time.Duration // longest pause without Retry-After
	maxRetryWait time.Duration // longest Retry-After honoured
}

// pacers are the pacer of each origin.
type pacers struct {
	opts paceOptions
	// limitOf is the in-flight limit of an origin never throttled (the
	// transport's: more where it speaks HTTP/2).
	limitOf func(origin string) int
	mu      sync.Mutex
	m       map[string]*pacer
}

func (ps *pacers) of(origin string) *pacer {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.m == nil {
		ps.m = map[string]*pacer{}
	}
	p, ok := ps.m[origin]
	if !ok {
		p = newPacer(origin, ps.opts, func() int { return ps.limitOf(origin) })
		ps.m[origin] = p
	}
	return p
}

// all returns the pacers met so far.
func (ps *pacers) all() []*pacer {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := make([]*pacer, 0, len(ps.m))
	for _, p := range ps.m {
		out = append(out, p)
	}
	return out
}

// pacer paces the requests to one origin.
type pacer struct {
	origin   string
	opts     paceOptions
	maxLimit func() int

	mu       sync.Mutex
	user     *rate.Limiter // --max-rate; nil: none
	adaptive *rate.Limiter // the learned rate, while paced
	paced    bool          // adaptive applies
	ssthresh float64       // the rate of the last cut after the first; 0: slow start
	ceiling  float64       // the rate the last cut found too much; above it, growth is slow
	limit    float64       // in-flight limit, at most maxLimit (which grows when HTTP/2 is learned)
	inFlight int
	pause    time.Time // no request goes before it
	lastCut  time.Time
	cuts     int // cuts with no success between
	queue    []*waiter
	timer    *time.Timer
	timerAt  time.Time

	accepted  ring // answers the origin gave, by when
	sent      ring // requests admitted, by when
	throttled []throttleEvent
	counts    map[int]int64 // throttled answers by status (0: timeouts), ever
}

type throttleEvent struct {
	at   time.Time
	code int
}

// waiter is a request waiting for its turn.
type waiter struct {
	ready  chan struct{}
	waited func() bool // nil: urgent
	done   bool        // admitted (or given up)
	sent   time.Time
}

func newPacer(origin string, opts paceOptions, maxLimit func() int) *pacer {
	p := &pacer{origin: origin, opts: opts, maxLimit: maxLimit, counts: map[int]int64{}, limit: initialWindow}
	if opts.maxRate > 0 {
		p.user = rate.NewLimiter(rate.Limit(opts.maxRate*userRateMargin), 1)
	}
	p.adaptive = rate.NewLimiter(rate.Inf, 1)
	return p
}

// ticket is an admitted request: finish it when its answer's headers (or
// its failure) arrive.
type ticket struct {
	p    *pacer
	sent time.Time
}

// acquire waits for the request's turn, or until ctx is done.
func (p *pacer) acquire(ctx context.Context) (*ticket, error) {
	p.mu.Lock()
	now := time.Now()
	if len(p.queue) == 0 && p.admissibleLocked(now) == 0 {
		p.admitLocked(nil, now)
		p.mu.Unlock()
		return &ticket{p: p, sent: now}, nil
	}
	w := &waiter{waited: priority.Of(ctx), ready: make(chan struct{})}
	p.queue = append(p.queue, w)
	p.dispatchLocked(now)
	p.mu.Unlock()
	select {
	case <-w.ready:
		return &ticket{p: p, sent: w.sent}, nil
	case <-ctx.Done():
		p.mu.Lock()
		admitted := w.done
		w.done = true
		if !admitted {
			p.removeLocked(w)
		} else {
			p.inFlight--
		}
		p.dispatchLocked(time.Now())
		p.mu.Unlock()
		return nil, ctx.Err()
	}
}

// admissibleLocked is how long until a request may go: 0 now, a positive
// duration when it waits for a pause or a token, and -1 when it waits for
// a request in flight to finish.
func (p *pacer) admissibleLocked(now time.Time) time.Duration {
	if p.inFlight >= p.limitLocked() {
		return -1
	}
	wait := p.pause.Sub(now)
	if p.user != nil {
		wait = max(wait, tokenWait(p.user, now))
	}
	if p.paced {
		wait = max(wait, tokenWait(p.adaptive, now))
	}
	return max(wait, 0)
}

// tokenWait is how long until l has a whole token.
func tokenWait(l *rate.Limiter, now time.Time) time.Duration {
	missing := 1 - l.TokensAt(now)
	if missing <= 0 {
		return 0
	}
	return time.Duration(missing / float64(l.Limit()) * float64(time.Second))
}

// limitLocked is the requests allowed in flight now.
func (p *pacer) limitLocked() int {
	return max(1, min(p.maxLimit(), int(p.limit)))
}

// admitLocked lets a request go now: w, or one that did not queue (nil).
func (p *pacer) admitLocked(w *waiter, now time.Time) {
	if w != nil {
		w.done, w.sent = true, now
	}
	p.inFlight++
	if p.user != nil {
		p.user.AllowN(now, 1)
	}
	if p.paced {
		p.adaptive.AllowN(now, 1)
	}
	p.sent.add(now)
}

// dispatchLocked admits the waiters that may go now, urgent ones first,
// and arms the timer for the next that waits on time.
func (p *pacer) dispatchLocked(now time.Time) {
	for len(p.queue) > 0 {
		wait := p.admissibleLocked(now)
		if wait < 0 {
			return // a finish dispatches again
		}
		if wait > 0 {
			p.armLocked(now.Add(wait))
			return
		}
		w := p.popLocked()
		p.admitLocked(w, now)
		close(w.ready)
	}
}

// popLocked takes the first urgent waiter, else the first.
func (p *pacer) popLocked() *waiter {
	at := 0
	for i, w := range p.queue {
		if w.waited == nil || w.waited() {
			at = i
			break
		}
	}
	w := p.queue[at]
	p.queue = append(p.queue[:at], p.queue[at+1:]...)
	return w
}

func (p *pacer) removeLocked(w *waiter) {
	for i, q := range p.queue {
		if q == w {
			p.queue = append(p.queue[:i], p.queue[i+1:]...)
			return
		}
	}
}

// armLocked makes sure a dispatch runs at when.
func (p *pacer) armLocked(when time.Time) {
	if !p.timerAt.IsZero() && !p.timerAt.After(when) {
		return
	}
	p.timerAt = when
	d := time.Until(when)
	if p.timer == nil {
		p.timer = time.AfterFunc(d, p.wake)
		return
	}
	p.timer.Reset(d)
}

func (p *pacer) wake() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timerAt = time.Time{}
	p.dispatchLocked(time.Now())
}
