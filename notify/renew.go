package notify

import (
	"context"
	"math/bits"
	"math/rand/v2"
	"sort"
	"time"
)

// Phase is where a subscription stands.
type Phase int

const (
	// Requesting: a subscribe request (the first, or a renewal) awaits
	// the hub's answer and verification.
	Requesting Phase = iota
	// Subscribed: the hub verified the subscription; it is renewed at
	// 80% of the lease granted.
	Subscribed
	// Retrying: the last subscribe request failed (the hub was down,
	// refused, denied or did not verify in time) or the hub revoked the
	// subscription; the next request is made after a backoff.
	Retrying
)

func (p Phase) String() string {
	switch p {
	case Requesting:
		return "requesting"
	case Subscribed:
		return "subscribed"
	case Retrying:
		return "retrying"
	}
	return "unknown"
}

// State is how one subscription stands now.
type State struct {
	Hub, Topic string
	Phase      Phase
	// Err is the last failed request (or the hub's revocation) while
	// Phase is Requesting or Retrying; nil once a request succeeds.
	Err error
	// Next is when the subscription is next renewed (Subscribed) or
	// requested again (Retrying); zero while Requesting.
	Next time.Time
	// Failures is how many requests in a row failed.
	Failures int
}

// States returns the state of every subscription, ordered by topic and hub.
func (s *Subscriber) States() []State {
	s.mu.Lock()
	out := make([]State, 0, len(s.subs))
	for _, sub := range s.subs {
		st := State{Hub: sub.hub, Topic: sub.topic, Phase: sub.phase, Err: sub.err, Failures: sub.failures}
		switch sub.phase {
		case Subscribed:
			st.Next = sub.renewAt()
		case Retrying:
			st.Next = sub.retryAt
		}
		out = append(out, st)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Hub < out[j].Hub
	})
	return out
}

// keepLoop keeps sub subscribed until stopped: it sends a subscribe request
// at once (unless verified, when the first is the renewal at 80% of the
// lease), then one at 80% of each lease granted. A request that fails, and
// a revocation by the hub, are retried after a backoff (RetryMin doubling
// to RetryMax, jittered); failures are logged at the 1st, 2nd, 4th, 8th...
// in a row, the rest at debug level.
func (s *Subscriber) keepLoop(sub *subscription, verified bool) {
	defer close(sub.done)
	var wait, backoff time.Duration
	if verified {
		wait = s.untilRenewal(sub)
	}
	for {
		if err := s.waitOrRevoked(sub, wait); err != nil {
			if err == errStopped {
				return
			}
			backoff, wait = s.failed(sub, backoff, err)
			continue
		}
		s.setPhase(sub, Requesting, nil, time.Time{})
		err := s.renew(sub)
		select {
		case <-sub.stop:
			return
		default:
		}
		if err != nil {
			backoff, wait = s.failed(sub, backoff, err)
			continue
		}
		failures, first := sub.failuresBefore(&s.mu), !verified
		verified, backoff = true, 0
		if first || failures > 0 {
			s.log.Info("notify: subscribed", "hub", sub.hub, "topic", sub.topic, "callback", sub.callback, "failed_before", failures)
		} else {
			s.log.Debug("notify: renewed", "hub", sub.hub, "topic", sub.topic, "lease", s.leaseOf(sub))
		}
		wait = s.untilRenewal(sub)
		select {
		case err := <-sub.revoked:
			// A revocation of the subscription just renewed: try again
			// after a backoff.
			backoff, wait = s.failed(sub, backoff, err)
		default:
		}
	}
}

// errStopped is waitOrRevoked's answer when the loop is stopped.
var errStopped = context.Canceled

// waitOrRevoked waits d; it returns errStopped when the loop is stopped
// first, or the hub's revocation if one arrives first.
func (s *Subscriber) waitOrRevoked(sub *subscription, d time.Duration) error {
	t := time.NewTimer(max(d, 0))
	defer t.Stop()
	select {
	case <-sub.stop:
		return errStopped
	case err := <-sub.revoked:
		return err
	case <-t.C:
		return nil
	}
}

// failed records a failed request (or a revocation) and returns the next
// backoff and the jittered wait before the next request.
func (s *Subscriber) failed(sub *subscription, prev time.Duration, err error) (backoff, wait time.Duration) {
	backoff = nextBackoff(prev, s.opts.RetryMin, s.opts.RetryMax)
	wait = jitter(backoff)
	s.mu.Lock()
	sub.failures++
	sub.failed++
	n := sub.failures
	s.mu.Unlock()
	s.setPhase(sub, Retrying, err, time.Now().Add(wait))
	log := s.log.Debug
	if bits.OnesCount(uint(n)) == 1 { // 1st, 2nd, 4th, 8th...
		log = s.log.Warn
	}
	log("notify: subscribe request failed; retrying", "hub", sub.hub, "topic", sub.topic, "failures", n, "retry_in", wait.Round(time.Millisecond), "err", err)
	return backoff, wait
}

func (s *Subscriber) setPhase(sub *subscription, p Phase, err error, retryAt time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub.phase, sub.retryAt = p, retryAt
	if err != nil || p == Subscribed {
		sub.err = err
	}
}

// renew sends one subscribe request, cancelled when the loop is stopped.
func (s *Subscriber) renew(sub *subscription) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-sub.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return s.request(ctx, sub, modeSubscribe)
}

func (s *Subscriber) untilRenewal(sub *subscription) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Until(sub.renewAt())
}

func (s *Subscriber) leaseOf(sub *subscription) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sub.lease
}

// nextBackoff doubles the previous backoff, from lo up to hi.
func nextBackoff(prev, lo, hi time.Duration) time.Duration {
	if prev <= 0 {
		return lo
	}
	return min(prev*2, hi)
}

// jitter shortens d by a random part of up to a quarter, so subscribers
// that failed together do not all try again at once.
func jitter(d time.Duration) time.Duration {
	if q := int64(d / 4); q > 0 {
		return d - time.Duration(rand.Int64N(q))
	}
	return d
}
