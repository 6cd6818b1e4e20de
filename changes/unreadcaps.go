package changes

import (
	"context"
	"fmt"

	"rsfs/resourcesync"
)

// reloadCapabilityLists is the reload's reason when a Capability List
// that could not be read reads now.
const reloadCapabilityLists = "a Capability List that could not be read reads now; reloading the Resource Lists"

// reloadLists is the reload's reason when a Resource List that could not
// be read reads now.
const reloadLists = "a Resource List that could not be read reads now; reloading the Resource Lists"

// retryUnreadCapabilityLists reads again each set's Capability List that
// could not be read (when the Source was found, or since), and adopts what
// one that reads now names. It reports whether that changed the set's
// documents: its Resource Lists then need a reload. A set whose
// Capability List still fails keeps its documents (none, or those the
// snapshot had) and the latest error, without another warning.
func (f *Follower) retryUnreadCapabilityLists(ctx context.Context) (reload bool) {
	for _, set := range f.sets() {
		if _, unread := f.s.UnreadCapabilityList(set); !unread {
			continue
		}
		doc, err := f.s.GetDoc(ctx, set.URL)
		if err == nil && doc.Header.Capability() != resourcesync.CapCapabilityList {
			err = fmt.Errorf("capability is %q", doc.Header.Capability())
		}
		if err != nil {
			if ctx.Err() != nil {
				return reload
			}
			f.s.NoteCapabilityListUnread(set, fmt.Errorf("read capability list %s: %w", set.URL, err))
			continue
		}
		f.s.NoteCapabilityListRead(set)
		if f.adoptDocs(set, f.s.SetFromCapabilityList(set.URL, doc)) {
			reload = true
		}
	}
	return reload
}
