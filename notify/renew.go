package notify

import (
	"context"
	"time"
)

// Bounds of the wait between failed renewals.
const (
	minRetry = 100 * time.Millisecond
	maxRetry = 5 * time.Minute
)

// renewLoop re-subscribes sub at 80% of each granted lease until stopped.
// A failed renewal is logged and retried with exponential backoff.
func (s *Subscriber) renewLoop(sub *subscription) {
	defer close(sub.done)
	var retry time.Duration
	for {
		wait := retry
		if wait == 0 {
			wait = s.untilRenewal(sub)
		}
		if !sleep(sub.stop, wait) {
			return
		}
		err := s.renew(sub)
		if err == nil {
			retry = 0
			continue
		}
		retry = nextRetry(retry, s.leaseOf(sub))
		select {
		case <-sub.stop:
			return
		default:
		}
		s.log.Warn("notify: renewal failed", "hub", sub.hub, "topic", sub.topic, "retry_in", retry, "err", err)
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
	if err := s.request(ctx, sub, modeSubscribe); err != nil {
		return err
	}
	s.log.Debug("notify: renewed", "hub", sub.hub, "topic", sub.topic, "lease", s.leaseOf(sub))
	return nil
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

// nextRetry doubles the previous wait; the first is a tenth of the lease,
// within [minRetry, 30 s], and none exceeds maxRetry.
func nextRetry(prev, lease time.Duration) time.Duration {
	if prev == 0 {
		return min(max(lease/10, minRetry), 30*time.Second)
	}
	return min(prev*2, maxRetry)
}

// sleep waits d, or until stop is closed; it reports whether d elapsed.
func sleep(stop <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-stop:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	}
}
