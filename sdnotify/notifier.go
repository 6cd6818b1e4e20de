package sdnotify

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Notifier tells a Type=notify unit what a service is doing, when
// $NOTIFY_SOCKET is set: STATUS= lines while it starts and runs, READY=1
// once it serves, STOPPING=1 when it stops, after which it says nothing
// more. It logs the first failure to notify, and no more. The zero value
// is ready to use.
type Notifier struct {
	warnOnce sync.Once
	stopOnce sync.Once
	stopped  atomic.Bool
	mu       sync.Mutex
	lastLoad time.Time
}

// Send sends state (Notify) unless the service is stopping.
func (n *Notifier) Send(state string) {
	if n.stopped.Load() {
		return
	}
	if err := Notify(state); err != nil {
		n.warnOnce.Do(func() { slog.Warn("telling systemd", "err", err) })
	}
}

// Loading sets the status to line, at most once a second.
func (n *Notifier) Loading(line string) {
	n.mu.Lock()
	due := time.Since(n.lastLoad) >= time.Second
	if due {
		n.lastLoad = time.Now()
	}
	n.mu.Unlock()
	if due {
		n.Send("STATUS=" + line)
	}
}

// Ready says the service is ready, then its status.
func (n *Notifier) Ready(status string) {
	n.Send("READY=1")
	n.Send("STATUS=" + status)
}

// pollEvery is how often Follow looks for a new outcome.
const pollEvery = 200 * time.Millisecond

// Follow sets the status to each new outcome until ctx ends: every 200 ms
// it asks last, which returns when the latest outcome was and its status
// line, and sends the line once per time. The returned func stops it and
// waits, so that nothing follows STOPPING=1. Without $NOTIFY_SOCKET it
// does nothing.
func (n *Notifier) Follow(ctx context.Context, last func() (time.Time, string)) (stop func()) {
	if !Enabled() {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var sent time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(pollEvery):
			}
			at, line := last()
			if at.Equal(sent) {
				continue
			}
			sent = at
			n.Send("STATUS=" + line)
		}
	}()
	return func() { cancel(); <-done }
}

// Stopping says the service is stopping; once.
func (n *Notifier) Stopping() {
	n.stopOnce.Do(func() {
		n.Send("STOPPING=1")
		n.stopped.Store(true)
	})
}
