// Package source is a ResourceSync Source as this Destination sees it:
// discovery of its resource sets (from a Source Description, a Capability
// List, any document a Source names, robots.txt, or a link to one),
// loading their Resource Lists, Resource Dumps and dump manifests into a
// catalog, opening the members of dump packages, inspect's report of what
// the documents hold and how a mount would follow them, and the state a
// snapshot keeps of the Source (State).
//
// Following the Source's changes (Change Lists, Change Dumps,
// notifications, the positions in State) is package changes, which builds
// on the Source this package discovers and loads; source never imports it.
// It never touches FUSE.
package source

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"rsfs/fetch"
	"rsfs/resourcesync"
)

// Source is a discovered ResourceSync Source.
type Source struct {
	// Origin is scheme://host[:port] where the Source's documents live, as
	// they name it (their Source Description, Capability Lists, the
	// documents these name), else of the URL the user gave. Resources on it
	// map to the root of the tree.
	Origin string
	// Entry is the document discovery started from (the Source Description,
	// a Capability List, ...).
	Entry string
	// Failed are the documents discovery could not read (see
	// Options.Partial), Warnings what it tolerated; both name the document.
	Failed, Warnings []Problem

	opts   Options
	log    *slog.Logger
	policy *fetch.Policy // the client's: the origins it may fetch from, and why
	pkgs   packages
	lists  listValidators // of the Resource Lists last loaded
	unread unreadDocs     // the documents that could not be read (unread.go)
	// loaded are the packages a first load (Load) read, for the catch-up
	// poll that follows it to take rather than read again
	// (TakeLoadedPackage); nil once ForgetLoad drops them.
	loaded atomic.Pointer[Reads]

	// sets are the resource sets, one per Capability List (a Source
	// reached through a Resource List, Change List or robots.txt has one
	// implicit set whose URL is empty). Once discovery has returned them,
	// they, and each set's Docs, Hubs and Links, are read and replaced only
	// under setsMu, through the methods in sets.go.
	setsMu sync.Mutex
	sets   []*Set
}

// Set is one resource set: a Capability List and the documents it names.
type Set struct {
	// URL of the Capability List; empty for an implicit set.
	URL string
	// Docs lists, per capability, the URLs of the documents the Capability
	// List names (each may be an index). Exported for a snapshot's State;
	// once the set is a Source's, read it through Source.Docs and replace
	// it through Source.AdoptDocs or Source.ReplaceDocs.
	Docs map[resourcesync.Capability][]string
	// Hubs are the notification channels (rs:ln rel="hub") by capability,
	// e.g. "changelist" → hub URL, with the topic URL beside it; read
	// through Source.Hubs.
	Hubs []Channel
	// Links are the Capability List's own rs:ln elements.
	Links []resourcesync.Link
	// ListedAt is the oldest time the set's Resource Lists speak for (their
	// at, or 1.0's modified), zero if they did not say. Set by Load.
	ListedAt time.Time
}

// Channel is a notification channel a Capability List advertises.
// Its JSON keys are lower case, like the rest of inspect's report; a state
// saved with the old keys ("Capability", ...) still decodes, since
// encoding/json matches keys without regard to case.
type Channel struct {
	Capability resourcesync.Capability `json:"capability"`
	Topic      string                  `json:"topic"`
	Hub        string                  `json:"hub"`
}

// Options configure discovery and loading.
type Options struct {
	Client *fetch.Client
	Logger *slog.Logger
	// Parse bounds every document read.
	Parse resourcesync.Options
	// Parallel bounds concurrent list fetches; default 4.
	Parallel int
	// Partial: discovery records a Source Description or Capability List it
	// cannot read (in Source.Failed) and goes on with the others, as long as
	// one set is found. Without it a Source Description Index's Source
	// Description that cannot be read fails discovery, and a Capability List
	// that cannot be read stays a set with no documents, retried at each
	// poll (unreadcaps.go); only a Source where no set is read fails.
	Partial bool
	// Other, when set, tells discovery another protocol's documents
	// (package discover sets it): Discover stops with an *OtherFound at
	// one. Without it discovery looks for ResourceSync only.
	Other Other
}

// newSource returns a Source at the origin of rawURL (any URL on it), with
// opts' defaults filled in and the client's origin policy allowing that
// origin for why.
func newSource(rawURL string, why fetch.Reason, opts Options) *Source {
	if opts.Parallel <= 0 {
		opts.Parallel = 4
	}
	policy := opts.Client.Policy()
	s := &Source{Origin: policy.Admit(rawURL, why), opts: opts, log: opts.logger(), policy: policy}
	s.pkgs.s = s
	return s
}

func (o *Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

// addSetDoc records a document of a set. The Source names it, so its
// origin may be fetched from (a Capability List may place its lists on
// another host, a CDN say).
func (s *Source) addSetDoc(set *Set, c resourcesync.Capability, url string) {
	s.AllowDoc(url)
	if set.Docs == nil {
		set.Docs = map[resourcesync.Capability][]string{}
	}
	for _, u := range set.Docs[c] {
		if u == url {
			return
		}
	}
	set.Docs[c] = append(set.Docs[c], url)
}

// AllowDoc lets the client fetch from the origin of a document the Source
// names (a list in an index, a dump package, a Capability List's documents).
func (s *Source) AllowDoc(url string) { s.policy.Admit(url, fetch.ReasonDocument) }
