package source

import (
	"context"
	"errors"
	"fmt"

	"rsfs/notify"
	"rsfs/resourcesync"
)

// Subscribe subscribes to every notification channel the Capability Lists
// advertise (rs:ln rel="hub"), and returns how many. Channels for Change
// Lists and Change Notifications carry changes; Framework Notifications say
// a document changed, which triggers a reload.
func (f *Follower) Subscribe(ctx context.Context, sub *notify.Subscriber) (int, error) {
	n := 0
	var errs []error
	for _, set := range f.s.Sets {
		for _, ch := range set.Hubs {
			if err := sub.Subscribe(ctx, ch.Hub, ch.Topic); err != nil {
				errs = append(errs, fmt.Errorf("subscribe to %s at %s: %w", ch.Topic, ch.Hub, err))
				continue
			}
			f.s.log.Info("subscribed to notifications", "topic", ch.Topic, "hub", ch.Hub, "capability", ch.Capability)
			n++
		}
	}
	return n, errors.Join(errs...)
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
			if f.held != nil && f.held() {
				// Held: the next poll after the hold catches up through the
				// Change List, which lists this change too.
				continue
			}
			if err := f.applyNotification(ctx, n); err != nil && ctx.Err() == nil {
				f.s.log.Error("applying a notification", "topic", n.Topic, "err", err)
			}
		}
	}
}

func (f *Follower) applyNotification(ctx context.Context, n notify.Notification) error {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	set := f.setOfTopic(n.Topic)
	if set == nil {
		return fmt.Errorf("notification for unknown topic %s", n.Topic)
	}
	if n.Doc.Header.Capability() == resourcesync.CapFrameworkNotification {
		return f.reload(ctx)
	}
	f.mu.Lock()
	pos := *f.positions[set]
	f.mu.Unlock()
	var changes []change
	for _, c := range changesAfter(n.Doc.Entries, &pos) {
		if c.entry.MD.Change != "" { // a notification may carry other entries
			changes = append(changes, c)
		}
	}
	return f.applyChanges(ctx, set, changes)
}

func (f *Follower) setOfTopic(topic string) *Set {
	for _, set := range f.s.Sets {
		for _, ch := range set.Hubs {
			if ch.Topic == topic {
				return set
			}
		}
	}
	return nil
}
