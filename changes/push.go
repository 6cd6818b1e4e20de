package changes

import (
	"context"
	"errors"
	"fmt"

	"rsfs/notify"
	"rsfs/resourcesync"
	"rsfs/source"
)

// Subscribe subscribes to every notification channel the Capability Lists
// advertise (rs:ln rel="hub"), and returns how many. Channels for Change
// Lists and Change Notifications carry changes; Framework Notifications say
// a document changed, which is read again.
func (f *Follower) Subscribe(ctx context.Context, sub *notify.Subscriber) (int, error) {
	n := 0
	var errs []error
	for _, set := range f.s.Sets {
		for _, ch := range set.Hubs {
			if err := sub.Subscribe(ctx, ch.Hub, ch.Topic); err != nil {
				errs = append(errs, fmt.Errorf("subscribe to %s at %s: %w", ch.Topic, ch.Hub, err))
				continue
			}
			f.s.Logger().Info("subscribed to notifications", "topic", ch.Topic, "hub", ch.Hub, "capability", ch.Capability)
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
	f.collect(r, n.Topic, &n.Doc.Header, n.Doc.Entries)
	f.noteNewest(set, r.changes)
	f.applyChanges(ctx, set, r.changes, true)
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
		for _, ch := range set.Hubs {
			if ch.Topic == topic {
				return set
			}
		}
	}
	return nil
}
