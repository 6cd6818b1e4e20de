package changes

import (
	"context"
	"fmt"

	"rsfs/resourcesync"
	"rsfs/source"
)

// reloadFor is the reload's reason, by the kind of unread document that
// reads now (source.RetryUnread).
var reloadFor = map[source.UnreadKind]string{
	source.UnreadCapabilityList: "a Capability List that could not be read reads now; reloading the Resource Lists",
	source.UnreadResourceList:   "a Resource List that could not be read reads now; reloading the Resource Lists",
	source.UnreadResourceDump:   reloadDumps,
	source.UnreadChangeDump:     reloadDumps,
}

// retryUnread reads again every document that could not be read, by the
// one registry's retry (source.RetryUnread): Capability Lists with
// rereadCapabilityList, the rest as source reads them. It reports whether
// a reload is due, and why; due says one already is (the Resource Lists
// and dumps are then not read: the reload reads them).
func (f *Follower) retryUnread(ctx context.Context, due bool) (reload bool, why string) {
	reload, kind := f.s.RetryUnread(ctx, due, map[source.UnreadKind]source.Reread{
		source.UnreadCapabilityList: f.rereadCapabilityList,
	})
	return reload, reloadFor[kind]
}

// rereadCapabilityList reads again a set's Capability List that could not
// be read (when the Source was found, or since), and adopts what it names
// now. It reports whether that changed the set's documents: its Resource
// Lists then need a reload. A set whose Capability List still fails keeps
// its documents (none, or those the snapshot had).
func (f *Follower) rereadCapabilityList(ctx context.Context, set *source.Set, u string) (reload bool, err error) {
	doc, err := f.s.GetDoc(ctx, u)
	if err == nil && doc.Header.Capability() != resourcesync.CapCapabilityList {
		err = fmt.Errorf("capability is %q", doc.Header.Capability())
	}
	if err != nil {
		return false, fmt.Errorf("read capability list %s: %w", u, err)
	}
	return f.adoptDocs(set, f.s.SetFromCapabilityList(u, doc)), nil
}
