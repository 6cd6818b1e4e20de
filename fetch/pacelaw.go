package fetch

import (
	"time"

	"golang.org/x/time/rate"
)

// The control law of a pacer (pace.go): what an answer does to its
// origin's pause, rate and in-flight limit.

// finish ends t's request with what its answer said; retryAfter is the
// pause its answer asked for (0: none).
func (t *ticket) finish(s signal, code int, retryAfter time.Duration) {
	p := t.p
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	p.inFlight--
	switch s {
	case signalOK:
		p.succeededLocked(now)
	case signalThrottle, signalTimeout:
		if s == signalTimeout {
			code = 0
		}
		p.throttledLocked(now, t.sent, code, retryAfter)
	}
	p.dispatchLocked(now)
}

// succeededLocked grows what a success allows.
func (p *pacer) succeededLocked(now time.Time) {
	p.accepted.add(now)
	p.cuts = 0
	if top := float64(p.maxLimit()); p.limit < top {
		if p.lastCut.IsZero() {
			p.limit++ // the first window opens as TCP's: doubling each round trip
		} else {
			p.limit += 1 / p.limit
		}
		p.limit = min(p.limit, top)
	}
	if !p.paced {
		return
	}
	r := float64(p.adaptive.Limit())
	if p.ssthresh > 0 && now.Sub(p.lastCut) > relearnAfter {
		p.ssthresh, p.ceiling = 0, 0
	}
	gain := avoidGain
	switch {
	case p.ssthresh == 0 || r < p.ssthresh:
		gain = slowStartGain
	case r >= p.ceiling:
		gain = probeGain // past what was refused: probe for more, gently
	}
	r += gain // per success: gain×r per second's worth (r successes)
	if r >= unpacedRate {
		p.paced, p.ssthresh = false, 0
		p.adaptive.SetLimitAt(now, rate.Inf)
		return
	}
	p.adaptive.SetLimitAt(now, rate.Limit(r))
}

// throttledLocked slows the origin down: a pause for all, and a cut unless
// the request was sent before the last one.
func (p *pacer) throttledLocked(now, sent time.Time, code int, retryAfter time.Duration) {
	p.throttled = append(p.throttled, throttleEvent{at: now, code: code})
	p.counts[code]++
	p.trimLocked(now)
	if !sent.After(p.lastCut) && !p.lastCut.IsZero() {
		p.pauseLocked(now, retryAfter)
		return
	}
	p.cutLocked(now)
	p.cuts++
	pause := time.Duration(float64(time.Second) / float64(p.adaptive.Limit()))
	if p.cuts > 1 {
		pause = max(pause, min(p.opts.backoffBase<<min(p.cuts-2, 20), p.opts.backoffMax))
	}
	p.pauseLocked(now, max(pause, retryAfter))
}

func (p *pacer) pauseLocked(now time.Time, d time.Duration) {
	d = min(d, max(p.opts.maxRetryWait, p.opts.backoffMax))
	if until := now.Add(d); until.After(p.pause) {
		p.pause = until
	}
}

// cutLocked lowers the rate and the in-flight limit.
func (p *pacer) cutLocked(now time.Time) {
	accepted := p.accepted.count(now, acceptWindow)
	base := float64(p.sent.count(now, acceptWindow))
	if p.paced {
		base = float64(p.adaptive.Limit())
	}
	// What it accepted in the last second is what it allows, give or take
	// its burst; nothing accepted is no rate at all: the floor.
	base = min(base, float64(accepted)/acceptWindow.Seconds())
	switch {
	case accepted == 0:
		p.ssthresh, p.ceiling = 0, 0 // it accepts nothing now: learn afresh once it does
	case p.paced:
		p.ssthresh, p.ceiling = max(base*cutFactor, MinPacedRate), base
	}
	p.paced = true
	p.adaptive.SetLimitAt(now, rate.Limit(max(base*cutFactor, MinPacedRate)))
	p.limit = max(1, min(p.limit, float64(p.maxLimit()))*limitCut)
	p.lastCut = now
}

func (p *pacer) trimLocked(now time.Time) {
	i := 0
	for i < len(p.throttled) && now.Sub(p.throttled[i].at) > throttleWindow {
		i++
	}
	p.throttled = p.throttled[i:]
}
