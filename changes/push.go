package changes

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"rsfs/notify"
	"rsfs/resourcesync"
	"rsfs/source"
	"rsfs/status"
)

// Subscribe keeps a subscription to every notification channel the
// Capability Lists advertise (rs:ln rel="hub"), and returns how many.
// Channels for Change Lists and Change Notifications carry changes;
// Framework Notifications say a document changed, which is read again.
// It returns at once: sub subscribes in the background, and a hub that is
// down, refuses or does not verify is asked again with backoff, as is a
// renewal that fails (notify.Subscriber.Keep). Status reports each
// subscription's state. The error names the channels whose hub or topic
// URL is unusable; they are reported failed, and never tried.
func (f *Follower) Subscribe(ctx context.Context, sub *notify.Subscriber) (int, error) {
	n := 0
	var errs []error
	var failed []status.Push
	for _, set := range f.s.Sets() {
		for _, ch := range f.s.Hubs(set) {
			if err := sub.Keep(ch.Hub, ch.Topic); err != nil {
				errs = append(errs, fmt.Errorf("subscribe to %s at %s: %w", ch.Topic, ch.Hub, err))
				failed = append(failed, status.Push{Hub: ch.Hub, Topic: ch.Topic, State: status.PushFailed, Err: err.Error()})
				continue
			}
			f.s.Logger().Info("subscribing to notifications", "topic", ch.Topic, "hub", ch.Hub, "capability", ch.Capability)
			n++
		}
	}
	ps := f.push(true)
	ps.mu.Lock()
	ps.sub, ps.failed = sub, failed
	ps.mu.Unlock()
	return n, errors.Join(errs...)
}

// pushState is a Follower's notification subscriptions, for Status.
type pushState struct {
	mu     sync.Mutex
	sub    *notify.Subscriber
	failed []status.Push // channels never tried: an unusable hub or topic URL
}

// push returns f's pushState, made if create is set; nil if none.
func (f *Follower) push(create bool) *pushState {
	f.pushMu.Lock()
	defer f.pushMu.Unlock()
	if f.pushes == nil && create {
		f.pushes = &pushState{}
	}
	return f.pushes
}

// pushStates returns the state of every notification subscription: those
// the subscriber keeps (subscribed, renewing, or retrying after a failure),
// and those never tried (failed). Status calls it holding f.mu; it takes
// no lock of f's.
func (f *Follower) pushStates() []status.Push {
	ps := f.push(false)
	if ps == nil {
		return nil
	}
	ps.mu.Lock()
	sub, out := ps.sub, append([]status.Push(nil), ps.failed...)
	ps.mu.Unlock()
	if sub == nil {
		return out
	}
	for _, st := range sub.States() {
		p := status.Push{Hub: st.Hub, Topic: st.Topic, Next: st.Next}
		switch st.Phase {
		case notify.Subscribed:
			p.State = status.PushSubscribed
		case notify.Requesting:
			// A subscribe request awaits the hub: the first one, or a
			// renewal.
			p.State = status.PushRenewing
		default:
			p.State = status.PushRetrying
		}
		if st.Err != nil {
			p.Err = st.Err.Error()
		}
		out = append(out, p)
	}
	return out
}

// RunPush applies pushed notifications as they arrive, until the channel
// closes or ctx ends.
func (f *Follower) RunPush(ctx context.Context, notes <-chan notify.Notification) {
	for {
		select {
		case <-ctx.Done():
			return
		case n, ok := <-notes:
			if !ok {
				return
			}
			f.notePushed()
			if f.Held() {
				// Held: the next poll after the hold catches up through the
				// Change List, which lists this change too.
				continue
			}
			if err := f.applyNotification(ctx, n); err != nil && ctx.Err() == nil {
				f.s.Logger().Error("applying a notification", "topic", n.Topic, "err", err)
			}
		}
	}
}

// applyNotification applies a pushed notification without moving the
// position: a Change Notification's changes, or what the documents a
// Framework Notification names say (framework.go), are applied and marked
// ahead, so the poll still reads every change before them. Applying takes applyMu only while
// the catalog changes; documents are read with no lock held.
func (f *Follower) applyNotification(ctx context.Context, n notify.Notification) error {
	set := f.setOfTopic(n.Topic)
	if set == nil {
		return fmt.Errorf("notification for unknown topic %s", n.Topic)
	}
	if n.Doc.Header.Capability() == resourcesync.CapFrameworkNotification {
		return f.applyFramework(ctx, set, n)
	}
	r := f.newRead(set, false)
	r.collect(n.Topic, &n.Doc.Header, n.Doc.Entries, false)
	f.noteNewest(set, r.changes)
	f.applyChanges(ctx, set, r.changes, pushed)
	return nil
}

// knownChangeDoc reports whether u is one of set's Change Lists or a child
// of one of its Change List Indexes: the only documents a notification may
// make rsfs read.
func (f *Follower) knownChangeDoc(set *source.Set, u string) bool {
	docs, _ := f.changeDocs(set)
	for _, d := range docs {
		if d == u {
			return true
		}
		f.mu.Lock()
		children := f.indexes[d]
		f.mu.Unlock()
		for i := range children {
			if children[i].Loc == u {
				return true
			}
		}
	}
	return false
}

func (f *Follower) setOfTopic(topic string) *source.Set {
	for _, set := range f.sets() {
		for _, ch := range f.s.Hubs(set) {
			if ch.Topic == topic {
				return set
			}
		}
	}
	return nil
}
