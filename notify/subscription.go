package notify

import (
	"sync"
	"sync/atomic"
	"time"
)

// Hub modes of a verification request (hub.mode).
const (
	modeSubscribe   = "subscribe"
	modeUnsubscribe = "unsubscribe"
	modeDenied      = "denied"
)

// subscription is one topic at one hub, with its own callback. Fields after
// the first group are guarded by Subscriber.mu.
type subscription struct {
	id       string
	hub      string
	topic    string
	callback string
	stop     chan struct{} // closed to end the renewal loop
	done     chan struct{} // closed when the renewal loop has ended
	stopOnce sync.Once
	renewing atomic.Bool // a renewal loop was started

	active   bool          // verified by the hub and not unsubscribed
	pending  string        // the mode of the request awaiting verification, or ""
	result   chan error    // receives the verification outcome of pending
	lease    time.Duration // granted by the last verification
	verified time.Time     // when the last subscribe verification arrived
}

func newSubscription(id, hub, topic, callback string) *subscription {
	return &subscription{
		id:       id,
		hub:      hub,
		topic:    topic,
		callback: callback,
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
}

// stopRenewal ends the renewal loop, if one runs, and waits for it.
func (sub *subscription) stopRenewal() {
	sub.stopOnce.Do(func() { close(sub.stop) })
	if sub.renewing.Load() {
		<-sub.done
	}
}

// expectVerification marks mode as awaiting the hub's verification and
// returns the channel its outcome arrives on. Caller holds Subscriber.mu.
func (sub *subscription) expectVerification(mode string) chan error {
	sub.pending = mode
	sub.result = make(chan error, 1)
	return sub.result
}

// settle delivers the outcome of the pending request. Caller holds
// Subscriber.mu.
func (sub *subscription) settle(err error) {
	if sub.result != nil {
		sub.result <- err
	}
	sub.pending = ""
	sub.result = nil
}

// renewAt is when the subscription should be renewed: at 80% of the granted
// lease. Caller holds Subscriber.mu.
func (sub *subscription) renewAt() time.Time {
	return sub.verified.Add(sub.lease * 8 / 10)
}
