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

// Is10Header reports whether a change document's header follows the 1.0
// drafts: no from, until, at or completed. If no entry has a datetime
// either, the document is a 1.0 one and lastmod dates its entries: so the
// follower (package changes) dates them, and inspect's follow plan too.
func Is10Header(h *resourcesync.Header) bool {
	md := &h.MD
	return md.From.IsZero() && md.Until.IsZero() && md.At.IsZero() && md.Completed.IsZero()
}
