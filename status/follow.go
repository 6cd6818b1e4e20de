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
	// Drift is how many resources drift repair corrected: the tree
	// differed from a changed Resource List plus the changes after it.
	Drift int64
	Sets  []Set
	// Push is the state of every notification subscription.
	Push []Push
}

// Push is one notification subscription (a hub and topic).
type Push struct {
	Hub, Topic string
	State      string    // PushSubscribed, PushRenewing, PushFailed or PushRetrying
	Err        string    // the last failure, "" when none
	Next       time.Time // the next renewal or retry; zero when none is due
}

// The states of a push subscription.
const (
	PushSubscribed = "subscribed"
	PushRenewing   = "renewing"
	PushFailed     = "failed"
	PushRetrying   = "retrying"
)

// DocError is a document of a set that could not be read at the last
// poll: the set is degraded until it is read again (or dropped).
type DocError struct {
	Doc   string
	Err   string
	Since time.Time // the first poll it failed at, in this run of failures
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
	// Complete is when the last poll that read every one of the set's
	// documents started; zero before any did. Degraded lists the documents
	// that failed since.
	Complete time.Time
	Degraded []DocError
	// NothingToFollow: the set names no Change List nor Change Dump (a
	// poll only reads its Capability List again, in case it names one).
	NothingToFollow bool
	// NoBaseline: the set publishes no Resource List nor Resource Dump,
	// only changes: the tree holds only what they name.
	NoBaseline bool
	// Warnings are what the set's documents, as last read, depart from
	// the standard in, where rsfs reads them otherwise than as written.
	Warnings []DocWarning
}

// DocWarning is a lasting condition of one document of a set: what it
// holds and how rsfs reads it.
type DocWarning struct {
	Doc, Msg string
}

// Behind is how far behind the Source the set is at now: from its position
// to the newest change listed when its last poll read every document; when
// a document failed since (or none was read yet), at least the time since
// its last complete poll began (since started, before any).
func (s *Set) Behind(now, started time.Time) time.Duration {
	behind := s.Newest.Sub(s.Position)
	if behind < 0 {
		behind = 0
	}
	if len(s.Degraded) > 0 || s.Complete.IsZero() {
		since := s.Complete
		if since.IsZero() {
			since = started
		}
		if d := now.Sub(since); d > behind {
			behind = d
		}
	}
	return behind
}
