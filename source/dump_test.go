package source

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"rsfs/copies"
	"rsfs/resourcesync"
)

func TestDumpOnlyCopiesNeverBringBackDeletedResources(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC) }
	listed := &Set{Docs: map[resourcesync.Capability][]string{resourcesync.CapResourceList: {"rl"}}}
	dumpOnly := &Set{Docs: map[resourcesync.Capability][]string{resourcesync.CapResourceDump: {"rd"}}}
	d := dumpCopies{listedAt: map[*Set]time.Time{listed: day(5)},
		docs: func(s *Set, c resourcesync.Capability) []string { return s.Docs[c] }}
	add := func(uri string, at time.Time, set *Set) {
		d.add(uri, dumpCopy{link: resourcesync.Link{Rel: copies.DumpRel, Href: "p.zip", Path: uri, Length: 1, Modified: at},
			entry: resourcesync.Entry{Loc: uri, Lastmod: at}, at: at, set: set})
	}
	add("old-archive", day(1), listed)     // a 1.0 archive older than the Resource List, which leaves it out
	add("newer-than-list", day(6), listed) // changed after the list: a dump-only resource
	add("deleted-later", day(2), dumpOnly)
	d.noteDeleted("deleted-later", day(3))
	add("deleted-earlier", day(4), dumpOnly)
	d.noteDeleted("deleted-earlier", day(3))
	var got []string
	for _, r := range d.unlisted() {
		got = append(got, r.URI)
	}
	sort.Strings(got)
	assert.Equal(t, []string{"deleted-earlier", "newer-than-list"}, got)
	assert.Equal(t, 2, d.dropped)
}

// A set listed by its Resource Dumps alone keeps their copies whatever
// their times say (resync-client's fixture dates its manifest before the
// dump's at); a Change Dump's copy older than the Resource Dumps, which
// they leave out, was deleted since.
func TestAResourceDumpsOwnCopiesAreNeverStale(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC) }
	set := &Set{Docs: map[resourcesync.Capability][]string{resourcesync.CapResourceDump: {"rd"}, resourcesync.CapChangeDump: {"cd"}}}
	d := dumpCopies{listedAt: map[*Set]time.Time{set: day(22)},
		docs: func(s *Set, c resourcesync.Capability) []string { return s.Docs[c] }}
	add := func(uri string, at time.Time, resourceDump bool) {
		d.add(uri, dumpCopy{link: resourcesync.Link{Rel: copies.DumpRel, Href: "p.zip", Path: uri, Length: 1, Modified: at},
			entry: resourcesync.Entry{Loc: uri, Lastmod: at}, at: at, set: set, resourceDump: resourceDump})
	}
	add("in-the-resource-dump", day(5), true)
	add("in-an-old-change-dump", day(5), false)
	var got []string
	for _, r := range d.unlisted() {
		got = append(got, r.URI)
	}
	assert.Equal(t, []string{"in-the-resource-dump"}, got)
	assert.Equal(t, 1, d.dropped)
}
