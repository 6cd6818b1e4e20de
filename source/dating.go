package source

import (
	"time"

	"rsfs/resourcesync"
)

// The rules for dating changes that the follower (package changes) and
// inspect's follow plan share, so that the two agree.

// FutureBound is how far ahead of now a change may be dated before it is
// taken as dated in the future: inspect reports it so, and following
// (package changes) applies it without moving the position past now plus
// FutureBound.
const FutureBound = 24 * time.Hour

// DatedByLastmod reports whether a change document's entries are dated
// by lastmod: when none of them has a datetime. ResourceSync 1.0
// (Z39.99-2014) dated changes by lastmod under a from/until header; 1.1
// (Z39.99-2017) added rs:md datetime for the change and kept lastmod for
// the resource. So the header says nothing about the version: 1.0 lists
// carry from and until too. The follower (package changes), pushed
// notifications and inspect's follow plan all date by this rule.
func DatedByLastmod(entries []resourcesync.Entry) bool {
	for i := range entries {
		if !entries[i].MD.Datetime.IsZero() {
			return false
		}
	}
	return true
}

// ChangeTime is when the change an entry records happened: its datetime,
// or its lastmod in a document dated by lastmod. Zero: undated (ordered by
// its place in the document).
func ChangeTime(e *resourcesync.Entry, byLastmod bool) time.Time {
	if !e.MD.Datetime.IsZero() || !byLastmod {
		return e.MD.Datetime
	}
	return e.Lastmod
}
