package status

import "time"

// Follower is a follower as `rsfs status` and metrics see it, whichever
// protocol it follows: a ResourceSync Source's (package changes), or an
// Atom-PMH feed's (package atomfeed), whose one set is the feed.
type Follower interface {
	Status() Follow
}

// Polling is what a poll loop (package follow) has done and will do.
type Polling struct {
	Polls        int64 // polls started, early ones included
	PollFailures int64 // polls that ended in an error
	LastPoll     time.Time
	LastPollTook time.Duration
	LastPollErr  string    // "" when the last poll succeeded
	NextPoll     time.Time // zero when not following by polling
}

// Follow is what a follower has done and will do, for `rsfs status` and
// metrics.
type Follow struct {
	Polling
	Applied, Reloads int64
	Pushed           int64 // notifications received (held ones too)
	Sets             []Set
}

// Set is one resource set's follow position (an Atom-PMH feed's: its
// harvest mark).
type Set struct {
	Set string // its Capability List URL (or first Resource List); a feed's URL
	// Position: every change up to this time is applied.
	Position time.Time
	// Newest is the newest change the set's Change Lists (or its pushed
	// notifications) listed so far; zero before any was seen. Newest minus
	// Position is how far behind the Source the set is.
	Newest time.Time
	// Resources is how many resources in the tree the set lists.
	Resources int
}
