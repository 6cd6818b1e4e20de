package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"rsfs/protocol"
	"rsfs/sdnotify"
	"rsfs/source"
)

// systemd tells a Type=notify unit what the mount is doing, when
// $NOTIFY_SOCKET is set: STATUS= lines while it loads and follows, READY=1
// once it serves, STOPPING=1 when it unmounts. It logs the first failure
// to notify, and no more.
type systemd struct {
	warnOnce sync.Once
	stopOnce sync.Once
	stopped  atomic.Bool
	mu       sync.Mutex
	lastLoad time.Time
}

// notifySystemd is the process's link to systemd.
var notifySystemd systemd

func (s *systemd) send(state string) {
	if s.stopped.Load() {
		return
	}
	if err := sdnotify.Notify(state); err != nil {
		s.warnOnce.Do(func() { slog.Warn("telling systemd", "err", err) })
	}
}

// loading reports loading progress, at most once a second.
func (s *systemd) loading(pr source.Progress) {
	s.mu.Lock()
	due := time.Since(s.lastLoad) >= time.Second
	if due {
		s.lastLoad = time.Now()
	}
	s.mu.Unlock()
	if due {
		s.send(fmt.Sprintf("STATUS=loading: %d lists read, %d resources", pr.Lists, pr.Resources))
	}
}

// ready says the mount serves, then what it serves.
func (s *systemd) ready(resources int, origin string) {
	s.send("READY=1")
	s.send(fmt.Sprintf("STATUS=serving %d resources from %s", resources, origin))
}

// follow reports each poll's outcome until ctx ends; the returned func
// stops it and waits, so that nothing follows STOPPING=1. Without
// $NOTIFY_SOCKET it does nothing.
func (s *systemd) follow(ctx context.Context, f protocol.Follower, count func() int) (stop func()) {
	if !sdnotify.Enabled() {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var last time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
			p := f.Polling()
			if p.LastPoll.Equal(last) {
				continue
			}
			last = p.LastPoll
			result := "ok"
			if p.LastPollErr != "" {
				result = "failed: " + p.LastPollErr
			}
			s.send(fmt.Sprintf("STATUS=following: %d resources, %d changes applied; last poll %s %s",
				count(), f.Applied(), p.LastPoll.UTC().Format(time.TimeOnly), result))
		}
	}()
	return func() { cancel(); <-done }
}

// stopping says the mount is being unmounted; once.
func (s *systemd) stopping() {
	s.stopOnce.Do(func() {
		s.send("STOPPING=1")
		s.stopped.Store(true)
	})
}
