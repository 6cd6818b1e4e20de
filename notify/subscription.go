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
	stop     chan struct{} // closed to end the keep loop
	done     chan struct{} // closed when the keep loop has ended
	revoked  chan error    // the hub revoked the subscription: the keep loop subscribes again
	stopOnce sync.Once
	renewing atomic.Bool // a keep loop was started

	active   bool          // verified by the hub and not unsubscribed
	pending  string        // the mode of the request awaiting verification, or ""
	result   chan error    // receives the verification outcome of pending
	lease    time.Duration // granted by the last verification
	verified time.Time     // when the last subscribe verification arrived
	phase    Phase         // for States
	err      error         // the last failed request; nil once one succeeds
	retryAt  time.Time     // when phase is Retrying: the next request
	failures int           // requests in a row that failed, for States: 0 once verified
	failed   int           // the same, for the keep loop's log: 0 once it has logged the success
}

func newSubscription(id, hub, topic, callback string) *subscription {
	return &subscription{
		id:       id,
		hub:      hub,
		topic:    topic,
		callback: callback,
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		revoked:  make(chan error, 1),
	}
}

// stopRenewal ends the keep loop, if one runs, and waits for it.
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

// failuresBefore returns how many requests failed before the one that
// just succeeded, and starts counting again. mu is Subscriber.mu.
func (sub *subscription) failuresBefore(mu *sync.Mutex) int {
	mu.Lock()
	defer mu.Unlock()
	n := sub.failed
	sub.failed = 0
	return n
}
